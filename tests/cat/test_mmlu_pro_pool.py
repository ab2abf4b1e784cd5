"""The shipped MMLU-Pro pool (item_pools/mmlu-pro, built by item_pools/build_mmlu_pro.py):
it loads by name and assesses, and it is what the shared data say, without a rebuild."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import numpy as np
import pytest

import cat
from itempool import ITEMS_GZ, LoadedPool, load_pool, read_reference_answers
from itempool.formats.responses import read_responses
from itempool.shipped import SHIPPED_POOLS

POOL = SHIPPED_POOLS / "mmlu-pro"


@pytest.fixture(scope="module")
def shipped() -> LoadedPool:
    return load_pool("mmlu-pro")


def test_the_pool_loads_by_name_and_assesses(shipped: LoadedPool) -> None:
    assert shipped.dir == POOL and (POOL / ITEMS_GZ).is_file()
    assert len(shipped.items) == 12032 and len(shipped.references) == 32
    manifest = shipped.manifest
    assert manifest.language == "en" and len(manifest.scenarios) == 14
    assert manifest.license == "MIT AND Apache-2.0"
    # the questions, the references' results, the worked examples of the protocol
    assert [s.license for s in manifest.sources] == ["MIT", "Apache-2.0", "MIT"]
    assert manifest.protocol is not None and manifest.protocol.name == "mmlu-pro-official"
    assert manifest.design_errors is not None and set(manifest.design_errors) >= {"irt"}
    assert manifest.calibration is not None and manifest.calibration["seed"] == manifest.seed
    result = cat.assess(shipped, cat.SimulatedExaminee(0.5, seed=1), length=6)
    assert result.n_items == 6 and result.pool.name == "mmlu-pro"
    acc = result.predicted_accuracy
    assert acc.low <= acc.value <= acc.high and 0 < acc.value < 1


def test_the_pool_is_the_shared_data(shipped: LoadedPool, shared_data: Path) -> None:
    data = shared_data / "mmlu-pro"
    with gzip.open(data / "items.csv.gz", "rt", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [i.id for i in shipped.items] == [r["question_id"] for r in rows]
    for item, row in zip(shipped.items, rows, strict=True):
        options = json.loads(row["options"])
        assert (item.answer, item.scenario) == (row["answer"], row["category"])
        assert list(item.options.values()) == options and item.question == row["question"]
        assert item.meta == {"question_id": int(row["question_id"]), "src": row["src"]}
    assert sorted(shipped.manifest.scenarios) == sorted({r["category"] for r in rows})
    with (data / "models.csv").open(encoding="utf-8") as fh:
        models = {r["model"]: r for r in csv.DictReader(fh)}
    references = {r.subject_id: r for r in shipped.references}
    assert set(references) == set(models)
    for name, row in models.items():
        ref = references[name]
        assert ref.n_answered == int(row["n_items_answered"])
        assert ref.accuracy is not None and abs(ref.accuracy - float(row["accuracy"])) <= 5e-5
    # The stored answers are the shared matrix itself.
    ids = tuple(i.id for i in shipped.items)
    stored = read_reference_answers(POOL, ids)
    shared = read_responses(data / "responses.csv.gz").on_items(ids)
    assert stored is not None and stored.subject_ids == shared.subject_ids
    assert np.array_equal(stored.values, shared.values)
