"""Unit conversions.

Level 1 converts masses (g, mg, µg) and body weights (lb, kg); level 2 converts lab values
(glucose × 18, °F and °C, creatinine × 88.4); level 3 converts drug rates between µg/kg/min
and mg/h. The multiple-answer items ask which amounts equal a given one, the ordering
items order doses written in different units by the amount of drug given.
"""

from __future__ import annotations

import random
from decimal import Decimal

from ..numbers_and_text import apart, num, tr
from ..options import direction, draw_order, option_count
from ..records import Calc, Inputs, Mistakes, Pick, PoorDrawError, Row, Scenario

#: Micrograms per unit of mass.
_UG = {"g": Decimal(10**6), "mg": Decimal(1000), "µg": Decimal(1), "ng": Decimal("0.001")}


def _mass_conversion(rng: random.Random, lang: str) -> Calc:
    source, target, n, shift = rng.choice(
        (("mg", "µg", 500, 3), ("µg", "mg", 5000, 0), ("g", "mg", 500, 2))
    )
    x = Decimal(rng.randint(1, n)).scaleb(-rng.randint(1, shift) if shift else 0)
    factor = _UG[source] / _UG[target]
    value = x * factor
    q = tr(
        lang,
        f"How many {target} are in {num(x)} {source}?",
        f"{num(x)} {source}等于多少{target}？",
    )
    return Calc(
        q,
        float(value),
        target,
        None,
        f"1 {source} = {num(factor)} {target}",
        f"{source}_to_{target}".replace("µ", "u"),
        {"amount": float(x), "from": source, "to": target},
        (
            ("divided_instead_of_multiplied", float(x / factor)),
            ("factor_10_too_small", float(value / 10)),
            ("factor_10_too_large", float(value * 10)),
            ("unit_changed_number_not", float(x)),
        ),
    )


def _weight_conversion(rng: random.Random, lang: str) -> Calc:
    if rng.random() < 0.5:
        lb = rng.randint(10, 330)
        q = tr(
            lang,
            f"A patient weighs {lb} lb. What is that in kg (1 kg = 2.2 lb)?",
            f"患者体重{lb}磅，折合多少千克（1 kg = 2.2磅）？",
        )
        mistakes = (("multiplied_instead", lb * 2.2), ("halved", lb / 2))
        return Calc(
            q, lb / 2.2, "kg", 1, "kg = lb ÷ 2.2", "lb_to_kg", {"lb": lb}, mistakes, slip=True
        )
    kg = rng.randint(20, 1500) / 10
    q = tr(
        lang,
        f"A patient weighs {num(kg)} kg. What is that in lb (1 kg = 2.2 lb)?",
        f"患者体重{num(kg)} kg，折合多少磅（1 kg = 2.2磅）？",
    )
    mistakes = (("divided_instead", kg / 2.2), ("doubled", kg * 2))
    unit = tr(lang, "lb", "磅")
    return Calc(q, kg * 2.2, unit, 1, "lb = kg × 2.2", "kg_to_lb", {"kg": kg}, mistakes, slip=True)


def _lab_conversion(rng: random.Random, lang: str) -> Calc:
    kind = rng.randrange(6)
    if kind == 0:
        x = rng.randint(20, 350) / 10
        q = tr(
            lang,
            f"A blood glucose of {num(x)} mmol/L is how many mg/dL (1 mmol/L = 18 mg/dL)?",
            f"血糖{num(x)} mmol/L相当于多少mg/dL（1 mmol/L = 18 mg/dL）？",
        )
        wrong: Mistakes = (("divided_instead", x / 18), ("factor_10", x * 10))
        return Calc(
            q,
            x * 18,
            "mg/dL",
            0,
            "mg/dL = mmol/L × 18",
            "glucose_to_mg_dl",
            {"mmol_l": x},
            wrong,
            slip=True,
        )
    if kind == 1:
        y = rng.randint(36, 600)
        q = tr(
            lang,
            f"A blood glucose of {y} mg/dL is how many mmol/L (1 mmol/L = 18 mg/dL)?",
            f"血糖{y} mg/dL相当于多少mmol/L（1 mmol/L = 18 mg/dL）？",
        )
        wrong = (("multiplied_instead", y * 18), ("factor_10", y / 10))
        return Calc(
            q,
            y / 18,
            "mmol/L",
            1,
            "mmol/L = mg/dL ÷ 18",
            "glucose_to_mmol_l",
            {"mg_dl": y},
            wrong,
            slip=True,
        )
    if kind == 2:
        f = rng.randint(950, 1070) / 10
        q = tr(
            lang,
            f"A temperature of {num(f)} °F is how many degrees Celsius?",
            f"体温{num(f)} °F相当于多少摄氏度？",
        )
        wrong = (
            ("ratio_upside_down", (f - 32) * 9 / 5),
            ("32_not_subtracted", f * 5 / 9),
            ("quick_rule_minus_30_halved", (f - 30) / 2),
        )
        return Calc(
            q,
            (f - 32) * 5 / 9,
            "°C",
            1,
            "°C = (°F − 32) × 5/9",
            "f_to_c",
            {"fahrenheit": f},
            wrong,
            slip=True,
        )
    if kind == 3:
        c = rng.randint(340, 420) / 10
        q = tr(
            lang,
            f"A temperature of {num(c)} °C is how many degrees Fahrenheit?",
            f"体温{num(c)} °C相当于多少华氏度？",
        )
        wrong = (
            ("ratio_upside_down", c * 5 / 9 + 32),
            ("32_added_first", (c + 32) * 9 / 5),
            ("32_not_added", c * 9 / 5),
        )
        return Calc(
            q,
            c * 9 / 5 + 32,
            "°F",
            1,
            "°F = °C × 9/5 + 32",
            "c_to_f",
            {"celsius": c},
            wrong,
            slip=True,
        )
    if kind == 4:
        x = rng.randint(4, 80) / 10
        q = tr(
            lang,
            f"Convert a serum creatinine of {num(x)} mg/dL to µmol/L (1 mg/dL = 88.4 µmol/L).",
            f"将血肌酐{num(x)} mg/dL换算为µmol/L（1 mg/dL = 88.4 µmol/L）。",
        )
        wrong = (("glucose_factor_18", x * 18), ("factor_10", x * 8.84))
        return Calc(
            q,
            x * 88.4,
            "µmol/L",
            0,
            "µmol/L = mg/dL × 88.4",
            "creatinine_to_umol_l",
            {"mg_dl": x},
            wrong,
            slip=True,
        )
    u = rng.randint(40, 700)
    q = tr(
        lang,
        f"Convert a serum creatinine of {u} µmol/L to mg/dL (1 mg/dL = 88.4 µmol/L).",
        f"将血肌酐{u} µmol/L换算为mg/dL（1 mg/dL = 88.4 µmol/L）。",
    )
    wrong = (("glucose_factor_18", u / 18), ("factor_10", u / 8.84))
    return Calc(
        q,
        u / 88.4,
        "mg/dL",
        2,
        "mg/dL = µmol/L ÷ 88.4",
        "creatinine_to_mg_dl",
        {"umol_l": u},
        wrong,
        slip=True,
    )


def single(rng: random.Random, lang: str, level: int) -> Calc:
    if level == 1:
        return _mass_conversion(rng, lang) if rng.random() < 0.6 else _weight_conversion(rng, lang)
    if level == 2:
        return _lab_conversion(rng, lang)
    w = rng.randint(40, 120)
    rate_unit = tr(lang, "µg/kg/min", "µg/(kg·min)")
    if rng.random() < 0.5:
        r = rng.randint(1, 200) / 10
        mg_h = r * w * 60 / 1000
        q = tr(
            lang,
            f"A drug runs at {num(r)} µg/kg/min in a patient weighing {w} kg. How many mg per "
            "hour is that?",
            f"患者体重{w} kg，某药以{num(r)} µg/(kg·min)泵入。折合每小时多少毫克？",
        )
        return Calc(
            q,
            mg_h,
            "mg/h",
            2,
            "mg/h = µg/kg/min × weight × 60 / 1000",
            "ug_kg_min_to_mg_h",
            {"ug_kg_min": r, "weight_kg": w},
            (
                ("minutes_not_turned_into_hours", mg_h / 60),
                ("weight_left_out", mg_h / w),
                ("micrograms_not_turned_into_mg", mg_h * 1000),
                ("divided_by_60", mg_h / 3600),
            ),
        )
    m = rng.randint(5, 500) / 10
    r = m * 1000 / (60 * w)
    q = tr(
        lang,
        f"A patient weighing {w} kg receives a drug at {num(m)} mg/h. What is that in µg/kg/min?",
        f"患者体重{w} kg，某药输注速度为{num(m)} mg/h。折合多少µg/(kg·min)？",
    )
    return Calc(
        q,
        r,
        rate_unit,
        2,
        "µg/kg/min = mg/h × 1000 / (60 × weight)",
        "mg_h_to_ug_kg_min",
        {"mg_h": m, "weight_kg": w},
        (
            ("hours_not_turned_into_minutes", r * 60),
            ("weight_left_out", r * w),
            ("multiplied_by_60", r * 3600),
            ("milligrams_not_turned_into_ug", r / 1000),
        ),
    )


def multi(rng: random.Random, lang: str, level: int) -> Pick:
    unit = "mg" if level == 1 else rng.choice(("g", "mg", "µg"))
    amount = Decimal(rng.randint(1, 999)).scaleb(-rng.randint(0, 3))
    in_ug = amount * _UG[unit]

    def row(u: str, factor: Decimal) -> Row | None:
        shown = (in_ug * factor / _UG[u]).normalize()
        if shown >= 10**7 or int(shown.as_tuple().exponent) < -6:
            return None
        return f"{num(shown)} {u}", {"amount": float(shown), "unit": u}, float(factor == 1)

    slips = (Decimal(10), Decimal(100), Decimal(1000), Decimal("0.1"), Decimal("0.01"))
    others = [u for u in _UG if u != unit]
    rights = [r for r in (row(u, Decimal(1)) for u in others) if r is not None]
    wrongs = [r for r in (row(u, s) for u in others for s in slips) if r is not None]
    n = option_count("multi", level)
    if not rights or len(wrongs) < n - 1:
        raise PoorDrawError
    n_right = rng.randint(1, min(len(rights), n - 1))
    rows = (*rng.sample(rights, n_right), *rng.sample(wrongs, n - n_right))
    q = tr(
        lang,
        f"Which of these amounts are equal to {num(amount)} {unit}?",
        f"下列剂量中，哪些等于{num(amount)} {unit}？",
    )
    return Pick(
        q,
        rows,
        "1 g = 1000 mg = 10⁶ µg = 10⁹ ng",
        "equal_amounts",
        {"amount": float(amount), "unit": unit},
    )


def order(rng: random.Random, lang: str, level: int) -> Pick:
    w = rng.randint(10, 100)
    centre = rng.choice((20, 50, 100, 200, 500, 1000))
    descending, how = direction(rng, lang)

    def draw() -> tuple[str, Inputs, float]:
        mg = centre * rng.uniform(0.3, 3)
        form = rng.random()
        if level >= 2 and form < 0.35:
            per_kg = float(f"{mg / w:.2g}")
            if level == 3 and form < 0.15:
                ug = float(f"{per_kg * 1000:.2g}")
                text = f"{num(ug)} µg/kg"
                return text, {"amount": ug, "unit": "µg/kg"}, ug * w / 1000
            return f"{num(per_kg)} mg/kg", {"amount": per_kg, "unit": "mg/kg"}, per_kg * w
        unit = rng.choice(("g", "mg", "µg"))
        shown = Decimal(f"{mg * 1000 / float(_UG[unit]):.2g}")
        value = float(shown * _UG[unit] / 1000)
        return f"{num(shown)} {unit}", {"amount": float(shown), "unit": unit}, value

    q = tr(
        lang,
        f"For a patient weighing {w} kg, order these doses by the amount of drug given, {how}.",
        f"患者体重{w} kg。按实际给药量{how}排列下列剂量。",
    )
    return Pick(
        q,
        draw_order(option_count("order", level), draw, apart(0.1)),
        "amount (mg) = g × 1000 = µg / 1000; per-kg doses × weight",
        "doses_by_amount",
        {"weight_kg": w, "descending": descending},
        descending,
    )


SCENARIO = Scenario("units", "Unit conversions", "单位换算", single, multi, order)
