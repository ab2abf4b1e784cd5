"""Tiny pools for the synth tests: questions written for the tests, in both languages."""

from __future__ import annotations

import json
from pathlib import Path

from itempool import PoolItem

EN_ITEMS = [
    PoolItem(
        id=f"en{k:03d}",
        scenario="dosing" if k % 2 else "units",
        question=f"A patient weighs {50 + k} kg. At 10 mg/kg, what is the dose (item {k})?",
        options={
            "A": f"{(50 + k) * 5} mg",
            "B": f"{(50 + k) * 10} mg",
            "C": f"{(50 + k) * 20} mg",
            "D": f"{(50 + k) * 30} mg",
        },
        answer="B",
    )
    for k in range(30)
]
ZH_ITEMS = [
    PoolItem(
        id=f"zh{k:03d}",
        scenario="计算",
        question=f"患者体重{60 + k}千克，按每千克5毫克给药，剂量是多少？（第{k}题）",
        options={
            "A": f"{(60 + k) * 5}毫克",
            "B": f"{(60 + k) * 2}毫克",
            "C": f"{(60 + k) * 9}毫克",
        },
        answer="A",
    )
    for k in range(10)
]


def write_pool(folder: Path, items: list[PoolItem], language: str = "en") -> Path:
    """A pool folder with ``pool.json`` and ``items.jsonl``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pool.json").write_text(json.dumps({"name": folder.name, "language": language}))
    (folder / "items.jsonl").write_text(
        "".join(item.model_dump_json() + "\n" for item in items), encoding="utf-8"
    )
    return folder


MIXED_ITEMS = [
    PoolItem(
        id=f"mx{k:03d}",
        scenario="mixed",
        type=("single", "multi", "order")[k % 3],
        question=f"Mixed question {k}: which of these drugs act on the kidney? (set {k})"
        if k % 3 != 2
        else f"Mixed question {k}: order these doses from the smallest (set {k}).",
        options={"A": f"{k + 3} mg", "B": f"{k + 1} mg", "C": f"{k + 4} mg", "D": f"{k + 2} mg"},
        answer=("C", "AC", "BDAC")[k % 3],
    )
    for k in range(12)
]
# Open items (free text, scored 0..4 unless told otherwise) beside choice items with
# partial credit: the graded pool of issue 15.
OPEN_ITEMS = [
    PoolItem(
        id="op-dose",
        scenario="dosing",
        type="open",
        question="A patient weighs 70 kg. At 5 mg/kg, what dose in mg should be given?",
        numeric_answer={"value": 350, "rel_tol": 0.01},
    ),
    PoolItem(
        id="op-infusion",
        scenario="dosing",
        type="open",
        question="An infusion of 1000 mL runs over 8 hours. What is the rate in mL per hour?",
        references=("The rate is 125 mL per hour.",),
        numeric_answer={"value": 125, "abs_tol": 0.5},
        max_score=2,
    ),
    PoolItem(
        id="op-hypo",
        scenario="emergency",
        type="open",
        question="What is the first treatment for a conscious patient with hypoglycaemia?",
        references=(
            "Give fifteen grams of fast acting oral glucose and recheck the blood sugar "
            "after fifteen minutes.",
        ),
        rubric="Full marks need oral glucose and a recheck.",
    ),
    PoolItem(
        id="op-sepsis",
        scenario="emergency",
        type="open",
        question="Name the first steps of the sepsis bundle in the first hour of care.",
        references=(
            "Measure lactate, take blood cultures before antibiotics, give broad spectrum "
            "antibiotics and start fluids for hypotension.",
            "Lactate, blood cultures, broad spectrum antibiotics and fluid resuscitation.",
        ),
    ),
    PoolItem(
        id="op-multi",
        scenario="kidney",
        type="multi",
        question="Which of these drugs need a dose change in kidney failure? Select all.",
        options={"A": "gentamicin", "B": "paracetamol", "C": "metformin", "D": "vancomycin"},
        answer="ACD",
        max_score=3,
    ),
    PoolItem(
        id="op-order",
        scenario="emergency",
        type="order",
        question="Order the steps of basic life support, first step first.",
        options={
            "A": "compressions",
            "B": "check response",
            "C": "call for help",
            "D": "defibrillate",
        },
        answer="BCAD",
        max_score=3,
    ),
    PoolItem(
        id="op-single",
        scenario="kidney",
        question="Which electrolyte rises dangerously in acute kidney injury?",
        options={"A": "sodium", "B": "potassium", "C": "calcium"},
        answer="B",
    ),
]
ZH_OPEN_ITEMS = [
    PoolItem(
        id="zh-op-dose",
        type="open",
        question="患者体重60千克，按每千克5毫克给药，剂量是多少毫克？",
        numeric_answer={"value": 300},
    ),
    PoolItem(
        id="zh-op-hypo",
        type="open",
        question="清醒的低血糖患者首先应如何处理？",
        references=("口服十五克葡萄糖，十五分钟后复查血糖。",),
    ),
]
