"""The open-answer demo pools: single-choice items beside open ones built from the same
kind of calculation (issue 15).

``item_pools/make_demo_pool.py --open`` writes ``demo-open/`` (Chinese) and
``demo-open-en/`` (English). Each scenario gives 40 items: 20 single-choice (as in the
main demo pools), 10 **calculations answered in free text** whose final number is graded
against the computed key (``numeric_answer``, within half a unit of the rounding the
question asks for; scores 0/1), and 10 **explanations** ("which formula, and what
result?") graded against a reference answer, the formula with the result, by ROUGE-L
(scores 0..4). No parameters ship with them: ``cat demo --pool`` calibrates its own.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from .numbers_and_text import num, round_note, rounded, tr
from .options import option_count, single_options
from .records import Calc, PoorDrawError, Scenario
from .scenarios import SCENARIOS

OPEN_POOL_NAMES = {"zh": "demo-open", "en": "demo-open-en"}
OPEN_SEEDS = {"zh": 20261124, "en": 20261125}
#: Items per scenario of each kind, in this order within a block of 4.
_BLOCK = ("single", "single", "numeric", "explain")
ITEMS_PER_SCENARIO = 40
#: The top score of an explanation.
EXPLAIN_MAX_SCORE = 4
_MAX_DRAWS = 300


def _calc(scenario: Scenario, rng: random.Random, lang: str, level: int, seen: set[str]) -> Calc:
    for _ in range(_MAX_DRAWS):
        try:
            calc = scenario.single(rng, lang, level)
        except PoorDrawError:
            continue
        if " ".join(calc.question.split()) not in seen:
            return calc
    raise RuntimeError(f"{scenario.id}: no fresh item at level {level}")


def _key(calc: Calc) -> float:
    return calc.value if calc.digits is None else rounded(calc.value, calc.digits)


def _asked(calc: Calc, lang: str) -> str:
    if calc.digits is None:
        return calc.question
    return f"{calc.question}{tr(lang, ' ', '')}{round_note(lang, calc.digits)}"


def _item(scenario: Scenario, kind: str, level: int, calc: Calc, lang: str) -> dict[str, Any]:
    meta = {"difficulty": level, "language": lang, "formula": calc.formula}
    meta |= {"variant": calc.variant, "inputs": calc.inputs}
    answer = f"{num(_key(calc))} {calc.unit}"
    if kind == "numeric":
        tolerance = 0.5 * 10.0 ** -(calc.digits if calc.digits is not None else 1)
        return {
            "scenario": scenario.id,
            "type": "open",
            "question": _asked(calc, lang) + tr(lang, " Show your working.", "请写出计算过程。"),
            "references": [f"{calc.formula} = {answer}"],
            "numeric_answer": {"value": _key(calc), "abs_tol": tolerance},
            "max_score": 1,
            "meta": meta,
        }
    return {
        "scenario": scenario.id,
        "type": "open",
        "question": tr(
            lang,
            f"{calc.question} Which formula do you use, and what is the result? Answer in "
            "one sentence.",
            f"{calc.question}应使用什么公式？结果是多少？请用一句话回答。",
        ),
        "references": [
            tr(lang, f"{calc.formula}, which gives {answer}", f"{calc.formula}，结果为{answer}")
        ],
        "max_score": EXPLAIN_MAX_SCORE,
        "meta": meta,
    }


def build_open_items(lang: str, seed: int) -> list[dict[str, Any]]:
    """All items of the open pool in ``lang``, in file order."""
    items: list[dict[str, Any]] = []
    seen: set[str] = set()
    for scenario in SCENARIOS:
        rng = random.Random(f"{seed}:{lang}:{scenario.id}:open")
        for number in range(1, ITEMS_PER_SCENARIO + 1):
            kind = _BLOCK[(number - 1) % len(_BLOCK)]
            level = (number - 1) // len(_BLOCK) % 3 + 1
            calc = _calc(scenario, rng, lang, level, seen)
            seen.add(" ".join(calc.question.split()))
            if kind == "single":
                options, answer, why = single_options(calc, rng, option_count(kind, level))
                meta = {"difficulty": level, "language": lang, "formula": calc.formula}
                meta |= {"variant": calc.variant, "inputs": calc.inputs, "distractors": why}
                body: dict[str, Any] = {
                    "scenario": scenario.id,
                    "type": "single",
                    "question": _asked(calc, lang),
                    "options": options,
                    "answer": answer,
                    "meta": meta,
                }
            else:
                body = _item(scenario, kind, level, calc, lang)
            items.append({"id": f"{scenario.id}-{lang}-open-{number:03d}", **body})
    return items


def write_open_pool(folder: Path, lang: str) -> int:
    """Write ``folder/pool.json`` and ``folder/items.jsonl``; returns the number of items."""
    items = build_open_items(lang, OPEN_SEEDS[lang])
    folder.mkdir(parents=True, exist_ok=True)
    language = "Chinese" if lang == "zh" else "English"
    manifest = {
        "name": OPEN_POOL_NAMES[lang],
        "version": "1",
        "language": lang,
        "description": (
            f"{len(items)} clinical calculation questions in {language}: single-choice items "
            "and open items answered in free text (a calculation with a numeric final "
            "answer, scored 0/1, or an explanation graded against a reference answer, "
            "scored 0..4), generated by item_pools/make_demo_pool.py --open. No parameters: "
            "cat demo --pool calibrates its own."
        ),
        "scenarios": [
            {"id": s.id, "name_en": s.name_en, "name_zh": s.name_zh, "n_items": ITEMS_PER_SCENARIO}
            for s in SCENARIOS
        ],
        "generator": "item_pools/make_demo_pool.py --open",
        "seed": OPEN_SEEDS[lang],
    }
    (folder / "pool.json").write_text(
        json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8", newline="\n"
    )
    text = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items)
    (folder / "items.jsonl").write_text(text, encoding="utf-8", newline="\n")
    return len(items)
