"""Write the demo item pools: clinical calculation questions whose answers are computed here.

    python item_pools/make_demo_pool.py [--out DIR]

writes ``DIR/demo/`` (Chinese items, ``"language": "zh"``: the main demo) and
``DIR/demo-en/`` (English items), each a ``pool.json`` and an ``items.jsonl``; DIR defaults
to the folder holding this script. Every question is built from random numbers and its key
is computed from them with a textbook formula (cited beside each scenario); nothing is
copied from any benchmark. The two languages are drawn independently: ``dose-zh-00001`` is
not a translation of ``dose-en-00001``.

Each scenario gives 300 items per language: 270 single-choice (90 at each difficulty level;
4 options at levels 1-2, 5 at level 3), 15 multiple-answer and 15 ordering items.
Distractors are the results of common mistakes (a forgotten factor, × and ÷ swapped, a wrong
unit, rounding the wrong way), topped up with scaled values where mistakes coincide.

The output is the same byte for byte on every run and platform: each (language, scenario)
has its own ``random.Random`` seeded by a string, so editing one scenario leaves the items
of the others untouched.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
GENERATOR = "item_pools/make_demo_pool.py"
VERSION = "1"
#: Seed per item language, recorded in each pool.json.
SEEDS = {"zh": 20260601, "en": 20260602}
#: Pool folder (and manifest name) per item language.
POOL_NAMES = {"zh": "demo", "en": "demo-en"}
ITEMS_PER_SCENARIO = 300
LETTERS = "ABCDE"
#: The manifest keys this script owns; others (a calibration's) survive a rerun.
MANIFEST_KEYS = ("name", "version", "language", "description", "scenarios", "generator", "seed")

# Two options closer than this are a judgement call once someone rounds an intermediate
# step differently, so they are never offered together (the one deliberate exception is
# the rounding slip on keys that need no intermediate rounding).
_MIN_REL_GAP = Decimal("0.04")
_MIN_STEPS = 3
_FILLERS = (0.5, 0.75, 0.8, 0.9, 1.1, 1.2, 1.25, 1.5, 2.0)
_MAX_DRAWS = 300

Inputs = dict[str, Any]
Row = tuple[str, Inputs, float]  # option text, the numbers behind it, its value or verdict
Mistakes = tuple[tuple[str, float], ...]  # (what went wrong, the value it leads to)


class _PoorDrawError(Exception):
    """The drawn numbers make a poor question (implausible, ambiguous): draw again."""


# ------------------------------------------------------------------ numbers and text


def _tr(lang: str, en: str, zh: str) -> str:
    # Both versions sit side by side at every call so that they stay in step.
    return zh if lang == "zh" else en


def _dec(value: float | Decimal) -> Decimal:
    # Nine decimals first, so that float noise (12.249999999997) never decides a rounding.
    return value if isinstance(value, Decimal) else Decimal(f"{value:.9f}")


def _round(value: float | Decimal, digits: int) -> Decimal:
    """``value`` rounded half up to ``digits`` decimals, as a calculator user writes it."""
    return _dec(value).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)


def _r(value: float, digits: int) -> float:
    """An intermediate result rounded as the question tells the reader to round it."""
    return float(_round(value, digits))


def _num(value: float | Decimal) -> str:
    """A number as a person writes it: no float noise, no trailing zeros."""
    if isinstance(value, int):
        return str(value)
    exact = value if isinstance(value, Decimal) else Decimal(repr(float(value)))
    return format(exact.normalize(), "f")


def _round_note(lang: str, digits: int) -> str:
    if digits == 0:
        return _tr(lang, "Round to the nearest whole number.", "结果取整数。")
    places = "1 decimal place" if digits == 1 else f"{digits} decimal places"
    return _tr(lang, f"Round to {places}.", f"结果保留{digits}位小数。")


def _other_neighbour(value: float, digits: int) -> Decimal | None:
    """The grid value on the other side of ``value`` from its correct rounding, or None
    when ``value`` is on the grid or exactly halfway (then both roundings are defensible)."""
    scaled = _dec(value).scaleb(digits)
    low = scaled.to_integral_value(rounding=ROUND_FLOOR)
    frac = scaled - low
    if frac == 0 or frac == Decimal("0.5"):
        return None
    other = low if frac > Decimal("0.5") else low + 1
    return other.scaleb(-digits).quantize(Decimal(1).scaleb(-digits))


def _nice(value: float, down: bool) -> int:
    """A round number near ``value`` (a maximum dose as labels print it)."""
    step = 5 if value < 100 else 10 if value < 500 else 50 if value < 2000 else 100
    units = math.floor(value / step) if down else math.ceil(value / step)
    if units <= 0:
        raise _PoorDrawError
    return units * step


def _apart(rel: float, absolute: float = 0.0) -> Callable[[float, float], bool]:
    """Whether two values to be ordered differ clearly (no near-ties in a key)."""

    def far(a: float, b: float) -> bool:
        return abs(a - b) >= max(absolute, rel * max(abs(a), abs(b)))

    return far


# ------------------------------------------------------------------ textbook formulas


def _cockcroft_gault(age: int, weight: float, scr_mg_dl: float, female: bool) -> float:
    # Cockcroft DW, Gault MH. Nephron 1976;16:31-41: CrCl (mL/min) =
    # (140 - age) × weight (kg) / (72 × serum creatinine (mg/dL)), × 0.85 for women.
    value = (140 - age) * weight / (72 * scr_mg_dl)
    return value * 0.85 if female else value


def _mosteller(height_cm: float, weight_kg: float) -> float:
    # Mosteller RD. N Engl J Med 1987;317:1098: BSA (m²) = √(height (cm) × weight (kg) / 3600).
    return math.sqrt(height_cm * weight_kg / 3600)


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


def _albumin_correction(albumin: float, per_litre: bool) -> float:
    # Figge J, Jabor A, Kazda A, Fencl V. Crit Care Med 1998;26:1807-10: add 2.5 mmol/L to
    # the anion gap per 1 g/dL of albumin below normal (taken as 4.0 g/dL = 40 g/L).
    return 0.25 * (40 - albumin) if per_litre else 2.5 * (4.0 - albumin)


# ------------------------------------------------------------------ item shapes


@dataclass(frozen=True)
class Calc:
    """A single-choice case: a computed value and the wrong values mistakes lead to.

    ``digits`` is how the answer is rounded (the question says so); None means the value
    is exact and shown as is. ``slip`` offers the value rounded the wrong way, which is fair
    only when the key needs no intermediate rounding."""

    question: str
    value: float
    unit: str
    digits: int | None
    formula: str
    variant: str
    inputs: Inputs
    mistakes: Mistakes
    slip: bool = False


@dataclass(frozen=True)
class Pick:
    """A multiple-answer or ordering case. The number in each row is 1/0 (right/wrong)
    for a multiple-answer item and the value that orders the options otherwise; ``stem``
    holds the question's own numbers."""

    question: str
    rows: tuple[Row, ...]
    formula: str
    variant: str
    stem: Inputs
    descending: bool = False


def _single_options(
    calc: Calc, rng: random.Random, n_options: int
) -> tuple[dict[str, str], str, dict[str, str]]:
    """Options (letter -> text), the key's letter, and the mistake behind each distractor."""
    digits = calc.digits
    step = Decimal(0) if digits is None else Decimal(1).scaleb(-digits)

    def shown(value: float | Decimal) -> Decimal:
        return _dec(value).normalize() if digits is None else _round(value, digits)

    key = shown(calc.value)
    picked: list[tuple[str, Decimal]] = [("key", key)]

    def far(a: Decimal, b: Decimal) -> bool:
        return abs(a - b) >= max(_MIN_STEPS * step, _MIN_REL_GAP * max(abs(a), abs(b)))

    def offer(label: str, value: Decimal, beside_key: bool = False) -> None:
        if len(picked) >= n_options or value <= 0 or any(value == v for _, v in picked):
            return
        if digits is None and int(value.as_tuple().exponent) < -6:
            return  # a six-decimal option is an unreadable one
        if all(far(value, v) or (beside_key and label_ == "key") for label_, v in picked):
            picked.append((label, value))

    if calc.slip and digits is not None and rng.random() < 0.5:
        other = _other_neighbour(calc.value, digits)
        if other is not None:
            offer("rounded_wrong_way", other, beside_key=True)
    for label, wrong in calc.mistakes:
        if math.isfinite(wrong):
            offer(label, shown(wrong))
    fillers = list(_FILLERS)
    rng.shuffle(fillers)
    for factor in fillers:
        offer("scaled", shown(calc.value * factor))
    if len(picked) < n_options:
        raise _PoorDrawError
    rng.shuffle(picked)
    options = {LETTERS[k]: f"{format(v, 'f')} {calc.unit}" for k, (_, v) in enumerate(picked)}
    answer = next(LETTERS[k] for k, (label, _) in enumerate(picked) if label == "key")
    why = {LETTERS[k]: label for k, (label, _) in enumerate(picked) if label != "key"}
    return options, answer, why


def _draw_multi(
    rng: random.Random,
    n: int,
    draw: Callable[[], tuple[str, Inputs, float]],
    verdict: Callable[[float], bool | None],
) -> tuple[Row, ...]:
    """``n`` distinct options, at least one right and one wrong; ``verdict`` returns None
    for a value too close to the line to ask about."""
    n_right = rng.randint(1, n - 1)
    right: list[Row] = []
    wrong: list[Row] = []
    texts: set[str] = set()
    for _ in range(500):
        text, inputs, value = draw()
        ok = verdict(value)
        if ok is None or text in texts:
            continue
        bucket, room = (right, n_right) if ok else (wrong, n - n_right)
        if len(bucket) < room:
            bucket.append((text, inputs, 1.0 if ok else 0.0))
            texts.add(text)
        if len(right) + len(wrong) == n:
            return (*right, *wrong)
    raise _PoorDrawError


def _draw_order(
    n: int, draw: Callable[[], tuple[str, Inputs, float]], far: Callable[[float, float], bool]
) -> tuple[Row, ...]:
    """``n`` distinct options whose values are pairwise clearly apart."""
    chosen: list[Row] = []
    for _ in range(500):
        text, inputs, value = draw()
        if value <= 0 or any(text == t or not far(value, v) for t, _, v in chosen):
            continue
        chosen.append((text, inputs, value))
        if len(chosen) == n:
            return tuple(chosen)
    raise _PoorDrawError


def _pick_options(
    pick: Pick, kind: str, rng: random.Random
) -> tuple[dict[str, str], str, dict[str, Inputs]]:
    """Options in a shuffled order, the key, and each option's inputs by letter."""
    order = list(range(len(pick.rows)))
    rng.shuffle(order)
    rows = [pick.rows[i] for i in order]
    options = {LETTERS[k]: text for k, (text, _, _) in enumerate(rows)}
    if kind == "multi":
        answer = "".join(LETTERS[k] for k, (_, _, score) in enumerate(rows) if score > 0)
    else:
        ranked = sorted(range(len(rows)), key=lambda k: rows[k][2], reverse=pick.descending)
        answer = "".join(LETTERS[k] for k in ranked)
    return options, answer, {LETTERS[k]: inputs for k, (_, inputs, _) in enumerate(rows)}


def _n_options(kind: str, level: int) -> int:
    if kind == "single":
        return 5 if level == 3 else 4
    return 4 if level == 1 else 5


def _direction(rng: random.Random, lang: str, low_high: bool = False) -> tuple[bool, str]:
    """Ascending or descending, and how the question says it."""
    descending = rng.random() < 0.5
    if low_high:
        en = "highest first" if descending else "lowest first"
        zh = "从高到低" if descending else "从低到高"
    else:
        en = "largest first" if descending else "smallest first"
        zh = "从大到小" if descending else "从小到大"
    return descending, _tr(lang, en, zh)


# ------------------------------------------------------------------ weight-based dosing

_MG_PER_KG = (0.5, 1, 1.5, 2, 2.5, 3, 4, 5, 6, 7.5, 8, 10, 12, 12.5, 15, 20, 25, 30)
_MG_PER_KG_DAY = (10, 15, 20, 25, 30, 40, 45, 50, 60, 75, 80, 90, 100)
_DAILY_RANGES = ((10, 20), (15, 30), (20, 30), (20, 40), (25, 50), (30, 60), (40, 60), (50, 100))


def _dose_single(rng: random.Random, lang: str, level: int) -> Calc:
    # dose (mg) = weight (kg) × dose (mg/kg); a daily dose is split into equal doses.
    w: float
    if level == 1:
        w, d = rng.randint(4, 95), rng.choice(_MG_PER_KG)
        dose = w * d
        q = _tr(
            lang,
            f"A patient weighing {w} kg is prescribed a single dose of {_num(d)} mg/kg of a "
            "drug. How many mg should be given?",
            f"患者体重{w} kg，医嘱某药单次剂量{_num(d)} mg/kg。应给药多少毫克？",
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
            q = _tr(
                lang,
                f"A child weighing {_num(w)} kg is prescribed {daily} mg/kg/day of a drug in "
                f"{n} equally divided doses. How many mg is each dose?",
                f"患儿体重{_num(w)} kg，某药每日{daily} mg/kg，分{n}次等量给药。"
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
        q = _tr(
            lang,
            f"A child weighing {_num(w)} kg needs a single dose of {_num(d)} mg/kg of an oral "
            f"suspension containing {strength} mg per 5 mL. What volume should be given?",
            f"患儿体重{_num(w)} kg，需单次口服某药{_num(d)} mg/kg，其混悬液每5 mL含"
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
        cap = _nice(raw * rng.uniform(0.5, 0.9), True) if binds else _nice(raw * 1.2, False)
        if (binds and cap >= raw * 0.95) or (not binds and cap <= raw * 1.05):
            raise _PoorDrawError
        q = _tr(
            lang,
            f"A child weighing {_num(w)} kg is prescribed {daily} mg/kg/day of a drug in {n} "
            f"equally divided doses, not exceeding {cap} mg per dose. How many mg should each "
            "dose be?",
            f"患儿体重{_num(w)} kg，某药每日{daily} mg/kg，分{n}次等量给药，单次剂量不超过"
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
    kg = _r(lb / 2.2, 1)
    raw = kg * d
    binds = rng.random() < 0.5
    cap = _nice(raw * rng.uniform(0.5, 0.9), True) if binds else _nice(raw * 1.2, False)
    if (binds and cap >= raw * 0.95) or (not binds and cap <= raw * 1.05):
        raise _PoorDrawError
    q = _tr(
        lang,
        f"A patient weighing {_num(lb)} lb is prescribed a single dose of {_num(d)} mg/kg of a "
        f"drug, up to a maximum of {cap} mg. Convert the weight to kg (1 kg = 2.2 lb), rounded "
        "to 1 decimal place, then work out the dose. How many mg should be given?",
        f"患者体重{_num(lb)}磅，医嘱某药单次{_num(d)} mg/kg，最大剂量不超过{cap} mg。"
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


def _dose_multi(rng: random.Random, lang: str, level: int) -> Pick:
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

    q = _tr(
        lang,
        f"A child weighing {_num(w)} kg is prescribed a drug at {low}-{high} mg/kg/day in {n} "
        "equally divided doses. Which of these single doses lie within that range?",
        f"患儿体重{_num(w)} kg，某药推荐剂量为每日{low}～{high} mg/kg，分{n}次等量给药。"
        "下列单次剂量中，哪些在推荐范围内？",
    )
    return Pick(
        q,
        _draw_multi(rng, _n_options("multi", level), draw, verdict),
        "per-dose range = weight × (low, high) mg/kg/day ÷ doses per day",
        "doses_within_range",
        {"weight_kg": w, "mg_per_kg_day_low": low, "mg_per_kg_day_high": high, "doses_per_day": n},
    )


def _dose_order(rng: random.Random, lang: str, level: int) -> Pick:
    w = rng.randint(50, 600) / 10 if level == 3 else rng.randint(5, 60)
    descending, how = _direction(rng, lang)

    def draw() -> tuple[str, Inputs, float]:
        every = rng.choice((6, 8, 12, 24))
        form = rng.random()
        if form < 0.35:
            mg = rng.choice((50, 100, 125, 150, 200, 250, 300, 400, 500, 750))
            text = _tr(lang, f"{mg} mg every {every} h", f"每{every}小时{mg} mg")
            return text, {"mg": mg, "every_h": every}, mg * 24 / every
        if level == 3 and form > 0.75:
            daily, n = rng.choice(_MG_PER_KG_DAY), rng.choice((2, 3, 4))
            text = _tr(
                lang,
                f"{daily} mg/kg/day in {n} divided doses",
                f"每日{daily} mg/kg，分{n}次",
            )
            return text, {"mg_per_kg_day": daily, "doses_per_day": n}, daily * w
        d = rng.choice(_MG_PER_KG)
        text = _tr(lang, f"{_num(d)} mg/kg every {every} h", f"每{every}小时{_num(d)} mg/kg")
        return text, {"mg_per_kg": d, "every_h": every}, d * w * 24 / every

    q = _tr(
        lang,
        f"A child weighs {_num(w)} kg. Order these regimens by the total daily dose in mg, {how}.",
        f"患儿体重{_num(w)} kg。按每日总剂量（mg）{how}排列下列给药方案。",
    )
    return Pick(
        q,
        _draw_order(_n_options("order", level), draw, _apart(0.08)),
        "daily dose = dose per administration × 24 ÷ interval (× weight if per kg)",
        "regimens_by_daily_dose",
        {"weight_kg": w, "descending": descending},
        descending,
    )


# ------------------------------------------------------------------ body-mass index, BSA

_BMI_BANDS = ((18.5, 24.9), (18.5, 23.9), (25.0, 29.9), (24.0, 27.9), (30.0, 34.9))


def _body_single(rng: random.Random, lang: str, level: int) -> Calc:
    w: float
    if level == 1:
        # BMI = weight (kg) / height (m)² (WHO).
        w, h = rng.randint(38, 140), rng.randint(145, 200)
        bmi = w / (h / 100) ** 2
        if not 14 <= bmi <= 50:
            raise _PoorDrawError
        q = _tr(
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
        q = _tr(
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
    bsa = _r(_mosteller(h, w), 2)
    q = _tr(
        lang,
        f"A drug is dosed at {per_m2} mg/m². The patient is {h} cm tall and weighs {_num(w)} kg. "
        "Work out the body-surface area with the Mosteller formula, rounded to 2 decimal "
        "places, then the dose. How many mg should be given?",
        f"某药按{per_m2} mg/m²给药。患者身高{h} cm，体重{_num(w)} kg。先按Mosteller公式计算"
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
            ("square_root_forgotten", _r(h * w / 3600, 2) * per_m2),
            ("inch_pound_constant_3131", _r(math.sqrt(h * w / 3131), 2) * per_m2),
            ("divided_by_bsa", per_m2 / bsa),
        ),
    )


def _body_multi(rng: random.Random, lang: str, level: int) -> Pick:
    h = rng.randint(150, 195)
    lo, hi = rng.choice(_BMI_BANDS)
    m2 = (h / 100) ** 2

    def draw() -> tuple[str, Inputs, float]:
        x = rng.uniform(lo * m2 * 0.8, hi * m2 * 1.2)
        w = round(x, 1) if level == 3 else round(x)
        return f"{_num(w)} kg", {"weight_kg": w}, w / m2

    def verdict(bmi: float) -> bool | None:
        if lo + 0.3 <= bmi <= hi - 0.3:
            return True
        return False if bmi < lo - 0.3 or bmi > hi + 0.3 else None

    q = _tr(
        lang,
        f"An adult is {h} cm tall. At which of these body weights would the body-mass index be "
        f"between {lo} and {hi} kg/m² (inclusive)?",
        f"成人身高{h} cm。体重为下列哪些数值时，其体重指数（BMI）在{lo}～{hi} kg/m²之间"
        "（含端点）？",
    )
    return Pick(
        q,
        _draw_multi(rng, _n_options("multi", level), draw, verdict),
        "BMI = weight (kg) / height (m)²",
        "weights_in_bmi_band",
        {"height_cm": h, "bmi_low": lo, "bmi_high": hi},
    )


def _body_order(rng: random.Random, lang: str, level: int) -> Pick:
    per_m2 = rng.randint(4, 60) * 5
    descending, how = _direction(rng, lang)

    def draw() -> tuple[str, Inputs, float]:
        w: float
        if rng.random() < 0.4:
            w, h = rng.randint(8, 45), rng.randint(75, 160)
        else:
            w, h = rng.randint(40, 130), rng.randint(145, 200)
        if level == 3:
            w = rng.randint(w * 10 - 5, w * 10 + 5) / 10
        text = _tr(lang, f"{h} cm, {_num(w)} kg", f"身高{h} cm，体重{_num(w)} kg")
        return text, {"height_cm": h, "weight_kg": w}, _mosteller(h, w)

    q = _tr(
        lang,
        f"A drug is dosed at {per_m2} mg/m² of body-surface area (Mosteller formula). Order "
        f"these patients by the dose they receive, {how}.",
        f"某药按{per_m2} mg/m²体表面积给药（按Mosteller公式计算体表面积）。按所得剂量"
        f"{how}排列下列患者。",
    )
    return Pick(
        q,
        _draw_order(_n_options("order", level), draw, _apart(0.05)),
        "dose = √(height × weight / 3600) × mg/m²",
        "patients_by_bsa_dose",
        {"mg_per_m2": per_m2, "descending": descending},
        descending,
    )


# ------------------------------------------------------------------ creatinine clearance


def _sex(lang: str, female: bool) -> str:
    return _tr(lang, "woman" if female else "man", "女" if female else "男")


def _crcl_single(rng: random.Random, lang: str, level: int) -> Calc:
    age = rng.randint(18, 95)
    w: float = rng.randint(40, 120) if level < 3 else rng.randint(400, 1200) / 10
    female = level == 2 or (level == 3 and rng.random() < 0.5)
    sex = _sex(lang, female)
    if level < 3:
        scr = rng.randint(5, 40) / 10
        inputs: Inputs = {"age": age, "weight_kg": w, "female": female, "creatinine_mg_dl": scr}
        q = _tr(
            lang,
            f"A {age}-year-old {sex} weighs {_num(w)} kg; serum creatinine is {_num(scr)} mg/dL. "
            "What is the creatinine clearance estimated with the Cockcroft-Gault equation?",
            f"{sex}性患者，{age}岁，体重{_num(w)} kg，血肌酐{_num(scr)} mg/dL。"
            "按Cockcroft-Gault公式估算，其肌酐清除率是多少？",
        )
        unconverted = math.inf
    else:
        umol = rng.randint(45, 450)
        scr = _r(umol / 88.4, 2)
        if scr < 0.4:
            raise _PoorDrawError
        inputs = {"age": age, "weight_kg": w, "female": female, "creatinine_umol_l": umol}
        q = _tr(
            lang,
            f"A {age}-year-old {sex} weighs {_num(w)} kg; serum creatinine is {umol} µmol/L. "
            "Convert the creatinine to mg/dL (1 mg/dL = 88.4 µmol/L), rounded to 2 decimal "
            "places, then estimate the creatinine clearance with the Cockcroft-Gault equation.",
            f"{sex}性患者，{age}岁，体重{_num(w)} kg，血肌酐{umol} µmol/L。先将血肌酐换算为"
            "mg/dL（1 mg/dL = 88.4 µmol/L，保留2位小数），再按Cockcroft-Gault公式估算其"
            "肌酐清除率。",
        )
        unconverted = _cockcroft_gault(age, w, umol, female)
    value = _cockcroft_gault(age, w, scr, female)
    if not 8 <= value <= 200:
        raise _PoorDrawError
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
        text = _tr(
            lang,
            f"{age}-year-old {_sex(lang, female)}, creatinine {umol} µmol/L",
            f"{age}岁{_sex(lang, female)}性，血肌酐{umol} µmol/L",
        )
        inputs: Inputs = {"age": age, "female": female, "creatinine_umol_l": umol}
        return text, inputs, _cockcroft_gault(age, w, umol / 88.4, female)
    scr = rng.randint(6, 45) / 10
    text = _tr(
        lang,
        f"{age}-year-old {_sex(lang, female)}, creatinine {_num(scr)} mg/dL",
        f"{age}岁{_sex(lang, female)}性，血肌酐{_num(scr)} mg/dL",
    )
    inputs = {"age": age, "female": female, "creatinine_mg_dl": scr}
    return text, inputs, _cockcroft_gault(age, w, scr, female)


def _crcl_multi(rng: random.Random, lang: str, level: int) -> Pick:
    w = rng.randint(45, 110)
    limit = rng.choice((15, 20, 25, 30, 40, 45, 50, 60))
    note = _tr(lang, " (1 mg/dL = 88.4 µmol/L)", "（1 mg/dL = 88.4 µmol/L）") if level == 3 else ""

    def verdict(value: float) -> bool | None:
        if value < limit - 2:
            return True
        return False if value > limit + 2 else None

    q = _tr(
        lang,
        f"A renally cleared drug needs a lower dose when the Cockcroft-Gault creatinine "
        f"clearance is below {limit} mL/min. Which of these patients, each weighing {w} kg, "
        f"need the lower dose?{note}",
        f"某经肾排泄的药物在肌酐清除率（Cockcroft-Gault公式）低于{limit} mL/min时需减量。"
        f"下列患者体重均为{w} kg，哪些需要减量？{note}",
    )
    rows = _draw_multi(
        rng, _n_options("multi", level), lambda: _crcl_patient(rng, lang, level, w), verdict
    )
    return Pick(
        q,
        rows,
        "CrCl = (140 − age) × weight / (72 × SCr mg/dL), × 0.85 if female",
        "patients_below_crcl",
        {"weight_kg": w, "threshold_ml_min": limit},
    )


def _crcl_order(rng: random.Random, lang: str, level: int) -> Pick:
    w = rng.randint(45, 110)
    descending, how = _direction(rng, lang, low_high=True)
    note = _tr(lang, " (1 mg/dL = 88.4 µmol/L)", "（1 mg/dL = 88.4 µmol/L）") if level == 3 else ""
    q = _tr(
        lang,
        f"These patients each weigh {w} kg. Order them by creatinine clearance estimated with "
        f"the Cockcroft-Gault equation, {how}.{note}",
        f"下列患者体重均为{w} kg。按Cockcroft-Gault公式估算的肌酐清除率{how}排列。{note}",
    )
    rows = _draw_order(
        _n_options("order", level), lambda: _crcl_patient(rng, lang, level, w), _apart(0.08, 3)
    )
    return Pick(
        q,
        rows,
        "CrCl = (140 − age) × weight / (72 × SCr mg/dL), × 0.85 if female",
        "patients_by_crcl",
        {"weight_kg": w, "descending": descending},
        descending,
    )


# ------------------------------------------------------------------ anion gap


def _electrolytes(rng: random.Random) -> tuple[int, int, int, int]:
    # AG = Na − (Cl + HCO3) (Emmett M, Narins RG. Medicine 1977;56:38-54).
    for _ in range(100):
        na, cl, hco3 = rng.randint(128, 150), rng.randint(88, 116), rng.randint(6, 32)
        if 4 <= na - cl - hco3 <= 36:
            return na, cl, hco3, na - cl - hco3
    raise _PoorDrawError


def _gap_single(rng: random.Random, lang: str, level: int) -> Calc:
    na, cl, hco3, gap = _electrolytes(rng)
    lab_en = f"Serum sodium {na} mmol/L, chloride {cl} mmol/L, bicarbonate {hco3} mmol/L"
    lab_zh = f"血钠{na} mmol/L，血氯{cl} mmol/L，碳酸氢根{hco3} mmol/L"
    if level == 1:
        q = _tr(
            lang,
            f"{lab_en}. What is the anion gap (without potassium)?",
            f"{lab_zh}。不计血钾，阴离子间隙是多少？",
        )
        return Calc(
            q,
            gap,
            "mmol/L",
            0,
            "AG = Na − (Cl + HCO3)",
            "anion_gap",
            {"sodium": na, "chloride": cl, "bicarbonate": hco3},
            (
                ("bicarbonate_added", na - cl + hco3),
                ("bicarbonate_left_out", na - cl),
                ("chloride_left_out", na - hco3),
            ),
        )
    if level == 2:
        k = rng.randint(28, 65) / 10
        q = _tr(
            lang,
            f"{lab_en}, potassium {_num(k)} mmol/L. What is the anion gap, including potassium?",
            f"{lab_zh}，血钾{_num(k)} mmol/L。计入血钾，阴离子间隙是多少？",
        )
        return Calc(
            q,
            gap + k,
            "mmol/L",
            1,
            "AG = (Na + K) − (Cl + HCO3)",
            "anion_gap_potassium",
            {"sodium": na, "chloride": cl, "bicarbonate": hco3, "potassium": k},
            (
                ("potassium_left_out", gap),
                ("potassium_subtracted", gap - k),
                ("bicarbonate_added", na + k - cl + hco3),
            ),
            slip=True,
        )
    if lang == "zh":
        alb: float = rng.randint(15, 39)
        inputs: Inputs = {"sodium": na, "chloride": cl, "bicarbonate": hco3, "albumin_g_l": alb}
        q = (
            f"{lab_zh}，血清白蛋白{_num(alb)} g/L。不计血钾，以40 g/L为白蛋白正常值，"
            "经白蛋白校正后的阴离子间隙是多少？"
        )
        wrong_units = ("factor_2.5_per_g_per_l", gap + 2.5 * (40 - alb))
    else:
        alb = rng.randint(15, 39) / 10
        inputs = {"sodium": na, "chloride": cl, "bicarbonate": hco3, "albumin_g_dl": alb}
        q = (
            f"{lab_en}, albumin {_num(alb)} g/dL. What is the albumin-corrected anion gap "
            "(without potassium; take 4.0 g/dL as the normal albumin)?"
        )
        wrong_units = ("factor_0.25_per_g_per_dl", gap + 0.25 * (4.0 - alb))
    corr = _albumin_correction(alb, lang == "zh")
    return Calc(
        q,
        gap + corr,
        "mmol/L",
        1,
        "AG = Na − (Cl + HCO3); corrected AG = AG + 2.5 × (4.0 − albumin g/dL)",
        "anion_gap_albumin",
        inputs,
        (
            ("uncorrected", gap),
            ("correction_subtracted", gap - corr),
            ("albumin_itself_added", gap + (0.25 if lang == "zh" else 2.5) * alb),
            wrong_units,
        ),
        slip=True,
    )


def _gap_panel(rng: random.Random, lang: str, level: int, na: int) -> tuple[str, Inputs, float]:
    cl, hco3 = rng.randint(88, 116), rng.randint(6, 32)
    gap: float = na - cl - hco3
    text = _tr(lang, f"Cl {cl}, HCO₃⁻ {hco3} mmol/L", f"血氯{cl} mmol/L，碳酸氢根{hco3} mmol/L")
    inputs: Inputs = {"chloride": cl, "bicarbonate": hco3}
    if level == 3:
        if lang == "zh":
            alb: float = rng.randint(15, 40)
            text += f"，白蛋白{alb} g/L"
            inputs["albumin_g_l"] = alb
        else:
            alb = rng.randint(15, 40) / 10
            text += f", albumin {_num(alb)} g/dL"
            inputs["albumin_g_dl"] = alb
        gap += _albumin_correction(alb, lang == "zh")
    return text, inputs, gap if 3 <= na - cl - hco3 <= 40 else -1.0


def _gap_multi(rng: random.Random, lang: str, level: int) -> Pick:
    na, upper = rng.randint(130, 150), rng.choice((11, 12, 14, 16))
    extra = ""
    if level == 3:
        extra = _tr(
            lang,
            " Correct each gap for albumin (normal albumin 4.0 g/dL).",
            "需按白蛋白校正（白蛋白正常值按40 g/L计）。",
        )

    def verdict(gap: float) -> bool | None:
        if gap < 0:
            return None
        if gap >= upper + 2:
            return True
        return False if gap <= upper - 2 else None

    q = _tr(
        lang,
        f"Several patients have a serum sodium of {na} mmol/L. Taking {upper} mmol/L as the "
        "upper limit of normal for the anion gap (calculated without potassium), which of these "
        f"results show a raised anion gap?{extra}",
        f"几位患者的血钠均为{na} mmol/L。阴离子间隙（不计血钾）以{upper} mmol/L为正常上限，"
        f"下列哪些结果提示阴离子间隙升高？{extra}",
    )
    return Pick(
        q,
        _draw_multi(
            rng, _n_options("multi", level), lambda: _gap_panel(rng, lang, level, na), verdict
        ),
        "AG = Na − (Cl + HCO3) (+ 2.5 × (4.0 − albumin g/dL) if corrected)",
        "raised_anion_gap",
        {"sodium": na, "upper_limit": upper},
    )


def _gap_order(rng: random.Random, lang: str, level: int) -> Pick:
    na = rng.randint(130, 150)
    descending, how = _direction(rng, lang, low_high=True)
    corrected = _tr(lang, "albumin-corrected ", "经白蛋白校正的") if level == 3 else ""
    normal = ""
    if level == 3:
        normal = _tr(lang, " Take 4.0 g/dL as the normal albumin.", "白蛋白正常值按40 g/L计。")
    q = _tr(
        lang,
        f"Several patients have a serum sodium of {na} mmol/L. Order these results by "
        f"{corrected}anion gap (without potassium), {how}.{normal}",
        f"几位患者的血钠均为{na} mmol/L。按{corrected}阴离子间隙（不计血钾）{how}排列下列结果。"
        f"{normal}",
    )
    return Pick(
        q,
        _draw_order(
            _n_options("order", level), lambda: _gap_panel(rng, lang, level, na), _apart(0, 2)
        ),
        "AG = Na − (Cl + HCO3) (+ 2.5 × (4.0 − albumin g/dL) if corrected)",
        "panels_by_anion_gap",
        {"sodium": na, "descending": descending},
        descending,
    )


# ------------------------------------------------------------------ unit conversions

#: Micrograms per unit of mass.
_UG = {"g": Decimal(10**6), "mg": Decimal(1000), "µg": Decimal(1), "ng": Decimal("0.001")}


def _mass_conversion(rng: random.Random, lang: str) -> Calc:
    source, target, n, shift = rng.choice(
        (("mg", "µg", 500, 3), ("µg", "mg", 5000, 0), ("g", "mg", 500, 2))
    )
    x = Decimal(rng.randint(1, n)).scaleb(-rng.randint(1, shift) if shift else 0)
    factor = _UG[source] / _UG[target]
    value = x * factor
    q = _tr(
        lang,
        f"How many {target} are in {_num(x)} {source}?",
        f"{_num(x)} {source}等于多少{target}？",
    )
    return Calc(
        q,
        float(value),
        target,
        None,
        f"1 {source} = {_num(factor)} {target}",
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
        q = _tr(
            lang,
            f"A patient weighs {lb} lb. What is that in kg (1 kg = 2.2 lb)?",
            f"患者体重{lb}磅，折合多少千克（1 kg = 2.2磅）？",
        )
        mistakes = (("multiplied_instead", lb * 2.2), ("halved", lb / 2))
        return Calc(
            q, lb / 2.2, "kg", 1, "kg = lb ÷ 2.2", "lb_to_kg", {"lb": lb}, mistakes, slip=True
        )
    kg = rng.randint(20, 1500) / 10
    q = _tr(
        lang,
        f"A patient weighs {_num(kg)} kg. What is that in lb (1 kg = 2.2 lb)?",
        f"患者体重{_num(kg)} kg，折合多少磅（1 kg = 2.2磅）？",
    )
    mistakes = (("divided_instead", kg / 2.2), ("doubled", kg * 2))
    unit = _tr(lang, "lb", "磅")
    return Calc(q, kg * 2.2, unit, 1, "lb = kg × 2.2", "kg_to_lb", {"kg": kg}, mistakes, slip=True)


def _lab_conversion(rng: random.Random, lang: str) -> Calc:
    kind = rng.randrange(6)
    if kind == 0:
        x = rng.randint(20, 350) / 10
        q = _tr(
            lang,
            f"A blood glucose of {_num(x)} mmol/L is how many mg/dL (1 mmol/L = 18 mg/dL)?",
            f"血糖{_num(x)} mmol/L相当于多少mg/dL（1 mmol/L = 18 mg/dL）？",
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
        q = _tr(
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
        q = _tr(
            lang,
            f"A temperature of {_num(f)} °F is how many degrees Celsius?",
            f"体温{_num(f)} °F相当于多少摄氏度？",
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
        q = _tr(
            lang,
            f"A temperature of {_num(c)} °C is how many degrees Fahrenheit?",
            f"体温{_num(c)} °C相当于多少华氏度？",
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
        q = _tr(
            lang,
            f"Convert a serum creatinine of {_num(x)} mg/dL to µmol/L (1 mg/dL = 88.4 µmol/L).",
            f"将血肌酐{_num(x)} mg/dL换算为µmol/L（1 mg/dL = 88.4 µmol/L）。",
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
    q = _tr(
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


def _units_single(rng: random.Random, lang: str, level: int) -> Calc:
    if level == 1:
        return _mass_conversion(rng, lang) if rng.random() < 0.6 else _weight_conversion(rng, lang)
    if level == 2:
        return _lab_conversion(rng, lang)
    w = rng.randint(40, 120)
    rate_unit = _tr(lang, "µg/kg/min", "µg/(kg·min)")
    if rng.random() < 0.5:
        r = rng.randint(1, 200) / 10
        mg_h = r * w * 60 / 1000
        q = _tr(
            lang,
            f"A drug runs at {_num(r)} µg/kg/min in a patient weighing {w} kg. How many mg per "
            "hour is that?",
            f"患者体重{w} kg，某药以{_num(r)} µg/(kg·min)泵入。折合每小时多少毫克？",
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
    q = _tr(
        lang,
        f"A patient weighing {w} kg receives a drug at {_num(m)} mg/h. What is that in µg/kg/min?",
        f"患者体重{w} kg，某药输注速度为{_num(m)} mg/h。折合多少µg/(kg·min)？",
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


def _units_multi(rng: random.Random, lang: str, level: int) -> Pick:
    unit = "mg" if level == 1 else rng.choice(("g", "mg", "µg"))
    amount = Decimal(rng.randint(1, 999)).scaleb(-rng.randint(0, 3))
    in_ug = amount * _UG[unit]

    def row(u: str, factor: Decimal) -> Row | None:
        shown = (in_ug * factor / _UG[u]).normalize()
        if shown >= 10**7 or int(shown.as_tuple().exponent) < -6:
            return None
        return f"{_num(shown)} {u}", {"amount": float(shown), "unit": u}, float(factor == 1)

    slips = (Decimal(10), Decimal(100), Decimal(1000), Decimal("0.1"), Decimal("0.01"))
    others = [u for u in _UG if u != unit]
    rights = [r for r in (row(u, Decimal(1)) for u in others) if r is not None]
    wrongs = [r for r in (row(u, s) for u in others for s in slips) if r is not None]
    n = _n_options("multi", level)
    if not rights or len(wrongs) < n - 1:
        raise _PoorDrawError
    n_right = rng.randint(1, min(len(rights), n - 1))
    rows = (*rng.sample(rights, n_right), *rng.sample(wrongs, n - n_right))
    q = _tr(
        lang,
        f"Which of these amounts are equal to {_num(amount)} {unit}?",
        f"下列剂量中，哪些等于{_num(amount)} {unit}？",
    )
    return Pick(
        q,
        rows,
        "1 g = 1000 mg = 10⁶ µg = 10⁹ ng",
        "equal_amounts",
        {"amount": float(amount), "unit": unit},
    )


def _units_order(rng: random.Random, lang: str, level: int) -> Pick:
    w = rng.randint(10, 100)
    centre = rng.choice((20, 50, 100, 200, 500, 1000))
    descending, how = _direction(rng, lang)

    def draw() -> tuple[str, Inputs, float]:
        mg = centre * rng.uniform(0.3, 3)
        form = rng.random()
        if level >= 2 and form < 0.35:
            per_kg = float(f"{mg / w:.2g}")
            if level == 3 and form < 0.15:
                ug = float(f"{per_kg * 1000:.2g}")
                text = f"{_num(ug)} µg/kg"
                return text, {"amount": ug, "unit": "µg/kg"}, ug * w / 1000
            return f"{_num(per_kg)} mg/kg", {"amount": per_kg, "unit": "mg/kg"}, per_kg * w
        unit = rng.choice(("g", "mg", "µg"))
        shown = Decimal(f"{mg * 1000 / float(_UG[unit]):.2g}")
        value = float(shown * _UG[unit] / 1000)
        return f"{_num(shown)} {unit}", {"amount": float(shown), "unit": unit}, value

    q = _tr(
        lang,
        f"For a patient weighing {w} kg, order these doses by the amount of drug given, {how}.",
        f"患者体重{w} kg。按实际给药量{how}排列下列剂量。",
    )
    return Pick(
        q,
        _draw_order(_n_options("order", level), draw, _apart(0.1)),
        "amount (mg) = g × 1000 = µg / 1000; per-kg doses × weight",
        "doses_by_amount",
        {"weight_kg": w, "descending": descending},
        descending,
    )


# ------------------------------------------------------------------ infusion rates


def _infusion_single(rng: random.Random, lang: str, level: int) -> Calc:
    if level == 1:
        if rng.random() < 0.6:
            # rate (mL/h) = volume (mL) / time (h)
            v, t = rng.randint(5, 300) * 10, rng.randint(2, 48) / 2
            q = _tr(
                lang,
                f"{v} mL of fluid is to be infused over {_num(t)} hours. At what rate should the "
                "pump be set?",
                f"{v} mL液体需在{_num(t)}小时内匀速输完，输液泵速度应设为多少？",
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
        q = _tr(
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
            raise _PoorDrawError
        other = 20 if factor == 15 else 15
        q = _tr(
            lang,
            f"{v} mL is to run over {t} hours through a giving set that delivers {factor} "
            "drops/mL. What drip rate is needed?",
            f"{v} mL液体需在{t}小时内输完，输液器滴系数为{factor}滴/mL。每分钟应滴多少滴？",
        )
        return Calc(
            q,
            drops,
            _tr(lang, "drops/min", "滴/分"),
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
        raise _PoorDrawError
    q = _tr(
        lang,
        f"{a} mg of a drug is diluted to {b} mL. It is ordered at {_num(r)} µg/kg/min for a "
        f"patient weighing {w} kg. At what rate should the pump run?",
        f"某药{a} mg稀释至{b} mL，医嘱按{_num(r)} µg/(kg·min)泵入，患者体重{w} kg。"
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
        text = _tr(lang, f"{v} mL over {m} min", f"{m}分钟输入{v} mL")
        return text, {"volume_ml": v, "minutes": m}, v * 60 / m
    t = rng.randint(1, 24) if level == 1 else rng.randint(2, 48) / 2
    text = _tr(lang, f"{v} mL over {_num(t)} h", f"{_num(t)}小时输入{v} mL")
    return text, {"volume_ml": v, "hours": t}, v / t


def _infusion_multi(rng: random.Random, lang: str, level: int) -> Pick:
    limit = rng.randint(4, 40) * 5

    def verdict(rate: float) -> bool | None:
        if rate > limit * 1.05:
            return True
        return False if rate < limit * 0.95 else None

    q = _tr(
        lang,
        f"Which of these infusions run faster than {limit} mL/h?",
        f"下列输液中，哪些速度超过{limit} mL/h？",
    )
    return Pick(
        q,
        _draw_multi(
            rng, _n_options("multi", level), lambda: _infusion_row(rng, lang, level), verdict
        ),
        "mL/h = volume / hours (= volume × 60 / minutes)",
        "infusions_above_rate",
        {"threshold_ml_h": limit},
    )


def _infusion_order(rng: random.Random, lang: str, level: int) -> Pick:
    a = rng.choice((50, 100, 200, 250, 400, 500))
    b = rng.choice((50, 100, 250, 500))
    w = rng.randint(40, 120)
    conc = a / b
    centre = conc * rng.randint(5, 30)
    descending, how = _direction(rng, lang)

    def draw() -> tuple[str, Inputs, float]:
        mg_h = centre * rng.uniform(0.3, 3)
        form = rng.randrange(2 + (level >= 2) + (level == 3))
        if form == 0:
            x = round(mg_h / conc, 1)
            return f"{_num(x)} mL/h", {"ml_h": x}, x * conc
        if form == 1:
            m = round(mg_h, 1)
            return f"{_num(m)} mg/h", {"mg_h": m}, m
        if form == 2:
            r = round(mg_h * 1000 / 60 / w, 2)
            text = _tr(lang, f"{_num(r)} µg/kg/min", f"{_num(r)} µg/(kg·min)")
            return text, {"ug_kg_min": r}, r * w * 60 / 1000
        u = round(mg_h * 1000 / 60)
        return f"{u} µg/min", {"ug_min": u}, u * 60 / 1000

    q = _tr(
        lang,
        f"A bag holds {a} mg of a drug in {b} mL; the patient weighs {w} kg. Order these "
        f"infusion settings by the amount of drug delivered per hour, {how}.",
        f"某药{a} mg配成{b} mL，患者体重{w} kg。按每小时给药量{how}排列下列输注设置。",
    )
    return Pick(
        q,
        _draw_order(_n_options("order", level), draw, _apart(0.08)),
        "mg/h = mL/h × mg/mL = µg/kg/min × weight × 60 / 1000 = µg/min × 60 / 1000",
        "settings_by_drug_per_hour",
        {"drug_mg": a, "bag_ml": b, "weight_kg": w, "descending": descending},
        descending,
    )


# ------------------------------------------------------------------ concentration, dilution

_STOCK = (1, 2, 4, 5, 10, 20, 25, 40, 50, 100, 200)
_TARGET = (0.1, 0.2, 0.25, 0.5, 1, 2, 2.5, 4, 5, 10, 20, 50)
_PERCENT = (0.1, 0.2, 0.25, 0.45, 0.5, 0.9, 1, 2, 2.5, 3, 5, 8.4, 10, 20, 25, 50)
_RATIOS = (100, 200, 1000, 2000, 10000)
_VOLUMES = (10, 20, 25, 50, 100, 200, 250, 500, 1000)


def _final_volume(rng: random.Random) -> int:
    return rng.choice(_VOLUMES) if rng.random() < 0.5 else rng.randint(2, 100) * 5


def _dilution_single(rng: random.Random, lang: str, level: int) -> Calc:
    # C1 × V1 = C2 × V2; a p% (w/v) solution holds p g per 100 mL = 10 × p mg/mL;
    # a 1:N (w/v) solution holds 1 g in N mL = 1000 / N mg/mL.
    if level == 1 or (level == 2 and rng.random() < 0.5):
        c1 = rng.choice(_STOCK)
        c2 = rng.choice([c for c in _TARGET if c < c1])
        v2 = _final_volume(rng)
        v1 = c2 * v2 / c1
        if v1 < 0.5 or v1 > v2 * 0.9:
            raise _PoorDrawError
        inputs: Inputs = {"stock_mg_ml": c1, "target_mg_ml": c2, "final_ml": v2}
        if level == 1:
            q = _tr(
                lang,
                f"How many mL of a {_num(c1)} mg/mL stock solution are needed to make {v2} mL of "
                f"a {_num(c2)} mg/mL solution?",
                f"用{_num(c1)} mg/mL的储备液配制{_num(c2)} mg/mL的溶液{v2} mL，"
                "需取储备液多少毫升？",
            )
            mistakes: Mistakes = (
                ("ratio_upside_down", c1 * v2 / c2),
                ("diluent_volume_given", v2 - v1),
                ("target_concentration_ignored", v2 / c1),
            )
            return Calc(q, v1, "mL", 1, "V1 = C2 × V2 / C1", "stock_volume", inputs, mistakes)
        q = _tr(
            lang,
            f"{v2} mL of a {_num(c2)} mg/mL solution is to be made from a {_num(c1)} mg/mL "
            "stock. How many mL of diluent must be added to the stock?",
            f"用{_num(c1)} mg/mL的储备液配制{_num(c2)} mg/mL的溶液{v2} mL，需加入稀释液多少毫升？",
        )
        mistakes = (
            ("stock_volume_given", v1),
            ("final_volume_given", v2),
            ("ratio_upside_down", c1 * v2 / c2 - v2),
        )
        return Calc(
            q, v2 - v1, "mL", 1, "diluent = V2 − C2 × V2 / C1", "diluent_volume", inputs, mistakes
        )
    if level == 2:
        p, x = rng.choice(_PERCENT), rng.randint(1, 100)
        q = _tr(
            lang,
            f"How many mg of drug are in {x} mL of a {_num(p)}% (w/v) solution?",
            f"{x} mL {_num(p)}%（w/v）溶液中含药多少毫克？",
        )
        mistakes = (
            ("percent_read_as_mg_per_ml", p * x),
            ("percent_read_as_g_per_10_ml", p * 100 * x),
            ("percent_read_as_fraction", p / 100 * x),
        )
        return Calc(
            q,
            p * 10 * x,
            "mg",
            None,
            "mg = p × 10 mg/mL × mL",
            "percent_to_mass",
            {"percent": p, "volume_ml": x},
            mistakes,
        )
    if rng.random() < 0.5:
        p = rng.choice((1, 2, 5, 10, 20, 25, 50))
        c2 = rng.choice([c for c in (0.5, 1, 2, 2.5, 4, 5, 10, 20, 25, 50, 100) if c < 10 * p])
        v2 = _final_volume(rng)
        v1 = c2 * v2 / (10 * p)
        if v1 < 0.5 or v1 > v2 * 0.9:
            raise _PoorDrawError
        q = _tr(
            lang,
            f"How many mL of a {p}% (w/v) stock are needed to make {v2} mL of a {_num(c2)} "
            "mg/mL solution?",
            f"用{p}%（w/v）的储备液配制{_num(c2)} mg/mL的溶液{v2} mL，需取储备液多少毫升？",
        )
        mistakes = (
            ("percent_read_as_mg_per_ml", c2 * v2 / p),
            ("ratio_upside_down", 10 * p * v2 / c2),
            ("diluent_volume_given", v2 - v1),
        )
        return Calc(
            q,
            v1,
            "mL",
            1,
            "V1 = C2 × V2 / (10 × p)",
            "percent_stock_volume",
            {"stock_percent": p, "target_mg_ml": c2, "final_ml": v2},
            mistakes,
        )
    n = rng.choice(_RATIOS)
    d = Decimal(rng.randint(1, 100)).scaleb(-1)
    ml = d * n / 1000
    q = _tr(
        lang,
        f"A drug is supplied as a 1:{n} (w/v) solution. How many mL contain {_num(d)} mg?",
        f"某药规格为1:{n}（w/v）溶液，含药{_num(d)} mg需多少毫升？",
    )
    mistakes = (
        ("ratio_read_as_1_mg_per_n_ml", float(d * n)),
        ("ratio_upside_down", float(d * 1000 / n)),
        ("factor_10_too_large", float(ml * 10)),
        ("factor_10_too_small", float(ml / 10)),
    )
    return Calc(
        q,
        float(ml),
        "mL",
        None,
        "1:N (w/v) = 1000/N mg/mL; mL = mg × N / 1000",
        "ratio_strength_volume",
        {"ratio": n, "mg": float(d)},
        mistakes,
    )


def _strength(rng: random.Random, lang: str, form: int) -> tuple[str, Inputs, Decimal]:
    """A solution strength as labels write it (mg/mL, % w/v, 1:N) and its mg/mL."""
    if form == 0:
        c = Decimal(str(rng.choice(_TARGET)))
        return (
            _tr(lang, f"a {_num(c)} mg/mL solution", f"{_num(c)} mg/mL溶液"),
            {"mg_ml": float(c)},
            c,
        )
    if form == 1:
        p = Decimal(str(rng.choice(_PERCENT)))
        text = _tr(lang, f"a {_num(p)}% (w/v) solution", f"{_num(p)}%（w/v）溶液")
        return text, {"percent": float(p)}, p * 10
    n = rng.choice(_RATIOS)
    return _tr(lang, f"a 1:{n} solution", f"1:{n}溶液"), {"ratio": n}, Decimal(1000) / n


def _volume_of(lang: str, ml: Decimal, strength: str) -> str:
    return _tr(lang, f"{_num(ml)} mL of {strength}", f"{strength}{_num(ml)} mL")


def _dilution_multi(rng: random.Random, lang: str, level: int) -> Pick:
    target = Decimal(rng.randint(1, 200) * 5)
    slips = (Decimal(10), Decimal("0.1"), Decimal(2), Decimal("0.5"))

    def draw() -> tuple[str, Inputs, float]:
        strength, inputs, mg_ml = _strength(rng, lang, rng.randrange(level))
        right = rng.random() < 0.5
        ml = (target / mg_ml * (1 if right else rng.choice(slips))).normalize()
        if int(ml.as_tuple().exponent) < -2 or not Decimal("0.1") <= ml <= 1000:
            return "", {}, -1.0
        return _volume_of(lang, ml, strength), {"ml": float(ml), **inputs}, float(ml * mg_ml)

    def verdict(mg: float) -> bool | None:
        return None if mg < 0 else abs(mg - float(target)) < 1e-6

    q = _tr(
        lang,
        f"Which of these preparations contain exactly {_num(target)} mg of drug?",
        f"下列制剂中，哪些恰好含药{_num(target)} mg？",
    )
    return Pick(
        q,
        _draw_multi(rng, _n_options("multi", level), draw, verdict),
        "mg = mL × mg/mL (p% = 10p mg/mL; 1:N = 1000/N mg/mL)",
        "preparations_with_amount",
        {"mg": float(target)},
    )


def _dilution_order(rng: random.Random, lang: str, level: int) -> Pick:
    final = rng.randint(5, 100) * 10
    descending, how = _direction(rng, lang, low_high=True)

    def draw() -> tuple[str, Inputs, float]:
        form = rng.randrange(level + 1)
        if form == level:  # the last form at every level: a powder
            mg = rng.randint(1, 200) * 5
            return _tr(lang, f"{mg} mg of powder", f"药粉{mg} mg"), {"powder_mg": mg}, float(mg)
        strength, inputs, mg_ml = _strength(rng, lang, form)
        ml = Decimal(rng.randint(1, final // 2))
        return _volume_of(lang, ml, strength), {"ml": float(ml), **inputs}, float(ml * mg_ml)

    q = _tr(
        lang,
        f"Each of these is diluted with water to a final volume of {final} mL. Order the "
        f"resulting solutions by concentration, {how}.",
        f"下列各药分别加水稀释至{final} mL。按所得溶液浓度{how}排列。",
    )
    return Pick(
        q,
        _draw_order(_n_options("order", level), draw, _apart(0.1)),
        "final mg/mL = mg of drug / final volume (p% = 10p mg/mL; 1:N = 1000/N mg/mL)",
        "solutions_by_concentration",
        {"final_ml": final, "descending": descending},
        descending,
    )


# ------------------------------------------------------------------ maintenance fluids


def _fluids_single(rng: random.Random, lang: str, level: int) -> Calc:
    if level < 3:
        w = rng.randint(25, 200) / 10 if level == 1 else rng.randint(201, 900) / 10
        who_en = "a child" if w < 40 else "a patient"
        who_zh = "患儿" if w < 40 else "患者"
        q = _tr(
            lang,
            f"By the Holliday-Segar (4-2-1) rule, what is the hourly maintenance fluid rate for "
            f"{who_en} weighing {_num(w)} kg?",
            f"按Holliday-Segar法（4-2-1法则），体重{_num(w)} kg的{who_zh}每小时维持液量是多少？",
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
    kg = _r(lb / 2.2, 1)
    q = _tr(
        lang,
        f"A child weighs {_num(lb)} lb. Convert the weight to kg (1 kg = 2.2 lb), rounded to 1 "
        "decimal place, then give the daily maintenance fluid volume by the Holliday-Segar "
        "(100/50/20) rule.",
        f"患儿体重{_num(lb)}磅。先将体重换算为千克（1 kg = 2.2磅，保留1位小数），再按"
        "Holliday-Segar法（100/50/20法则）计算每日维持液量。",
    )
    return Calc(
        q,
        _daily_100_50_20(kg),
        _tr(lang, "mL/day", "mL/d"),
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


def _fluids_multi(rng: random.Random, lang: str, level: int) -> Pick:
    limit = rng.randint(20, 110)

    def draw() -> tuple[str, Inputs, float]:
        if level == 3 and rng.random() < 0.4:
            lb = rng.randint(50, 1800) / 10
            text = _tr(lang, f"{_num(lb)} lb", f"体重{_num(lb)}磅")
            return text, {"weight_lb": lb}, _hourly_421(lb / 2.2)
        w = rng.randint(20, 900) / 10
        return _tr(lang, f"{_num(w)} kg", f"体重{_num(w)} kg"), {"weight_kg": w}, _hourly_421(w)

    def verdict(rate: float) -> bool | None:
        if rate > limit + 1.5:
            return True
        return False if rate < limit - 1.5 else None

    note = _tr(lang, " (1 kg = 2.2 lb)", "（1 kg = 2.2磅）") if level == 3 else ""
    q = _tr(
        lang,
        "Using the Holliday-Segar (4-2-1) rule, which of these patients need a maintenance "
        f"rate above {limit} mL/h?{note}",
        f"按Holliday-Segar法（4-2-1法则），下列患者中哪些每小时维持液量超过{limit} mL？{note}",
    )
    return Pick(
        q,
        _draw_multi(rng, _n_options("multi", level), draw, verdict),
        "4 mL/kg/h for the first 10 kg + 2 mL/kg/h for the next 10 + 1 mL/kg/h above 20",
        "patients_above_rate",
        {"threshold_ml_h": limit},
    )


def _fluids_order(rng: random.Random, lang: str, level: int) -> Pick:
    w = rng.randint(30, 600) / 10
    rate = _hourly_421(w)
    descending, how = _direction(rng, lang)
    how = how.replace("小", "少").replace("大", "多")  # volumes are 少/多 in Chinese

    def draw() -> tuple[str, Inputs, float]:
        form = rng.randrange(3 + level)
        if form == 0:
            text = _tr(lang, "the 4-2-1 maintenance rate", "按4-2-1法则的维持速度")
            return text, {"maintenance_multiple": 1}, rate * 24
        if form == 1:
            r = rng.randint(2, 40) * 5
            return f"{r} mL/h", {"ml_h": r}, r * 24.0
        if form == 2:
            v, t = rng.randint(2, 40) * 25, rng.randint(1, 24)
            text = _tr(lang, f"{v} mL over {t} h, then stop", f"{t}小时输入{v} mL后停止")
            return text, {"volume_ml": v, "hours": t}, float(v)
        if form == 3 or form == 5:
            k = rng.choice((0.5, 0.75, 1.5, 2))
            text = _tr(
                lang, f"{_num(k)} × the 4-2-1 maintenance rate", f"4-2-1法则维持速度的{_num(k)}倍"
            )
            return text, {"maintenance_multiple": k}, k * rate * 24
        x = rng.randint(4, 30) * 5
        text = _tr(lang, f"{x} mL/kg/day", f"每日{x} mL/kg")
        return text, {"ml_kg_day": x}, x * w

    q = _tr(
        lang,
        f"A child weighing {_num(w)} kg is on intravenous fluids. Order these regimens by the "
        f"volume given in 24 hours, {how}.",
        f"体重{_num(w)} kg的患儿静脉补液。按24小时内输入的液量{how}排列下列方案。",
    )
    return Pick(
        q,
        _draw_order(_n_options("order", level), draw, _apart(0.08, 20)),
        "24-h volume: 4-2-1 rate × 24, mL/h × 24, mL/kg/day × weight, or a fixed volume",
        "regimens_by_daily_volume",
        {"weight_kg": w, "descending": descending},
        descending,
    )


# ------------------------------------------------------------------ the pools


@dataclass(frozen=True)
class Scenario:
    """One content area: its names and the three ways it makes items."""

    id: str
    name_en: str
    name_zh: str
    single: Callable[[random.Random, str, int], Calc]
    multi: Callable[[random.Random, str, int], Pick]
    order: Callable[[random.Random, str, int], Pick]


SCENARIOS = (
    Scenario(
        "dose", "Weight-based dosing", "按体重计算给药剂量", _dose_single, _dose_multi, _dose_order
    ),
    Scenario(
        "bmi-bsa",
        "Body-mass index and body-surface area",
        "体重指数与体表面积",
        _body_single,
        _body_multi,
        _body_order,
    ),
    Scenario(
        "crcl",
        "Creatinine clearance (Cockcroft-Gault)",
        "肌酐清除率（Cockcroft-Gault公式）",
        _crcl_single,
        _crcl_multi,
        _crcl_order,
    ),
    Scenario("anion-gap", "Anion gap", "阴离子间隙", _gap_single, _gap_multi, _gap_order),
    Scenario("units", "Unit conversions", "单位换算", _units_single, _units_multi, _units_order),
    Scenario(
        "infusion", "Infusion rates", "输液速度", _infusion_single, _infusion_multi, _infusion_order
    ),
    Scenario(
        "dilution",
        "Concentration and dilution",
        "浓度与稀释",
        _dilution_single,
        _dilution_multi,
        _dilution_order,
    ),
    Scenario(
        "fluids",
        "Maintenance fluids (Holliday-Segar)",
        "维持液量（Holliday-Segar法）",
        _fluids_single,
        _fluids_multi,
        _fluids_order,
    ),
)


def _schedule() -> list[tuple[str, int]]:
    """The type and difficulty of each of a scenario's items, in file order: one multi and
    one order item in every 20, the levels taking turns within each type."""
    plan: list[tuple[str, int]] = []
    counts = {"single": 0, "multi": 0, "order": 0}
    for k in range(ITEMS_PER_SCENARIO):
        kind = "multi" if k % 20 == 9 else "order" if k % 20 == 19 else "single"
        plan.append((kind, counts[kind] % 3 + 1))
        counts[kind] += 1
    return plan


def _question_with_note(calc: Calc, lang: str) -> str:
    if calc.digits is None:
        return calc.question
    return f"{calc.question}{_tr(lang, ' ', '')}{_round_note(lang, calc.digits)}"


def _make_item(
    scenario: Scenario, kind: str, level: int, rng: random.Random, lang: str
) -> tuple[str, dict[str, str], str, dict[str, Any]]:
    """Question, options, key and meta of one item (may raise ``_PoorDrawError``)."""
    meta: dict[str, Any] = {"difficulty": level, "language": lang}
    if kind == "single":
        calc = scenario.single(rng, lang, level)
        options, answer, why = _single_options(calc, rng, _n_options(kind, level))
        meta |= {"formula": calc.formula, "variant": calc.variant, "inputs": calc.inputs}
        meta["distractors"] = why
        return _question_with_note(calc, lang), options, answer, meta
    pick = (scenario.multi if kind == "multi" else scenario.order)(rng, lang, level)
    options, answer, per_option = _pick_options(pick, kind, rng)
    meta |= {"formula": pick.formula, "variant": pick.variant}
    meta["inputs"] = {"stem": pick.stem, "options": per_option}
    return pick.question, options, answer, meta


def build_items(lang: str, seed: int) -> list[dict[str, Any]]:
    """All items of the pool in ``lang`` ("zh" or "en"), in file order."""
    items: list[dict[str, Any]] = []
    seen: set[str] = set()
    for scenario in SCENARIOS:
        rng = random.Random(f"{seed}:{lang}:{scenario.id}")
        for number, (kind, level) in enumerate(_schedule(), start=1):
            for _ in range(_MAX_DRAWS):
                try:
                    question, options, answer, meta = _make_item(scenario, kind, level, rng, lang)
                except _PoorDrawError:
                    continue
                # The local test server tells items apart by their whitespace-collapsed text.
                if " ".join(question.split()) not in seen:
                    break
            else:
                raise RuntimeError(f"{scenario.id}: no fresh {kind} item at level {level}")
            seen.add(" ".join(question.split()))
            items.append(
                {
                    "id": f"{scenario.id}-{lang}-{number:05d}",
                    "scenario": scenario.id,
                    "type": kind,
                    "question": question,
                    "options": options,
                    "answer": answer,
                    "meta": meta,
                }
            )
    _check(items)
    return items


def _check(items: Sequence[dict[str, Any]]) -> None:
    """What every consumer of the pool relies on; a failure here is a bug in this script."""
    ids = [item["id"] for item in items]
    questions = [" ".join(item["question"].split()) for item in items]
    if len(set(ids)) != len(ids) or len(set(questions)) != len(questions):
        raise RuntimeError("duplicate item ids or questions")
    for item in items:
        options, answer = item["options"], item["answer"]
        if len(set(options.values())) != len(options) or list(options) != list(
            LETTERS[: len(options)]
        ):
            raise RuntimeError(f"{item['id']}: repeated option texts or letters out of order")
        if not set(answer) <= set(options) or len(set(answer)) != len(answer):
            raise RuntimeError(f"{item['id']}: answer {answer!r} does not fit the options")
        n_keyed = len(answer)
        if (item["type"] == "single" and n_keyed != 1) or (
            item["type"] == "multi" and not 1 <= n_keyed < len(options)
        ):
            raise RuntimeError(f"{item['id']}: {n_keyed} keyed options for a {item['type']}")
        if item["type"] == "order" and n_keyed != len(options):
            raise RuntimeError(f"{item['id']}: the order key must use every option")


def manifest(lang: str, items: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The generator's part of ``pool.json`` for the pool in ``lang``."""
    counts = {s.id: sum(1 for item in items if item["scenario"] == s.id) for s in SCENARIOS}
    language = "Chinese" if lang == "zh" else "English"
    return {
        "name": POOL_NAMES[lang],
        "version": VERSION,
        "language": lang,
        "description": (
            f"{len(items)} clinical calculation questions in {language} (dosing, BMI and BSA, "
            "creatinine clearance, anion gap, unit conversions, infusion rates, dilutions, "
            "maintenance fluids): single-choice, multiple-answer and ordering items generated "
            f"by {GENERATOR}, which computes every answer with a textbook formula. Nothing is "
            "taken from any benchmark. Item parameters (params.csv) and the reference "
            "participants (reference.jsonl) come from a calibration on simulated participants."
        ),
        "scenarios": [
            {"id": s.id, "name_en": s.name_en, "name_zh": s.name_zh, "n_items": counts[s.id]}
            for s in SCENARIOS
        ],
        "generator": GENERATOR,
        "seed": SEEDS[lang],
    }


def write_pool(folder: Path, lang: str) -> int:
    """Write ``folder/pool.json`` and ``folder/items.jsonl``; returns the number of items.

    Keys a calibration added to an existing ``pool.json`` (model, calibration) are kept."""
    items = build_items(lang, SEEDS[lang])
    folder.mkdir(parents=True, exist_ok=True)
    manifest_path, items_path = folder / "pool.json", folder / "items.jsonl"
    fields = manifest(lang, items)
    if manifest_path.is_file():
        old = json.loads(manifest_path.read_text(encoding="utf-8"))
        fields |= {k: v for k, v in old.items() if k not in MANIFEST_KEYS}
    text = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items)
    if (
        (folder / "params.csv").is_file()
        and items_path.is_file()
        and items_path.read_text(encoding="utf-8") != text
    ):
        print(
            f"warning: {folder}: items changed, params.csv is stale: recalibrate", file=sys.stderr
        )
    manifest_path.write_text(
        json.dumps(fields, indent=2, ensure_ascii=False) + "\n", encoding="utf-8", newline="\n"
    )
    items_path.write_text(text, encoding="utf-8", newline="\n")
    return len(items)


def main(out_root: Path | None = None) -> None:
    """Write both demo pools under ``out_root`` (default: the folder of this script)."""
    root = HERE if out_root is None else Path(out_root)
    for lang in ("zh", "en"):
        folder = root / POOL_NAMES[lang]
        print(f"{folder}: {write_pool(folder, lang)} items")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None, help="folder to write the pools into")
    main(parser.parse_args().out)
