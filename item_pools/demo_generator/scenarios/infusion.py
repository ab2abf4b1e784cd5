"""Infusion rates.

Level 1 asks for a pump rate in mL/h, level 2 for a drip rate in drops/min with a drop
factor, level 3 for the pump rate that delivers a weight-based dose in µg/kg/min. The
multiple-answer items ask which infusions run faster than a rate, the ordering items
order infusion settings by the amount of drug delivered per hour.
"""

from __future__ import annotations

import random

from ..numbers_and_text import apart, num, tr
from ..options import direction, draw_multi, draw_order, option_count
from ..records import Calc, Inputs, Mistakes, Pick, PoorDrawError, Scenario


def single(rng: random.Random, lang: str, level: int) -> Calc:
    if level == 1:
        if rng.random() < 0.6:
            # rate (mL/h) = volume (mL) / time (h)
            v, t = rng.randint(5, 300) * 10, rng.randint(2, 48) / 2
            q = tr(
                lang,
                f"{v} mL of fluid is to be infused over {num(t)} hours. At what rate should the "
                "pump be set?",
                f"{v} mL液体需在{num(t)}小时内匀速输完，输液泵速度应设为多少？",
            )
            mistakes: Mistakes = (
                ("per_minute", v / (t * 60)),
                ("hours_taken_as_minutes", v * 60 / t),
            )
            return Calc(
                q,
                v / t,
                "mL/h",
                1,
                "mL/h = volume / hours",
                "rate_over_hours",
                {"volume_ml": v, "hours": t},
                mistakes,
                slip=True,
            )
        v = rng.randint(1, 50) * 5
        m = rng.choice((10, 15, 20, 30, 40, 45, 60, 90, 120))
        q = tr(
            lang,
            f"{v} mL of a drug solution is to be given over {m} minutes by pump. What rate in "
            "mL/h is needed?",
            f"{v} mL药液需在{m}分钟内经输液泵输完，泵速应为每小时多少毫升？",
        )
        mistakes = (
            ("per_minute", v / m),
            ("divided_by_60", v / (m * 60)),
            ("time_ratio_upside_down", v * m / 60),
        )
        return Calc(
            q,
            v * 60 / m,
            "mL/h",
            1,
            "mL/h = volume × 60 / minutes",
            "rate_over_minutes",
            {"volume_ml": v, "minutes": m},
            mistakes,
            slip=True,
        )
    if level == 2:
        # drops/min = volume (mL) × drop factor (drops/mL) / time (min)
        v, t = rng.randint(5, 200) * 10, rng.randint(1, 24)
        factor = rng.choice((10, 15, 20, 60))
        drops = v * factor / (t * 60)
        if not 5 <= drops <= 300:
            raise PoorDrawError
        other = 20 if factor == 15 else 15
        q = tr(
            lang,
            f"{v} mL is to run over {t} hours through a giving set that delivers {factor} "
            "drops/mL. What drip rate is needed?",
            f"{v} mL液体需在{t}小时内输完，输液器滴系数为{factor}滴/mL。每分钟应滴多少滴？",
        )
        return Calc(
            q,
            drops,
            tr(lang, "drops/min", "滴/分"),
            0,
            "drops/min = volume × drop factor / (hours × 60)",
            "drip_rate",
            {"volume_ml": v, "hours": t, "drop_factor": factor},
            (
                ("drop_factor_left_out", v / (t * 60)),
                ("drops_per_hour", v * factor / t),
                ("wrong_drop_factor", v * other / (t * 60)),
            ),
            slip=True,
        )
    a = rng.choice((50, 100, 200, 250, 400, 500, 800, 1000))
    b = rng.choice((50, 100, 250, 500))
    r = rng.randint(1, 200) / 10
    w = rng.randint(40, 120)
    rate = r * w * 60 / 1000 / (a / b)
    if not 0.5 <= rate <= 300:
        raise PoorDrawError
    q = tr(
        lang,
        f"{a} mg of a drug is diluted to {b} mL. It is ordered at {num(r)} µg/kg/min for a "
        f"patient weighing {w} kg. At what rate should the pump run?",
        f"某药{a} mg稀释至{b} mL，医嘱按{num(r)} µg/(kg·min)泵入，患者体重{w} kg。"
        "泵速应为每小时多少毫升？",
    )
    return Calc(
        q,
        rate,
        "mL/h",
        1,
        "mL/h = µg/kg/min × weight × 60 / 1000 ÷ (mg / mL)",
        "dose_to_pump_rate",
        {"drug_mg": a, "bag_ml": b, "ug_kg_min": r, "weight_kg": w},
        (
            ("concentration_upside_down", rate * (a / b) ** 2),
            ("per_minute", rate / 60),
            ("weight_left_out", rate / w),
            ("micrograms_not_turned_into_mg", rate * 1000),
        ),
    )


def _infusion_row(rng: random.Random, lang: str, level: int) -> tuple[str, Inputs, float]:
    v = rng.choice((50, 100, 250, 500, 1000)) if rng.random() < 0.5 else rng.randint(2, 80) * 25
    if level == 3 and rng.random() < 0.4:
        m = rng.choice((15, 20, 30, 45, 60, 90, 120))
        text = tr(lang, f"{v} mL over {m} min", f"{m}分钟输入{v} mL")
        return text, {"volume_ml": v, "minutes": m}, v * 60 / m
    t = rng.randint(1, 24) if level == 1 else rng.randint(2, 48) / 2
    text = tr(lang, f"{v} mL over {num(t)} h", f"{num(t)}小时输入{v} mL")
    return text, {"volume_ml": v, "hours": t}, v / t


def multi(rng: random.Random, lang: str, level: int) -> Pick:
    limit = rng.randint(4, 40) * 5

    def verdict(rate: float) -> bool | None:
        if rate > limit * 1.05:
            return True
        return False if rate < limit * 0.95 else None

    q = tr(
        lang,
        f"Which of these infusions run faster than {limit} mL/h?",
        f"下列输液中，哪些速度超过{limit} mL/h？",
    )
    return Pick(
        q,
        draw_multi(
            rng, option_count("multi", level), lambda: _infusion_row(rng, lang, level), verdict
        ),
        "mL/h = volume / hours (= volume × 60 / minutes)",
        "infusions_above_rate",
        {"threshold_ml_h": limit},
    )


def order(rng: random.Random, lang: str, level: int) -> Pick:
    a = rng.choice((50, 100, 200, 250, 400, 500))
    b = rng.choice((50, 100, 250, 500))
    w = rng.randint(40, 120)
    conc = a / b
    centre = conc * rng.randint(5, 30)
    descending, how = direction(rng, lang)

    def draw() -> tuple[str, Inputs, float]:
        mg_h = centre * rng.uniform(0.3, 3)
        form = rng.randrange(2 + (level >= 2) + (level == 3))
        if form == 0:
            x = round(mg_h / conc, 1)
            return f"{num(x)} mL/h", {"ml_h": x}, x * conc
        if form == 1:
            m = round(mg_h, 1)
            return f"{num(m)} mg/h", {"mg_h": m}, m
        if form == 2:
            r = round(mg_h * 1000 / 60 / w, 2)
            text = tr(lang, f"{num(r)} µg/kg/min", f"{num(r)} µg/(kg·min)")
            return text, {"ug_kg_min": r}, r * w * 60 / 1000
        u = round(mg_h * 1000 / 60)
        return f"{u} µg/min", {"ug_min": u}, u * 60 / 1000

    q = tr(
        lang,
        f"A bag holds {a} mg of a drug in {b} mL; the patient weighs {w} kg. Order these "
        f"infusion settings by the amount of drug delivered per hour, {how}.",
        f"某药{a} mg配成{b} mL，患者体重{w} kg。按每小时给药量{how}排列下列输注设置。",
    )
    return Pick(
        q,
        draw_order(option_count("order", level), draw, apart(0.08)),
        "mg/h = mL/h × mg/mL = µg/kg/min × weight × 60 / 1000 = µg/min × 60 / 1000",
        "settings_by_drug_per_hour",
        {"drug_mg": a, "bag_ml": b, "weight_kg": w, "descending": descending},
        descending,
    )


SCENARIO = Scenario("infusion", "Infusion rates", "输液速度", single, multi, order)
