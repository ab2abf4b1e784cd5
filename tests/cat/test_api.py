"""The library's public API: the README's five lines, typed results, a light import."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import cat

ROOT = Path(__file__).resolve().parents[2]
DEMO_EN = ROOT / "item_pools" / "demo-en"


def test_the_readme_snippet_runs_and_dumps_result_json(tmp_path: Path) -> None:
    pool = cat.load_pool(DEMO_EN)
    result = cat.assess(pool, cat.SimulatedExaminee(theta=0.8, seed=1), length=100)
    assert result.rank is not None and result.truth is not None
    print(result.theta, result.se, result.predicted_accuracy.value, result.rank.position)
    assert result.n_items == 100 and len(result.items) == 100
    assert abs(result.theta - 0.8) < 3 * result.se
    assert abs(result.predicted_accuracy.value - result.truth.accuracy) < 0.05
    dumped = result.model_dump(mode="json")
    for key in ("theta", "se", "n_items", "predicted_accuracy", "rank", "items"):
        assert key in dumped
    assert set(dumped["predicted_accuracy"]) == {"value", "low", "high"}
    assert set(dumped["rank"]) == {"position", "of", "above"}
    assert {"id", "response", "theta_after"} <= set(dumped["items"][0])
    # The same seed gives the same test, item for item.
    again = cat.assess(pool, cat.SimulatedExaminee(theta=0.8, seed=1), length=100)
    assert [i.id for i in again.items] == [i.id for i in result.items]
    # RESULT.json of `cat assess` is this dump.
    out = tmp_path / "result.json"
    result.write_json(out)
    assert json.loads(out.read_text(encoding="utf-8")) == dumped


def test_replay_examinee_answers_from_a_response_file(tmp_path: Path) -> None:
    pool = cat.load_pool(DEMO_EN)
    assert pool.params is not None
    ids = pool.params.item_ids[:50]
    line = {"subject_id": "m1", "responses": {i: k % 2 for k, i in enumerate(ids)}}
    path = tmp_path / "answers.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    result = cat.assess(pool, cat.ReplayExaminee(path, "m1"), length=80)
    # The subject answered 50 items: the test can give no more, the rest are skipped.
    assert result.n_items == 50 and result.truth is not None
    assert result.truth.accuracy == pytest.approx(0.5)
    with pytest.raises(cat.CatError, match="no subject 'nobody'"):
        cat.assess(pool, cat.ReplayExaminee(path, "nobody"), length=10)


def test_bad_settings_are_catalogued_errors() -> None:
    pool = cat.load_pool(DEMO_EN)
    with pytest.raises(cat.CatError, match="minimum length"):
        cat.assess(pool, cat.SimulatedExaminee(0.0), length=10, min_length=20)
    with pytest.raises(cat.CatError, match="policy"):
        cat.assess(pool, cat.SimulatedExaminee(0.0), length=10, policy="best")
    with pytest.raises(cat.CatError, match="needs base_url"):
        cat.EndpointExaminee("some-model")
    with pytest.raises(cat.CatError, match=r"pool\.json"):
        cat.load_pool(ROOT / "examples")


def test_every_public_name_resolves() -> None:
    for name in cat.__all__:
        assert getattr(cat, name) is not None, name
    with pytest.raises(AttributeError):
        cat.no_such_name  # noqa: B018


def test_importing_cat_loads_nothing_heavy() -> None:
    """The console script imports ``cat`` before deciding whether a call is for the
    system cat; that must not pull in numpy, pydantic or typer."""
    heavy = "('numpy', 'pydantic', 'typer', 'scipy')"
    code = f"import sys, cat; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
