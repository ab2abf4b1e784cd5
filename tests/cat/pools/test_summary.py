"""``summarize_pool``: the figures ``cat pool info`` prints and writes with ``--json``."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from cat.cli.app import app
from cat.pools.loading import load_pool
from cat.pools.summary import (
    CURVE_THETA,
    ParameterStats,
    PoolSummary,
    information_curve,
    summarize_pool,
)
from irt import models
from irt.models import ModelKind
from tests.itempool.test_format import ITEM_IDS, PARAM_ROWS, write_clean_pool

runner = CliRunner()


def test_fields_hold_the_pool_s_figures(tmp_path: Path) -> None:
    summary = summarize_pool(load_pool(write_clean_pool(tmp_path / "pool")))
    assert summary.pool.model_dump() == {
        "dir": str(tmp_path / "pool"),
        "name": "tiny",
        "version": "2",
        "language": "en",
        "model": ModelKind.THREE_PL,  # inferred from params.csv: c > 0
        "n_items": 5,
        "item_types": None,  # a pool of 0/1 items
    }
    assert summary.items.by_scenario == {
        "dosing": {"single": 2, "multi": 0, "order": 0, "open": 0, "total": 2},
        "units": {"single": 2, "multi": 1, "order": 0, "open": 0, "total": 3},
    }
    assert summary.items.by_type == {"single": 4, "multi": 1, "order": 0, "open": 0}
    assert summary.parameters is not None
    for name, column in (("a", 0), ("b", 1), ("c", 2)):
        values = np.array([PARAM_ROWS[i][column] for i in ITEM_IDS])
        stats = getattr(summary.parameters, name)
        expected = (values.mean(), values.std(), values.min(), values.max())
        np.testing.assert_allclose((stats.mean, stats.sd, stats.min, stats.max), expected)
    assert (summary.parameters.c.min, summary.parameters.c.max) == (0.0, 0.25)  # as read
    info = summary.information
    assert info is not None and info.theta == list(CURVE_THETA)
    params = load_pool(tmp_path / "pool").params
    assert params is not None
    np.testing.assert_allclose(info.values, models.test_information(np.array(CURVE_THETA), params))
    assert info.max_value >= max(info.values)
    ref = summary.reference
    assert ref is not None and (ref.count, ref.theta_min, ref.theta_max) == (3, -1.2, 1.7)
    assert [(r.subject_id, r.accuracy) for r in ref.top] == [
        ("m-high", 0.9),
        ("m-mid", None),
        ("m-low", 0.3),
    ]


def test_an_uncalibrated_pool_has_no_parameters(tmp_path: Path) -> None:
    summary = summarize_pool(load_pool(write_clean_pool(tmp_path / "pool", calibrated=False)))
    assert summary.pool.model is None and summary.pool.n_items == 5
    assert summary.parameters is None and summary.information is None
    assert summary.reference is None


@pytest.mark.parametrize("calibrated", [True, False])
def test_dump_is_what_cat_pool_info_writes(tmp_path: Path, calibrated: bool) -> None:
    pool = write_clean_pool(tmp_path / "pool", calibrated=calibrated)
    out = tmp_path / "info.json"
    result = runner.invoke(app, ["pool", "info", str(pool), "--json", str(out)])
    assert result.exit_code == 0, result.output
    written = json.loads(out.read_text(encoding="utf-8"))
    dumped = summarize_pool(load_pool(pool)).model_dump(mode="json")
    assert written == dumped
    assert set(dumped) == {
        "pool",
        "items",
        "parameters",
        "information",
        "reference",
        "multidimensional",
        "protocol",
    }
    assert dumped["multidimensional"] is None  # a 3PL pool has no multidimensional model
    assert dumped["protocol"] is None  # nor a recorded protocol
    assert set(dumped["pool"]) == {
        "dir",
        "name",
        "version",
        "language",
        "model",
        "n_items",
        "item_types",
    }
    assert set(dumped["items"]) == {"by_scenario", "by_type"}
    if calibrated:
        assert dumped["pool"]["model"] == "3pl"
        assert set(dumped["parameters"]) == {"a", "b", "c"}
        assert set(dumped["parameters"]["c"]) == {"mean", "sd", "min", "max"}
        assert set(dumped["information"]) == {"theta", "values", "max_theta", "max_value"}
        assert set(dumped["reference"]) == {"count", "theta_min", "theta_max", "top"}
        assert set(dumped["reference"]["top"][0]) == {"subject_id", "theta", "se", "accuracy"}
    # and back: the file is a valid summary
    assert PoolSummary.model_validate(written).model_dump(mode="json") == dumped


def test_models_refuse_unknown_keys() -> None:
    with pytest.raises(ValidationError, match="Extra inputs"):
        ParameterStats.model_validate({"mean": 0, "sd": 1, "min": 0, "max": 1, "median": 0})


def test_the_peak_is_found_beyond_the_shown_curve(tmp_path: Path) -> None:
    # Every item hard (b = 4.5): information peaks above θ = 3, where the curve stops.
    params = load_pool(write_clean_pool(tmp_path / "pool")).params
    assert params is not None
    hard = replace(params, b=np.full(params.n_items, 4.5), c=np.zeros(params.n_items))
    curve = information_curve(hard)
    assert 4.0 <= curve.max_theta <= 5.0 and curve.max_value > max(curve.values)
