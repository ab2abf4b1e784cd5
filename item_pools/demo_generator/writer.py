"""The pools: each scenario's items in file order, checked, and written with their manifest.

Each (language, scenario) has its own ``random.Random`` seeded by a string, so editing one
scenario leaves the items of the others untouched.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .numbers_and_text import round_note, tr
from .options import LETTERS, option_count, pick_options, single_options
from .records import Calc, PoorDrawError, Scenario
from .scenarios import SCENARIOS

#: item_pools/: the folder of the entry script, where the committed pools live.
POOLS_DIR = Path(__file__).resolve().parents[1]
#: The entry script, as recorded in each pool.json.
GENERATOR = "item_pools/make_demo_pool.py"
VERSION = "1"
#: Seed per item language, recorded in each pool.json.
SEEDS = {"zh": 20260601, "en": 20260602}
#: Pool folder (and manifest name) per item language.
POOL_NAMES = {"zh": "demo", "en": "demo-en"}
ITEMS_PER_SCENARIO = 300
#: The manifest keys the generator owns; others (a calibration's) survive a rerun.
MANIFEST_KEYS = ("name", "version", "language", "description", "scenarios", "generator", "seed")
_MAX_DRAWS = 300


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
    return f"{calc.question}{tr(lang, ' ', '')}{round_note(lang, calc.digits)}"


def _make_item(
    scenario: Scenario, kind: str, level: int, rng: random.Random, lang: str
) -> tuple[str, dict[str, str], str, dict[str, Any]]:
    """Question, options, key and meta of one item (may raise ``PoorDrawError``)."""
    meta: dict[str, Any] = {"difficulty": level, "language": lang}
    if kind == "single":
        calc = scenario.single(rng, lang, level)
        options, answer, why = single_options(calc, rng, option_count(kind, level))
        meta |= {"formula": calc.formula, "variant": calc.variant, "inputs": calc.inputs}
        meta["distractors"] = why
        return _question_with_note(calc, lang), options, answer, meta
    pick = (scenario.multi if kind == "multi" else scenario.order)(rng, lang, level)
    options, answer, per_option = pick_options(pick, kind, rng)
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
                except PoorDrawError:
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
    """What every consumer of the pool relies on; a failure here is a bug in the generator."""
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


def main(out_root: Path | None = None, open_pools: bool = False) -> None:
    """Write both demo pools under ``out_root`` (default: ``POOLS_DIR``); with
    ``open_pools``, the two pools of open and single-choice items instead
    (``demo_generator.open_items``)."""
    from .open_items import OPEN_POOL_NAMES, write_open_pool

    root = POOLS_DIR if out_root is None else Path(out_root)
    for lang in ("zh", "en"):
        if open_pools:
            folder = root / OPEN_POOL_NAMES[lang]
            print(f"{folder}: {write_open_pool(folder, lang)} items")
        else:
            folder = root / POOL_NAMES[lang]
            print(f"{folder}: {write_pool(folder, lang)} items")
