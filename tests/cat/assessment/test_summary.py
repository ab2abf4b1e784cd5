"""The end-of-test summary: intervals, predicted accuracy, rank."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from cat.assessment.session import AssessmentSession, SessionConfig
from cat.assessment.summary import Reference, summarize
from cat.engine.selection import PoolInfo
from irt.models import probability
from irt.simulate import random_params
from itempool.prediction_errors import PredictionErrors

PARAMS = random_params(400, np.random.default_rng(0), "3pl")
POOL = PoolInfo.build(PARAMS)
SCENARIO = tuple(j % 4 for j in range(400))


def _summary(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """The summary as RESULT.json has it (absent keys absent)."""
    return summarize(*args, **kwargs).model_dump(mode="json")


def _session(theta: float, n: int = 80, seed: int = 1) -> AssessmentSession:
    session = AssessmentSession(
        PARAMS, SessionConfig(max_items=n, content_balancing=True, seed=seed), SCENARIO, POOL
    )
    rng = np.random.default_rng(seed)
    index = {item: j for j, item in enumerate(PARAMS.item_ids)}
    while not session.done:
        for item in session.next_items():
            p = probability([theta], PARAMS)[0, index[item]]
            session.record(item, int(rng.random() < p))
    return session


def test_summary_values_and_intervals() -> None:
    session = _session(0.8)
    out = _summary(session)
    assert out["theta_interval"]["low"] < out["theta"] < out["theta_interval"]["high"]
    acc = out["predicted_accuracy"]
    assert acc["low"] <= acc["value"] <= acc["high"]
    true_acc = float(probability([0.8], PARAMS)[0].mean())
    assert acc["value"] == pytest.approx(true_acc, abs=0.05)
    assert set(out["scenarios"]) == {"0", "1", "2", "3"}
    assert sum(s["n_given"] for s in out["scenarios"].values()) == 80
    for s in out["scenarios"].values():
        assert s["low"] <= s["value"] <= s["high"]
    assert out["accuracy_interval"] == {"method": "theta and the unseen answers' chance"}
    # The per-scenario intervals are not cross-fitted, and say so.
    assert "not cross-fitted" in out["scenario_interval"]


def test_cross_fitted_errors_widen_only_where_narrower() -> None:
    session = _session(0.8)
    plain = _summary(session)["predicted_accuracy"]
    tiny = PredictionErrors(folds=3, seed=0, policy="mfi", errors={"80": [0.001, -0.001]})
    assert _summary(session, prediction_errors=tiny)["predicted_accuracy"] == plain
    wide = PredictionErrors(folds=3, seed=0, policy="mfi", errors={"80": [0.2, -0.3, 0.1]})
    out = _summary(session, prediction_errors=wide)
    acc = out["predicted_accuracy"]
    assert acc["value"] == plain["value"]
    assert acc["low"] == pytest.approx(plain["value"] - 0.3)
    assert acc["high"] == pytest.approx(min(1.0, plain["value"] + 0.3))
    assert out["accuracy_interval"]["half_width"] == pytest.approx(0.3)


def test_rank_and_p_above() -> None:
    session = _session(0.5, n=120)
    refs = [
        Reference("weak", -1.5, 0.05),
        Reference("close", session.theta, 0.05),
        Reference("strong", 2.0, 0.05),
    ]
    rank = _summary(session, refs)["rank"]
    assert rank["of"] == 4 and rank["position"] in (2, 3)
    p = {r["subject_id"]: r["p_above"] for r in rank["above"]}
    assert p["weak"] > 0.99 and p["strong"] < 0.01
    assert p["close"] == pytest.approx(0.5, abs=1e-9)
    assert [r["subject_id"] for r in rank["above"]] == ["strong", "close", "weak"]


def test_references_with_accuracy_calibrate_the_prediction() -> None:
    session = _session(0.3, n=60)
    plain = _summary(session)
    assert plain["reference_offset"] == 0.0
    # references that all score 0.04 below what the model expects at their θ
    thetas = [-1.0, 0.0, 1.0]
    refs = [
        Reference(f"r{k}", t, 0.05, float(probability([t], PARAMS)[0].mean()) - 0.04)
        for k, t in enumerate(thetas)
    ]
    out = _summary(session, refs)
    assert out["reference_offset"] == pytest.approx(0.04, abs=1e-9)
    n_rest = PARAMS.n_items - 60
    shift = plain["predicted_accuracy"]["value"] - out["predicted_accuracy"]["value"]
    assert shift == pytest.approx(0.04 * n_rest / PARAMS.n_items, abs=1e-3)  # clipping aside
    assert out["theta"] == plain["theta"]


def test_person_fit_is_reported_and_flags_a_memorised_pattern() -> None:
    session = _session(0.0, n=80)
    fit = _summary(session)["person_fit"]
    assert fit["lz"] is not None and fit["lz"] > -3 and fit["threshold"] == -1.645
    # A weak model that knows the answers to the hard items (a leak), on items drawn at
    # random so that the hard ones are asked: its pattern is flagged.
    leaked = AssessmentSession(
        PARAMS, SessionConfig(max_items=120, policy="random"), pool_info=POOL
    )
    p = dict(zip(PARAMS.item_ids, probability([-1.5], PARAMS)[0], strict=True))
    hard = {i for i, b in zip(PARAMS.item_ids, PARAMS.b, strict=True) if b > 0.5}
    rng = np.random.default_rng(3)
    while not leaked.done:
        for item in leaked.next_items():
            leaked.record(item, 1 if item in hard else int(rng.random() < p[item]))
    assert _summary(leaked)["person_fit"]["flagged"]
