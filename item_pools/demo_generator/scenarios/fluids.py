"""Maintenance fluids by the Holliday-Segar rules.

Levels 1 and 2 ask for the hourly 4-2-1 rate up to and above 20 kg, level 3 for the daily
100/50/20 volume of a weight given in lb. The multiple-answer items ask which patients
need more than a rate, the ordering items order regimens by the volume given in 24 hours.
"""

from __future__ import annotations

import random

from ..numbers_and_text import apart, num, rounded, tr
from ..options import direction, draw_multi, draw_order, option_count
from ..records import Calc, Inputs, Pick, Scenario


def _hourly_421(weight: float) -> float:
    # Holliday MA, Segar WE. Pediatrics 1957;19:823-32, as the hourly "4-2-1" rule:
    # 4 mL/kg/h for the first 10 kg, 2 mL/kg/h for the next 10, 1 mL/kg/h above 20 kg.
    if weight <= 10:
        return 4 * weight
    if weight <= 20:
        return 40 + 2 * (weight - 10)
    return 60 + (weight - 20)


def _daily_100_50_20(weight: float) -> float:
    # The same authors' daily form: 100 mL/kg/day for the first 10 kg, 50 for the next 10,
    # 20 for each kg above 20.
    if weight <= 10:
        return 100 * weight
    if weight <= 20:
        return 1000 + 50 * (weight - 10)
    return 1500 + 20 * (weight - 20)


def single(rng: random.Random, lang: str, level: int) -> Calc:
    if level < 3:
        w = rng.randint(25, 200) / 10 if level == 1 else rng.randint(201, 900) / 10
        who_en = "a child" if w < 40 else "a patient"
        who_zh = "患儿" if w < 40 else "患者"
        q = tr(
            lang,
            f"By the Holliday-Segar (4-2-1) rule, what is the hourly maintenance fluid rate for "
            f"{who_en} weighing {num(w)} kg?",
            f"按Holliday-Segar法（4-2-1法则），体重{num(w)} kg的{who_zh}每小时维持液量是多少？",
        )
        return Calc(
            q,
            _hourly_421(w),
            "mL/h",
            None,
            "4 mL/kg/h for the first 10 kg + 2 mL/kg/h for the next 10 + 1 mL/kg/h above 20",
            "hourly_4_2_1",
            {"weight_kg": w},
            (
                ("4_ml_per_kg_throughout", 4 * w),
                ("third_tier_at_2_ml", 40 + 2 * (w - 10)),
                ("2_ml_per_kg_throughout", 2 * w),
                ("daily_volume_given", _daily_100_50_20(w)),
                ("1_ml_per_kg_throughout", w),
            ),
        )
    lb = rng.randint(110, 1450) / 10
    kg = rounded(lb / 2.2, 1)
    q = tr(
        lang,
        f"A child weighs {num(lb)} lb. Convert the weight to kg (1 kg = 2.2 lb), rounded to 1 "
        "decimal place, then give the daily maintenance fluid volume by the Holliday-Segar "
        "(100/50/20) rule.",
        f"患儿体重{num(lb)}磅。先将体重换算为千克（1 kg = 2.2磅，保留1位小数），再按"
        "Holliday-Segar法（100/50/20法则）计算每日维持液量。",
    )
    return Calc(
        q,
        _daily_100_50_20(kg),
        tr(lang, "mL/day", "mL/d"),
        0,
        "100 mL/kg/day for the first 10 kg + 50 for the next 10 + 20 per kg above 20",
        "daily_100_50_20_lb",
        {"weight_lb": lb},
        (
            ("weight_left_in_lb", _daily_100_50_20(lb)),
            ("lb_multiplied_by_2.2", _daily_100_50_20(lb * 2.2)),
            ("100_ml_per_kg_throughout", 100 * kg),
            ("hourly_rate_given", _hourly_421(kg)),
        ),
    )


def multi(rng: random.Random, lang: str, level: int) -> Pick:
    limit = rng.randint(20, 110)

    def draw() -> tuple[str, Inputs, float]:
        if level == 3 and rng.random() < 0.4:
            lb = rng.randint(50, 1800) / 10
            text = tr(lang, f"{num(lb)} lb", f"体重{num(lb)}磅")
            return text, {"weight_lb": lb}, _hourly_421(lb / 2.2)
        w = rng.randint(20, 900) / 10
        return tr(lang, f"{num(w)} kg", f"体重{num(w)} kg"), {"weight_kg": w}, _hourly_421(w)

    def verdict(rate: float) -> bool | None:
        if rate > limit + 1.5:
            return True
        return False if rate < limit - 1.5 else None

    note = tr(lang, " (1 kg = 2.2 lb)", "（1 kg = 2.2磅）") if level == 3 else ""
    q = tr(
        lang,
        "Using the Holliday-Segar (4-2-1) rule, which of these patients need a maintenance "
        f"rate above {limit} mL/h?{note}",
        f"按Holliday-Segar法（4-2-1法则），下列患者中哪些每小时维持液量超过{limit} mL？{note}",
    )
    return Pick(
        q,
        draw_multi(rng, option_count("multi", level), draw, verdict),
        "4 mL/kg/h for the first 10 kg + 2 mL/kg/h for the next 10 + 1 mL/kg/h above 20",
        "patients_above_rate",
        {"threshold_ml_h": limit},
    )


def order(rng: random.Random, lang: str, level: int) -> Pick:
    w = rng.randint(30, 600) / 10
    rate = _hourly_421(w)
    descending, how = direction(rng, lang)
    how = how.replace("小", "少").replace("大", "多")  # volumes are 少/多 in Chinese

    def draw() -> tuple[str, Inputs, float]:
        form = rng.randrange(3 + level)
        if form == 0:
            text = tr(lang, "the 4-2-1 maintenance rate", "按4-2-1法则的维持速度")
            return text, {"maintenance_multiple": 1}, rate * 24
        if form == 1:
            r = rng.randint(2, 40) * 5
            return f"{r} mL/h", {"ml_h": r}, r * 24.0
        if form == 2:
            v, t = rng.randint(2, 40) * 25, rng.randint(1, 24)
            text = tr(lang, f"{v} mL over {t} h, then stop", f"{t}小时输入{v} mL后停止")
            return text, {"volume_ml": v, "hours": t}, float(v)
        if form == 3 or form == 5:
            k = rng.choice((0.5, 0.75, 1.5, 2))
            text = tr(
                lang, f"{num(k)} × the 4-2-1 maintenance rate", f"4-2-1法则维持速度的{num(k)}倍"
            )
            return text, {"maintenance_multiple": k}, k * rate * 24
        x = rng.randint(4, 30) * 5
        text = tr(lang, f"{x} mL/kg/day", f"每日{x} mL/kg")
        return text, {"ml_kg_day": x}, x * w

    q = tr(
        lang,
        f"A child weighing {num(w)} kg is on intravenous fluids. Order these regimens by the "
        f"volume given in 24 hours, {how}.",
        f"体重{num(w)} kg的患儿静脉补液。按24小时内输入的液量{how}排列下列方案。",
    )
    return Pick(
        q,
        draw_order(option_count("order", level), draw, apart(0.08, 20)),
        "24-h volume: 4-2-1 rate × 24, mL/h × 24, mL/kg/day × weight, or a fixed volume",
        "regimens_by_daily_volume",
        {"weight_kg": w, "descending": descending},
        descending,
    )


SCENARIO = Scenario(
    "fluids",
    "Maintenance fluids (Holliday-Segar)",
    "维持液量（Holliday-Segar法）",
    single,
    multi,
    order,
)
