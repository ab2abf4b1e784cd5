"""Pool health: every flag of ``cat.pools.fit`` found where it was planted, and rarely
elsewhere."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cat.errors import CatError
from cat.pools.calibration import record_calibration
from cat.pools.fit import (
    FitSettings,
    ItemRowWithDrift,
    PoolFitResult,
    check_pool_fit,
    pool_priors,
    read_choices,
)
from irt.models import ItemParams, probability
from irt.priors import ItemPriors
from irt.responses import ResponseMatrix
from irt.simulate import random_params
from itempool import LoadedPool, PoolItem, load_pool
from itempool.formats.responses import write_jsonl
from tests.irt.test_drift import answers_with_shift
from tests.synth.pools import write_pool

N_ITEMS, N_SUBJECTS = 200, 150
WRONG_KEY = np.arange(0, 5)  # scored key is a distractor the strong avoid
ALL_RIGHT = 5
LOW_SLOPE_ITEM = 6
HIGH_FLOOR_ITEM = 7
LEAKED = np.arange(10, 15)  # much easier for the later subjects
SETTINGS = FitSettings(replicates=20, seed=1)


def _item(k: int) -> PoolItem:
    return PoolItem(
        id=f"q{k:03d}",
        question=f"Health check question {k}: which option is right?",
        options={"A": "1", "B": "2", "C": "3", "D": "4"},
        answer="A",
    )


def _answers(
    true: ItemParams, theta: np.ndarray, rng: np.random.Generator, prefix: str, leaked: bool
) -> tuple[ResponseMatrix, dict[str, dict[str, str]]]:
    """0/1 answers and the options chosen: the key A when right; when wrong, C on the
    wrong-key items (the option the strong pick) and B or D elsewhere."""
    p = probability(theta, true)
    p[:, WRONG_KEY] = 0.15 + 0.7 / (1 + np.exp(1.5 * (theta[:, None] - true.b[WRONG_KEY])))
    if leaked:
        easier = replace(true, b=true.b - 2.5)
        p[:, LEAKED] = probability(theta, easier)[:, LEAKED]
    right = rng.random(p.shape) < p
    subjects = tuple(f"{prefix}{k:03d}" for k in range(len(theta)))
    choices: dict[str, dict[str, str]] = {}
    for i, sid in enumerate(subjects):
        picked = {}
        for j, item in enumerate(true.item_ids):
            wrong = "C" if j in WRONG_KEY else ("B" if rng.random() < 0.5 else "D")
            picked[item] = "A" if right[i, j] else wrong
        choices[sid] = picked
    matrix = ResponseMatrix(subjects, true.item_ids, right.astype(np.int8))
    return matrix, choices


@pytest.fixture(scope="module")
def setting(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("health")
    rng = np.random.default_rng(0)
    ids = tuple(f"q{k:03d}" for k in range(N_ITEMS))
    true = replace(random_params(N_ITEMS, rng), item_ids=ids)
    b = true.b.copy()
    b[ALL_RIGHT] = -9.0
    # c inside its prior's central 99% (0.03 ... 0.44), so that only the planted one is odd
    true = replace(true, b=b, c=np.clip(true.c, 0.05, 0.25))
    # The pool's parameters are the truth, except two planted oddities.
    a, c, pool_b = true.a.copy(), true.c.copy(), true.b.copy()
    a[LOW_SLOPE_ITEM], c[HIGH_FLOOR_ITEM], pool_b[ALL_RIGHT] = 0.1, 0.48, -3.5
    pool_params = replace(true, a=a, c=c, b=pool_b)
    pool = write_pool(tmp / "pool", [_item(k) for k in range(N_ITEMS)])
    provenance = {"method": "em", "priors": ItemPriors().describe()}
    record_calibration(pool, pool_params, [], provenance)
    earlier, choices = _answers(true, rng.normal(size=N_SUBJECTS), rng, "old", leaked=False)
    later, _ = _answers(true, rng.normal(size=N_SUBJECTS), rng, "new", leaked=True)
    write_jsonl(earlier, tmp / "earlier.jsonl")
    write_jsonl(later, tmp / "later.jsonl")
    (tmp / "choices.jsonl").write_text(
        "".join(json.dumps({"subject_id": s, "choices": c}) + "\n" for s, c in choices.items())
    )
    return {
        "tmp": tmp,
        "pool": load_pool(pool),
        "earlier": earlier,
        "later": later,
        "choices": choices,
    }


def _flagged(report: PoolFitResult, reason: str) -> set[int]:
    return {
        k for k, row in enumerate(report.item_rows) if any(f.reason == reason for f in row.flags)
    }


def test_planted_items_are_flagged_with_their_reasons(setting: dict[str, Any]) -> None:
    report = check_pool_fit(setting["pool"], setting["earlier"], SETTINGS)
    assert _flagged(report, "all_right") == {ALL_RIGHT}
    assert _flagged(report, "low_discrimination") == {LOW_SLOPE_ITEM}
    assert _flagged(report, "c_at_prior_edge") == {HIGH_FLOOR_ITEM}
    broken = _flagged(report, "misfit") | _flagged(report, "key_suspect")
    assert len(broken & set(WRONG_KEY)) >= 4
    # Without chosen options the key check reads the item–θ correlation.
    assert len(_flagged(report, "key_suspect") & set(WRONG_KEY)) >= 3
    clean = set(range(20, N_ITEMS))
    assert len(_flagged(report, "misfit") & clean) <= 2
    assert report.settings.seed == 1 and report.settings.replicates == 20
    assert report.items_tested == N_ITEMS and report.warning is None


def test_chosen_options_name_the_preferred_distractor(setting: dict[str, Any]) -> None:
    report = check_pool_fit(
        setting["pool"], setting["earlier"], SETTINGS, choices=setting["choices"]
    )
    keyed = _flagged(report, "key_suspect")
    assert len(keyed & set(WRONG_KEY)) >= 4 and not keyed - set(WRONG_KEY)
    detail = next(f.detail for f in report.item_rows[0].flags if f.reason == "key_suspect")
    assert detail.startswith("distractor C chosen by") and "the key A" in detail


def test_leaked_items_became_easier(setting: dict[str, Any]) -> None:
    report = check_pool_fit(
        setting["pool"], setting["later"], SETTINGS, baseline=setting["earlier"]
    )
    easier = _flagged(report, "easier")
    assert len(easier & set(LEAKED)) >= 4
    assert len(easier - set(LEAKED)) + len(_flagged(report, "harder")) <= 2
    row = report.item_rows[int(LEAKED[0])]
    assert isinstance(row, ItemRowWithDrift) and report.drift is not None
    assert row.b_later < row.b_earlier and report.drift.baseline_subjects == 150


def test_the_pool_priors_come_from_its_provenance(setting: dict[str, Any]) -> None:
    pool: LoadedPool = setting["pool"]
    assert pool.params is not None
    assert pool_priors(pool, pool.params) == ItemPriors()
    bare = replace(pool, manifest=pool.manifest.model_copy(update={"calibration": None}))
    assert pool_priors(bare, pool.params) == ItemPriors.default_for("3pl")


def test_clear_errors(setting: dict[str, Any], tmp_path: Path) -> None:
    pool: LoadedPool = setting["pool"]
    stranger = ResponseMatrix(("s",), ("zz",), np.array([[1]], dtype=np.int8))
    with pytest.raises(CatError, match="none of the responses' items is in the pool"):
        check_pool_fit(pool, stranger, SETTINGS)
    with pytest.raises(CatError, match="no parameters"):
        check_pool_fit(replace(pool, params=None), setting["earlier"], SETTINGS)
    with pytest.raises(CatError, match="no subject of the chosen options"):
        check_pool_fit(pool, setting["later"], SETTINGS, choices=setting["choices"])
    with pytest.raises(CatError, match="unknown correction"):
        FitSettings(correction="fdr")
    bad = tmp_path / "choices.jsonl"
    bad.write_text('{"subject_id": "a", "choices": {"q000": "A"}}\n{"subject_id": "b"}\n')
    with pytest.raises(CatError, match=r"choices\.jsonl:2"):
        read_choices(bad)


def test_many_leaked_items_do_not_hide_themselves(setting: dict[str, Any]) -> None:
    """A quarter of the items 1.5 easier for the later subjects: with θ scored on every
    item the later group looks abler and the rest look harder; one round of
    purification (θ from the items that did not drift) finds the leaked and clears most
    of the rest. Here 46 of 50 found and 2 clean items flagged; the first pass alone
    called 20 clean items 'harder'. Over seeds 7–14: 45–50 found, 0–3 clean items
    flagged (8 on one seed: the correction controls the false discovery rate, not a
    count)."""
    pool: LoadedPool = setting["pool"]
    assert pool.params is not None
    params = pool.params
    rng = np.random.default_rng(7)
    leaked = rng.choice(np.arange(20, N_ITEMS), 50, replace=False)
    earlier = answers_with_shift(params, leaked, 0.0, 200, rng, "a")
    later = answers_with_shift(params, leaked, 1.5, 200, rng, "b")
    report = check_pool_fit(pool, later, SETTINGS, baseline=earlier)
    found = _flagged(report, "easier")
    assert len(found & set(leaked)) >= 44
    assert len(found - set(leaked)) + len(_flagged(report, "harder")) <= 4
    assert report.drift is not None and report.drift.scored_on_items <= N_ITEMS - 44
