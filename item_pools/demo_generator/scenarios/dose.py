"""Weight-based dosing: dose (mg) = weight (kg) × dose (mg/kg).

Level 1 asks for an mg/kg single dose; level 2 for one of a daily dose split into equal
doses, or the volume of an oral suspension; level 3 adds a maximum per dose, or gives the
weight in lb. The multiple-answer items ask which single doses lie within a recommended
daily range, the ordering items order regimens by their total daily dose.
"""

from __future__ import annotations

import random

from ..numbers_and_text import apart, nice, num, rounded, tr
from ..options import direction, draw_multi, draw_order, option_count
from ..records import Calc, Inputs, Pick, PoorDrawError, Scenario

_MG_PER_KG = (0.5, 1, 1.5, 2, 2.5, 3, 4, 5, 6, 7.5, 8, 10, 12, 12.5, 15, 20, 25, 30)
_MG_PER_KG_DAY = (10, 15, 20, 25, 30, 40, 45, 50, 60, 75, 80, 90, 100)
_DAILY_RANGES = ((10, 20), (15, 30), (20, 30), (20, 40), (25, 50), (30, 60), (40, 60), (50, 100))


def single(rng: random.Random, lang: str, level: int) -> Calc:
    # dose (mg) = weight (kg) × dose (mg/kg); a daily dose is split into equal doses.
    w: float
    if level == 1:
        w, d = rng.randint(4, 95), rng.choice(_MG_PER_KG)
        dose = w * d
        q = tr(
            lang,
            f"A patient weighing {w} kg is prescribed a single dose of {num(d)} mg/kg of a "
            "drug. How many mg should be given?",
            f"患者体重{w} kg，医嘱某药单次剂量{num(d)} mg/kg。应给药多少毫克？",
        )
        return Calc(
            q,
            dose,
            "mg",
            0 if float(dose).is_integer() else 1,
            "dose = weight × mg/kg",
            "single_dose",
            {"weight_kg": w, "mg_per_kg": d},
            (
                ("divided_instead_of_multiplied", w / d),
                ("weight_turned_into_lb", w * 2.2 * d),
                ("decimal_slip_down", dose / 10),
                ("decimal_slip_up", dose * 10),
            ),
        )
    if level == 2:
        w = rng.randint(30, 600) / 10
        if rng.random() < 0.5:
            daily, n = rng.choice(_MG_PER_KG_DAY), rng.choice((2, 3, 4))
            dose = w * daily / n
            q = tr(
                lang,
                f"A child weighing {num(w)} kg is prescribed {daily} mg/kg/day of a drug in "
                f"{n} equally divided doses. How many mg is each dose?",
                f"患儿体重{num(w)} kg，某药每日{daily} mg/kg，分{n}次等量给药。"
                "每次剂量为多少毫克？",
            )
            return Calc(
                q,
                dose,
                "mg",
                1,
                "dose = weight × mg/kg/day ÷ doses per day",
                "divided_dose",
                {"weight_kg": w, "mg_per_kg_day": daily, "doses_per_day": n},
                (
                    ("daily_total_given", w * daily),
                    ("multiplied_by_doses", w * daily * n),
                    ("weight_turned_into_lb", w * 2.2 * daily / n),
                ),
            )
        d = rng.choice(_MG_PER_KG)
        strength = rng.choice((100, 120, 125, 150, 200, 250, 400))
        mg = w * d
        q = tr(
            lang,
            f"A child weighing {num(w)} kg needs a single dose of {num(d)} mg/kg of an oral "
            f"suspension containing {strength} mg per 5 mL. What volume should be given?",
            f"患儿体重{num(w)} kg，需单次口服某药{num(d)} mg/kg，其混悬液每5 mL含"
            f"{strength} mg。应给予多少毫升？",
        )
        return Calc(
            q,
            mg * 5 / strength,
            "mL",
            1,
            "volume (mL) = weight × mg/kg × 5 ÷ mg per 5 mL",
            "suspension_volume",
            {"weight_kg": w, "mg_per_kg": d, "mg_per_5_ml": strength},
            (
                ("per_5_ml_ignored", mg / strength),
                ("mg_given_as_ml", mg),
                ("strength_divided_by_dose", strength * 5 / mg),
            ),
        )
    if rng.random() < 0.5:
        w = rng.randint(80, 900) / 10
        daily, n = rng.choice(_MG_PER_KG_DAY), rng.choice((2, 3, 4))
        raw = w * daily / n
        binds = rng.random() < 0.7
        cap = nice(raw * rng.uniform(0.5, 0.9), True) if binds else nice(raw * 1.2, False)
        if (binds and cap >= raw * 0.95) or (not binds and cap <= raw * 1.05):
            raise PoorDrawError
        q = tr(
            lang,
            f"A child weighing {num(w)} kg is prescribed {daily} mg/kg/day of a drug in {n} "
            f"equally divided doses, not exceeding {cap} mg per dose. How many mg should each "
            "dose be?",
            f"患儿体重{num(w)} kg，某药每日{daily} mg/kg，分{n}次等量给药，单次剂量不超过"
            f"{cap} mg。每次应给多少毫克？",
        )
        return Calc(
            q,
            min(raw, cap),
            "mg",
            1,
            "dose = min(weight × mg/kg/day ÷ doses per day, maximum per dose)",
            "divided_dose_capped",
            {"weight_kg": w, "mg_per_kg_day": daily, "doses_per_day": n, "max_mg_per_dose": cap},
            (
                ("maximum_ignored", raw),
                ("maximum_applied_to_the_day", min(w * daily, cap) / n),
                ("daily_total_given", min(w * daily, cap)),
                ("multiplied_by_doses", raw * n),
            ),
        )
    lb, d = rng.randint(200, 2600) / 10, rng.choice(_MG_PER_KG)
    kg = rounded(lb / 2.2, 1)
    raw = kg * d
    binds = rng.random() < 0.5
    cap = nice(raw * rng.uniform(0.5, 0.9), True) if binds else nice(raw * 1.2, False)
    if (binds and cap >= raw * 0.95) or (not binds and cap <= raw * 1.05):
        raise PoorDrawError
    q = tr(
        lang,
        f"A patient weighing {num(lb)} lb is prescribed a single dose of {num(d)} mg/kg of a "
        f"drug, up to a maximum of {cap} mg. Convert the weight to kg (1 kg = 2.2 lb), rounded "
        "to 1 decimal place, then work out the dose. How many mg should be given?",
        f"患者体重{num(lb)}磅，医嘱某药单次{num(d)} mg/kg，最大剂量不超过{cap} mg。"
        "先将体重换算为千克（1 kg = 2.2磅，保留1位小数），再计算剂量。应给药多少毫克？",
    )
    return Calc(
        q,
        min(raw, cap),
        "mg",
        1,
        "weight (kg) = lb ÷ 2.2, to 1 decimal; dose = min(weight × mg/kg, maximum)",
        "lb_single_dose_capped",
        {"weight_lb": lb, "mg_per_kg": d, "max_mg": cap},
        (
            ("maximum_ignored", raw),
            ("weight_left_in_lb", min(lb * d, cap)),
            ("weight_left_in_lb_no_maximum", lb * d),
            ("lb_multiplied_by_2.2", min(lb * 2.2 * d, cap)),
            ("lb_multiplied_by_2.2_no_maximum", lb * 2.2 * d),
        ),
    )


def multi(rng: random.Random, lang: str, level: int) -> Pick:
    w = rng.randint(50, 450) / 10 if level == 3 else rng.randint(5, 45)
    low, high = rng.choice(_DAILY_RANGES)
    n = rng.choice((2, 3, 4))
    lo, hi = w * low / n, w * high / n
    step = 1 if hi < 40 else 5 if hi < 400 else 10

    def draw() -> tuple[str, Inputs, float]:
        x = round(rng.uniform(lo * 0.4, hi * 1.6) / step) * step
        return f"{x} mg", {"dose_mg": x}, float(x)

    def verdict(x: float) -> bool | None:
        if x <= 0:
            return None
        if lo * 1.03 <= x <= hi * 0.97:
            return True
        return False if x < lo * 0.97 or x > hi * 1.03 else None

    q = tr(
        lang,
        f"A child weighing {num(w)} kg is prescribed a drug at {low}-{high} mg/kg/day in {n} "
        "equally divided doses. Which of these single doses lie within that range?",
        f"患儿体重{num(w)} kg，某药推荐剂量为每日{low}～{high} mg/kg，分{n}次等量给药。"
        "下列单次剂量中，哪些在推荐范围内？",
    )
    return Pick(
        q,
        draw_multi(rng, option_count("multi", level), draw, verdict),
        "per-dose range = weight × (low, high) mg/kg/day ÷ doses per day",
        "doses_within_range",
        {"weight_kg": w, "mg_per_kg_day_low": low, "mg_per_kg_day_high": high, "doses_per_day": n},
    )


def order(rng: random.Random, lang: str, level: int) -> Pick:
    w = rng.randint(50, 600) / 10 if level == 3 else rng.randint(5, 60)
    descending, how = direction(rng, lang)

    def draw() -> tuple[str, Inputs, float]:
        every = rng.choice((6, 8, 12, 24))
        form = rng.random()
        if form < 0.35:
            mg = rng.choice((50, 100, 125, 150, 200, 250, 300, 400, 500, 750))
            text = tr(lang, f"{mg} mg every {every} h", f"每{every}小时{mg} mg")
            return text, {"mg": mg, "every_h": every}, mg * 24 / every
        if level == 3 and form > 0.75:
            daily, n = rng.choice(_MG_PER_KG_DAY), rng.choice((2, 3, 4))
            text = tr(
                lang,
                f"{daily} mg/kg/day in {n} divided doses",
                f"每日{daily} mg/kg，分{n}次",
            )
            return text, {"mg_per_kg_day": daily, "doses_per_day": n}, daily * w
        d = rng.choice(_MG_PER_KG)
        text = tr(lang, f"{num(d)} mg/kg every {every} h", f"每{every}小时{num(d)} mg/kg")
        return text, {"mg_per_kg": d, "every_h": every}, d * w * 24 / every

    q = tr(
        lang,
        f"A child weighs {num(w)} kg. Order these regimens by the total daily dose in mg, {how}.",
        f"患儿体重{num(w)} kg。按每日总剂量（mg）{how}排列下列给药方案。",
    )
    return Pick(
        q,
        draw_order(option_count("order", level), draw, apart(0.08)),
        "daily dose = dose per administration × 24 ÷ interval (× weight if per kg)",
        "regimens_by_daily_dose",
        {"weight_kg": w, "descending": descending},
        descending,
    )


SCENARIO = Scenario("dose", "Weight-based dosing", "按体重计算给药剂量", single, multi, order)
