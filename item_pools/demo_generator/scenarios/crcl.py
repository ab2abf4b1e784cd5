"""Creatinine clearance by the Cockcroft-Gault equation.

Level 1 asks about men, level 2 about women (× 0.85), level 3 gives the creatinine in
µmol/L, to be converted to mg/dL first. The multiple-answer items ask which patients fall
below a dose-adjustment threshold, the ordering items order patients by clearance.
"""

from __future__ import annotations

import math
import random

from ..numbers_and_text import apart, num, rounded, tr
from ..options import direction, draw_multi, draw_order, option_count
from ..records import Calc, Inputs, Mistakes, Pick, PoorDrawError, Scenario


def _cockcroft_gault(age: int, weight: float, scr_mg_dl: float, female: bool) -> float:
    # Cockcroft DW, Gault MH. Nephron 1976;16:31-41: CrCl (mL/min) =
    # (140 - age) × weight (kg) / (72 × serum creatinine (mg/dL)), × 0.85 for women.
    value = (140 - age) * weight / (72 * scr_mg_dl)
    return value * 0.85 if female else value


def _sex(lang: str, female: bool) -> str:
    return tr(lang, "woman" if female else "man", "女" if female else "男")


def single(rng: random.Random, lang: str, level: int) -> Calc:
    age = rng.randint(18, 95)
    w: float = rng.randint(40, 120) if level < 3 else rng.randint(400, 1200) / 10
    female = level == 2 or (level == 3 and rng.random() < 0.5)
    sex = _sex(lang, female)
    if level < 3:
        scr = rng.randint(5, 40) / 10
        inputs: Inputs = {"age": age, "weight_kg": w, "female": female, "creatinine_mg_dl": scr}
        q = tr(
            lang,
            f"A {age}-year-old {sex} weighs {num(w)} kg; serum creatinine is {num(scr)} mg/dL. "
            "What is the creatinine clearance estimated with the Cockcroft-Gault equation?",
            f"{sex}性患者，{age}岁，体重{num(w)} kg，血肌酐{num(scr)} mg/dL。"
            "按Cockcroft-Gault公式估算，其肌酐清除率是多少？",
        )
        unconverted = math.inf
    else:
        umol = rng.randint(45, 450)
        scr = rounded(umol / 88.4, 2)
        if scr < 0.4:
            raise PoorDrawError
        inputs = {"age": age, "weight_kg": w, "female": female, "creatinine_umol_l": umol}
        q = tr(
            lang,
            f"A {age}-year-old {sex} weighs {num(w)} kg; serum creatinine is {umol} µmol/L. "
            "Convert the creatinine to mg/dL (1 mg/dL = 88.4 µmol/L), rounded to 2 decimal "
            "places, then estimate the creatinine clearance with the Cockcroft-Gault equation.",
            f"{sex}性患者，{age}岁，体重{num(w)} kg，血肌酐{umol} µmol/L。先将血肌酐换算为"
            "mg/dL（1 mg/dL = 88.4 µmol/L，保留2位小数），再按Cockcroft-Gault公式估算其"
            "肌酐清除率。",
        )
        unconverted = _cockcroft_gault(age, w, umol, female)
    value = _cockcroft_gault(age, w, scr, female)
    if not 8 <= value <= 200:
        raise PoorDrawError
    male_value = _cockcroft_gault(age, w, scr, False)
    sex_slips: Mistakes = (
        (("female_factor_left_out", male_value), ("female_factor_divided", male_value / 0.85))
        if female
        else (("female_factor_on_a_man", male_value * 0.85),)
    )
    mistakes: Mistakes = (
        *sex_slips,
        ("creatinine_multiplied", value * scr * scr),
        ("age_not_subtracted", value * 140 / (140 - age)),
        ("creatinine_not_converted", unconverted),
    )
    variant = "cockcroft_gault" if level < 3 else "cockcroft_gault_umol"
    formula = "CrCl = (140 − age) × weight / (72 × SCr mg/dL), × 0.85 if female"
    return Calc(q, value, "mL/min", 0, formula, variant, inputs, mistakes)


def _crcl_patient(rng: random.Random, lang: str, level: int, w: int) -> tuple[str, Inputs, float]:
    age = rng.randint(25, 95)
    female = level >= 2 and rng.random() < 0.5
    if level == 3:
        umol = rng.randint(50, 450)
        text = tr(
            lang,
            f"{age}-year-old {_sex(lang, female)}, creatinine {umol} µmol/L",
            f"{age}岁{_sex(lang, female)}性，血肌酐{umol} µmol/L",
        )
        inputs: Inputs = {"age": age, "female": female, "creatinine_umol_l": umol}
        return text, inputs, _cockcroft_gault(age, w, umol / 88.4, female)
    scr = rng.randint(6, 45) / 10
    text = tr(
        lang,
        f"{age}-year-old {_sex(lang, female)}, creatinine {num(scr)} mg/dL",
        f"{age}岁{_sex(lang, female)}性，血肌酐{num(scr)} mg/dL",
    )
    inputs = {"age": age, "female": female, "creatinine_mg_dl": scr}
    return text, inputs, _cockcroft_gault(age, w, scr, female)


def multi(rng: random.Random, lang: str, level: int) -> Pick:
    w = rng.randint(45, 110)
    limit = rng.choice((15, 20, 25, 30, 40, 45, 50, 60))
    note = tr(lang, " (1 mg/dL = 88.4 µmol/L)", "（1 mg/dL = 88.4 µmol/L）") if level == 3 else ""

    def verdict(value: float) -> bool | None:
        if value < limit - 2:
            return True
        return False if value > limit + 2 else None

    q = tr(
        lang,
        f"A renally cleared drug needs a lower dose when the Cockcroft-Gault creatinine "
        f"clearance is below {limit} mL/min. Which of these patients, each weighing {w} kg, "
        f"need the lower dose?{note}",
        f"某经肾排泄的药物在肌酐清除率（Cockcroft-Gault公式）低于{limit} mL/min时需减量。"
        f"下列患者体重均为{w} kg，哪些需要减量？{note}",
    )
    rows = draw_multi(
        rng, option_count("multi", level), lambda: _crcl_patient(rng, lang, level, w), verdict
    )
    return Pick(
        q,
        rows,
        "CrCl = (140 − age) × weight / (72 × SCr mg/dL), × 0.85 if female",
        "patients_below_crcl",
        {"weight_kg": w, "threshold_ml_min": limit},
    )


def order(rng: random.Random, lang: str, level: int) -> Pick:
    w = rng.randint(45, 110)
    descending, how = direction(rng, lang, low_high=True)
    note = tr(lang, " (1 mg/dL = 88.4 µmol/L)", "（1 mg/dL = 88.4 µmol/L）") if level == 3 else ""
    q = tr(
        lang,
        f"These patients each weigh {w} kg. Order them by creatinine clearance estimated with "
        f"the Cockcroft-Gault equation, {how}.{note}",
        f"下列患者体重均为{w} kg。按Cockcroft-Gault公式估算的肌酐清除率{how}排列。{note}",
    )
    rows = draw_order(
        option_count("order", level), lambda: _crcl_patient(rng, lang, level, w), apart(0.08, 3)
    )
    return Pick(
        q,
        rows,
        "CrCl = (140 − age) × weight / (72 × SCr mg/dL), × 0.85 if female",
        "patients_by_crcl",
        {"weight_kg": w, "descending": descending},
        descending,
    )


SCENARIO = Scenario(
    "crcl",
    "Creatinine clearance (Cockcroft-Gault)",
    "肌酐清除率（Cockcroft-Gault公式）",
    single,
    multi,
    order,
)
