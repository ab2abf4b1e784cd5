"""Body-mass index (WHO) and body-surface area (Mosteller).

Level 1 asks for a BMI, level 2 for a BSA, level 3 for a BSA-based dose. The
multiple-answer items ask which body weights give a BMI within a band, the ordering items
order patients by a dose per m² of body-surface area.
"""

from __future__ import annotations

import math
import random

from ..numbers_and_text import apart, num, rounded, tr
from ..options import direction, draw_multi, draw_order, option_count
from ..records import Calc, Inputs, Pick, PoorDrawError, Scenario


def _mosteller(height_cm: float, weight_kg: float) -> float:
    # Mosteller RD. N Engl J Med 1987;317:1098: BSA (m²) = √(height (cm) × weight (kg) / 3600).
    return math.sqrt(height_cm * weight_kg / 3600)


_BMI_BANDS = ((18.5, 24.9), (18.5, 23.9), (25.0, 29.9), (24.0, 27.9), (30.0, 34.9))


def single(rng: random.Random, lang: str, level: int) -> Calc:
    w: float
    if level == 1:
        # BMI = weight (kg) / height (m)² (WHO).
        w, h = rng.randint(38, 140), rng.randint(145, 200)
        bmi = w / (h / 100) ** 2
        if not 14 <= bmi <= 50:
            raise PoorDrawError
        q = tr(
            lang,
            f"An adult weighs {w} kg and is {h} cm tall. What is the body-mass index?",
            f"成人体重{w} kg，身高{h} cm，其体重指数（BMI）是多少？",
        )
        return Calc(
            q,
            bmi,
            "kg/m²",
            1,
            "BMI = weight (kg) / height (m)²",
            "bmi",
            {"weight_kg": w, "height_cm": h},
            (
                ("height_not_squared", w / (h / 100)),
                ("height_doubled_not_squared", w / (2 * h / 100)),
                ("weight_turned_into_lb", w * 2.2 / (h / 100) ** 2),
            ),
            slip=True,
        )
    child = rng.random() < 0.3
    if level == 2:
        w = rng.randint(8, 40) if child else rng.randint(40, 140)
        h = rng.randint(75, 150) if child else rng.randint(145, 200)
        bsa = _mosteller(h, w)
        q = tr(
            lang,
            f"Using the Mosteller formula, what is the body-surface area of a patient who is "
            f"{h} cm tall and weighs {w} kg?",
            f"按Mosteller公式，身高{h} cm、体重{w} kg的患者体表面积是多少？",
        )
        return Calc(
            q,
            bsa,
            "m²",
            2,
            "BSA = √(height (cm) × weight (kg) / 3600)",
            "bsa_mosteller",
            {"weight_kg": w, "height_cm": h},
            (
                ("square_root_forgotten", h * w / 3600),
                ("height_in_metres", math.sqrt(h / 100 * w / 3600)),
                ("inch_pound_constant_3131", math.sqrt(h * w / 3131)),
            ),
        )
    w = rng.randint(400, 1300) / 10
    h = rng.randint(145, 200)
    per_m2 = rng.randint(4, 100) * 5
    bsa = rounded(_mosteller(h, w), 2)
    q = tr(
        lang,
        f"A drug is dosed at {per_m2} mg/m². The patient is {h} cm tall and weighs {num(w)} kg. "
        "Work out the body-surface area with the Mosteller formula, rounded to 2 decimal "
        "places, then the dose. How many mg should be given?",
        f"某药按{per_m2} mg/m²给药。患者身高{h} cm，体重{num(w)} kg。先按Mosteller公式计算"
        "体表面积（保留2位小数），再计算剂量。应给药多少毫克？",
    )
    return Calc(
        q,
        bsa * per_m2,
        "mg",
        0,
        "BSA = √(height × weight / 3600), to 2 decimals; dose = BSA × mg/m²",
        "bsa_dose",
        {"weight_kg": w, "height_cm": h, "mg_per_m2": per_m2},
        (
            ("dosed_per_kg", w * per_m2),
            ("square_root_forgotten", rounded(h * w / 3600, 2) * per_m2),
            ("inch_pound_constant_3131", rounded(math.sqrt(h * w / 3131), 2) * per_m2),
            ("divided_by_bsa", per_m2 / bsa),
        ),
    )


def multi(rng: random.Random, lang: str, level: int) -> Pick:
    h = rng.randint(150, 195)
    lo, hi = rng.choice(_BMI_BANDS)
    m2 = (h / 100) ** 2

    def draw() -> tuple[str, Inputs, float]:
        x = rng.uniform(lo * m2 * 0.8, hi * m2 * 1.2)
        w = round(x, 1) if level == 3 else round(x)
        return f"{num(w)} kg", {"weight_kg": w}, w / m2

    def verdict(bmi: float) -> bool | None:
        if lo + 0.3 <= bmi <= hi - 0.3:
            return True
        return False if bmi < lo - 0.3 or bmi > hi + 0.3 else None

    q = tr(
        lang,
        f"An adult is {h} cm tall. At which of these body weights would the body-mass index be "
        f"between {lo} and {hi} kg/m² (inclusive)?",
        f"成人身高{h} cm。体重为下列哪些数值时，其体重指数（BMI）在{lo}～{hi} kg/m²之间"
        "（含端点）？",
    )
    return Pick(
        q,
        draw_multi(rng, option_count("multi", level), draw, verdict),
        "BMI = weight (kg) / height (m)²",
        "weights_in_bmi_band",
        {"height_cm": h, "bmi_low": lo, "bmi_high": hi},
    )


def order(rng: random.Random, lang: str, level: int) -> Pick:
    per_m2 = rng.randint(4, 60) * 5
    descending, how = direction(rng, lang)

    def draw() -> tuple[str, Inputs, float]:
        w: float
        if rng.random() < 0.4:
            w, h = rng.randint(8, 45), rng.randint(75, 160)
        else:
            w, h = rng.randint(40, 130), rng.randint(145, 200)
        if level == 3:
            w = rng.randint(w * 10 - 5, w * 10 + 5) / 10
        text = tr(lang, f"{h} cm, {num(w)} kg", f"身高{h} cm，体重{num(w)} kg")
        return text, {"height_cm": h, "weight_kg": w}, _mosteller(h, w)

    q = tr(
        lang,
        f"A drug is dosed at {per_m2} mg/m² of body-surface area (Mosteller formula). Order "
        f"these patients by the dose they receive, {how}.",
        f"某药按{per_m2} mg/m²体表面积给药（按Mosteller公式计算体表面积）。按所得剂量"
        f"{how}排列下列患者。",
    )
    return Pick(
        q,
        draw_order(option_count("order", level), draw, apart(0.05)),
        "dose = √(height × weight / 3600) × mg/m²",
        "patients_by_bsa_dose",
        {"mg_per_m2": per_m2, "descending": descending},
        descending,
    )


SCENARIO = Scenario(
    "bmi-bsa", "Body-mass index and body-surface area", "体重指数与体表面积", single, multi, order
)
