"""The demo item pools (item_pools/demo, item_pools/demo-en): they load, cover every
scenario and level, their keys recompute from the numbers in the questions, and the
generator reproduces them byte for byte."""

from __future__ import annotations

import importlib
import json
import math
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from itempool import ItemType, PoolItem, QuestionSet, read_questions

POOLS = Path(__file__).resolve().parents[2] / "item_pools"
LANGUAGES = {"demo": "zh", "demo-en": "en"}
SCENARIOS = ("dose", "bmi-bsa", "crcl", "anion-gap", "units", "infusion", "dilution", "fluids")
TYPES = ("single", "multi", "order")
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def pools() -> dict[str, QuestionSet]:
    return {name: read_questions(POOLS / name) for name in LANGUAGES}


def _manifest(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "pool.json").read_text(encoding="utf-8"))
    return data


def _generator(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """item_pools/demo_generator, the package item_pools/make_demo_pool.py runs. item_pools
    is not a package: its folder goes on sys.path, as when the script runs."""
    monkeypatch.syspath_prepend(str(POOLS))
    return importlib.import_module("demo_generator")


def test_both_pools_load_in_their_language(pools: dict[str, QuestionSet]) -> None:
    for name, lang in LANGUAGES.items():
        pool = pools[name]
        assert (pool.name, pool.language) == (name, lang)
        assert 2000 <= len(pool.items) <= 3000
        assert all(item.meta["language"] == lang for item in pool.items)
        chinese = [CJK.search(item.question) is not None for item in pool.items]
        assert all(chinese) if lang == "zh" else not any(chinese)
        manifest = _manifest(POOLS / name)
        assert manifest["generator"] == "item_pools/make_demo_pool.py"
        assert isinstance(manifest["seed"], int) and manifest["version"] == "1"
        assert "computes every answer" in manifest["description"]


def test_every_scenario_type_and_level_is_in_both_pools(pools: dict[str, QuestionSet]) -> None:
    wanted = {(s, t, d) for s in SCENARIOS for t in TYPES for d in (1, 2, 3)}
    for name, pool in pools.items():
        scenarios = _manifest(POOLS / name)["scenarios"]
        assert [s["id"] for s in scenarios] == list(SCENARIOS)
        assert all(s["name_en"] and CJK.search(s["name_zh"]) for s in scenarios)
        assert Counter(item.scenario for item in pool.items) == {
            s["id"]: s["n_items"] for s in scenarios
        }
        found = {(i.scenario, i.type.value, i.meta["difficulty"]) for i in pool.items}
        assert found == wanted
        assert all(i.meta["formula"] and i.meta["variant"] for i in pool.items)


def test_ids_questions_and_options_are_unique(pools: dict[str, QuestionSet]) -> None:
    for name, pool in pools.items():
        ids = [item.id for item in pool.items]
        questions = [" ".join(item.question.split()) for item in pool.items]
        assert len(set(ids)) == len(ids) and len(set(questions)) == len(questions)
        for item in pool.items:
            assert re.fullmatch(rf"{item.scenario}-{LANGUAGES[name]}-\d{{5}}", item.id)
            assert list(item.options) == list("ABCDE"[: len(item.options)])
            assert len(set(item.options.values())) == len(item.options)


def test_keyed_letters_are_balanced(pools: dict[str, QuestionSet]) -> None:
    for pool in pools.values():
        singles = [i for i in pool.items if i.type is ItemType.SINGLE]
        for n_options, (low, high) in {4: (0.15, 0.35), 5: (0.10, 0.30)}.items():
            keys = Counter(i.answer for i in singles if len(i.options) == n_options)
            total = sum(keys.values())
            assert total >= 500
            for letter in "ABCDE"[:n_options]:
                assert low <= keys[letter] / total <= high, (n_options, letter, keys)


def test_multi_and_order_items_are_about_five_percent_each(pools: dict[str, QuestionSet]) -> None:
    for pool in pools.values():
        counts = Counter(item.type for item in pool.items)
        for kind in (ItemType.MULTI, ItemType.ORDER):
            assert 0.03 <= counts[kind] / len(pool.items) <= 0.08
        for item in pool.items:
            if item.type is ItemType.MULTI:
                assert 1 <= len(item.answer) < len(item.options)
                assert item.answer == "".join(sorted(item.answer))
            elif item.type is ItemType.ORDER:
                assert sorted(item.answer) == sorted(item.options)
            assert 4 <= len(item.options) <= 5


# ---------------------------------------------------------------- keys recomputed here

# The formulas again, written independently of the generator, from the item's inputs.


def _half_up(value: float, places: int) -> Decimal:
    return Decimal(f"{value:.9f}").quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def _cockcroft_gault(age: float, weight: float, scr_mg_dl: float, female: bool) -> float:
    return (140 - age) * weight / (72 * scr_mg_dl) * (0.85 if female else 1.0)


def _hourly_421(weight: float) -> float:
    return 4 * min(weight, 10) + 2 * min(max(weight - 10, 0), 10) + max(weight - 20, 0)


def _crcl(x: dict[str, Any]) -> float:
    if "creatinine_umol_l" in x:
        scr = float(_half_up(x["creatinine_umol_l"] / 88.4, 2))
    else:
        scr = x["creatinine_mg_dl"]
    return _cockcroft_gault(x["age"], x["weight_kg"], scr, x["female"])


def _albumin_corrected_gap(x: dict[str, Any]) -> float:
    gap = x["sodium"] - x["chloride"] - x["bicarbonate"]
    if "albumin_g_l" in x:
        return float(gap + 0.25 * (40 - x["albumin_g_l"]))
    return float(gap + 2.5 * (4.0 - x["albumin_g_dl"]))


SINGLE_KEYS: dict[str, Callable[[dict[str, Any]], float]] = {
    "single_dose": lambda x: x["weight_kg"] * x["mg_per_kg"],
    "divided_dose": lambda x: x["weight_kg"] * x["mg_per_kg_day"] / x["doses_per_day"],
    "bmi": lambda x: x["weight_kg"] / (x["height_cm"] / 100) ** 2,
    "bsa_mosteller": lambda x: math.sqrt(x["height_cm"] * x["weight_kg"] / 3600),
    "cockcroft_gault": _crcl,
    "cockcroft_gault_umol": _crcl,
    "anion_gap": lambda x: x["sodium"] - x["chloride"] - x["bicarbonate"],
    "anion_gap_potassium": lambda x: (
        x["sodium"] + x["potassium"] - x["chloride"] - x["bicarbonate"]
    ),
    "anion_gap_albumin": _albumin_corrected_gap,
    "glucose_to_mg_dl": lambda x: x["mmol_l"] * 18,
    "f_to_c": lambda x: (x["fahrenheit"] - 32) * 5 / 9,
    "drip_rate": lambda x: x["volume_ml"] * x["drop_factor"] / (x["hours"] * 60),
    "percent_to_mass": lambda x: x["percent"] * 10 * x["volume_ml"],
    "hourly_4_2_1": lambda x: _hourly_421(x["weight_kg"]),
}


@pytest.mark.parametrize("variant", sorted(SINGLE_KEYS))
def test_single_keys_recompute(pools: dict[str, QuestionSet], variant: str) -> None:
    items = [i for p in pools.values() for i in p.items if i.meta["variant"] == variant]
    assert len(items) >= 20
    for item in items:
        shown = item.options[item.answer].split()[0]
        value = SINGLE_KEYS[variant](item.meta["inputs"])
        assert _half_up(value, len(shown.partition(".")[2])) == Decimal(shown), item.id
        # The question states the numbers the key was computed from.
        for number in item.meta["inputs"].values():
            if isinstance(number, int | float) and not isinstance(number, bool):
                assert f"{number:g}" in item.question, (item.id, number)


def _items_of(pools: dict[str, QuestionSet], variant: str) -> list[PoolItem]:
    items = [i for p in pools.values() for i in p.items if i.meta["variant"] == variant]
    assert len(items) >= 20
    return items


def _crcl_unrounded(x: dict[str, Any]) -> float:
    scr = x["creatinine_umol_l"] / 88.4 if "creatinine_umol_l" in x else x["creatinine_mg_dl"]
    return _cockcroft_gault(x["age"], x["weight_kg"], scr, x["female"])


def _check_order(item: PoolItem, value: Callable[[dict[str, Any]], float]) -> None:
    stem, per_option = item.meta["inputs"]["stem"], item.meta["inputs"]["options"]
    values = {letter: value({**stem, **x}) for letter, x in per_option.items()}
    key = "".join(sorted(values, key=values.__getitem__, reverse=stem["descending"]))
    assert item.answer == key, item.id


def test_order_keys_recompute(pools: dict[str, QuestionSet]) -> None:
    for item in _items_of(pools, "patients_by_crcl"):
        _check_order(item, _crcl_unrounded)
    for item in _items_of(pools, "panels_by_anion_gap"):
        _check_order(
            item,
            lambda x: (
                _albumin_corrected_gap(x)
                if "albumin_g_l" in x or "albumin_g_dl" in x
                else x["sodium"] - x["chloride"] - x["bicarbonate"]
            ),
        )


def test_multi_keys_recompute(pools: dict[str, QuestionSet]) -> None:
    for item in _items_of(pools, "patients_above_rate"):
        limit = item.meta["inputs"]["stem"]["threshold_ml_h"]
        right = ""
        for letter, x in item.meta["inputs"]["options"].items():
            weight = x["weight_kg"] if "weight_kg" in x else x["weight_lb"] / 2.2
            right += letter if _hourly_421(weight) > limit else ""
        assert item.answer == right, item.id
    for item in _items_of(pools, "doses_within_range"):
        stem = item.meta["inputs"]["stem"]
        per_day = stem["weight_kg"] / stem["doses_per_day"]
        low, high = stem["mg_per_kg_day_low"] * per_day, stem["mg_per_kg_day_high"] * per_day
        right = "".join(
            letter
            for letter, x in item.meta["inputs"]["options"].items()
            if low <= x["dose_mg"] <= high
        )
        assert item.answer == right, item.id


# ---------------------------------------------------------------- the generator


def test_the_generator_reproduces_the_committed_pools(tmp_path: Path) -> None:
    script = POOLS / "make_demo_pool.py"
    subprocess.run(
        [sys.executable, str(script), "--out", str(tmp_path)], check=True, capture_output=True
    )
    for name in LANGUAGES:
        fresh, committed = tmp_path / name, POOLS / name
        fresh_items = (fresh / "items.jsonl").read_bytes()
        assert fresh_items == (committed / "items.jsonl").read_bytes(), name
        assert fresh_items.endswith(b"\n") and b"\r" not in fresh_items
        # A calibration adds keys (model, calibration) to the committed manifest.
        written, kept = _manifest(fresh), _manifest(committed)
        assert {key: kept[key] for key in written} == written
        if set(kept) == set(written):
            assert (fresh / "pool.json").read_bytes() == (committed / "pool.json").read_bytes()


def test_a_rerun_keeps_the_calibration_and_warns_of_stale_params(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    generator = _generator(monkeypatch)
    generator.main(tmp_path)
    folder = tmp_path / "demo-en"
    manifest = _manifest(folder) | {"model": "3pl", "calibration": {"seed": 1}}
    (folder / "pool.json").write_text(json.dumps(manifest), encoding="utf-8")
    (folder / "params.csv").write_text("item_id,a,b,c,d,se_a,se_b,se_c\n", encoding="utf-8")
    items = (folder / "items.jsonl").read_text(encoding="utf-8")
    (folder / "items.jsonl").write_text(items.replace("Round", "round"), encoding="utf-8")
    capsys.readouterr()
    generator.main(tmp_path)
    assert "demo-en: items changed, params.csv is stale" in capsys.readouterr().err
    rewritten = _manifest(folder)
    assert (rewritten["model"], rewritten["calibration"]) == ("3pl", {"seed": 1})
    assert (folder / "items.jsonl").read_text(encoding="utf-8") == items


# ---------------------------------------------------------------- the open-answer pools

OPEN_LANGUAGES = {"demo-open": "zh", "demo-open-en": "en"}


def test_the_generator_reproduces_the_committed_open_pools(tmp_path: Path) -> None:
    script = POOLS / "make_demo_pool.py"
    subprocess.run(
        [sys.executable, str(script), "--out", str(tmp_path), "--open"],
        check=True,
        capture_output=True,
    )
    for name in OPEN_LANGUAGES:
        for file in ("items.jsonl", "pool.json"):
            assert (tmp_path / name / file).read_bytes() == (POOLS / name / file).read_bytes()


@pytest.mark.parametrize(("name", "language"), sorted(OPEN_LANGUAGES.items()))
def test_open_pools_mix_choice_and_open_items_with_keys_that_grade(
    name: str, language: str
) -> None:
    from synth.scoring import score_reply

    pool = read_questions(POOLS / name)
    assert pool.language == language and len(pool.items) == 320
    kinds = Counter(
        (item.type.value, item.max_score, item.numeric_answer is not None) for item in pool.items
    )
    assert kinds == {("single", 1, False): 160, ("open", 1, True): 80, ("open", 4, False): 80}
    for item in pool.items:
        if item.type is ItemType.OPEN:
            # Its own reference (with the key as the final number) earns full marks.
            key = item.numeric_answer
            final = "" if key is None else f"\nFinal answer: {key.value:g}"
            reply = item.references[0] + final
            assert score_reply(reply, item, language=language).points == item.max_score, item.id
