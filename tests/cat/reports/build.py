"""An ``AssessmentResult`` to report on, built as RESULT.json would hold it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cat.assessment.result import AssessmentResult
from irt.simulate import random_params

PARAMS = random_params(60, np.random.default_rng(0), "3pl")
MODEL = "evil<model>&co"
SCENARIOS = ("dosing", "diagnosis", "triage")


def result_data(n_items: int = 30, n_refs: int = 12, scenarios: bool = True) -> dict[str, Any]:
    """The fields of a result: θ 0.41 (SE 0.12) among ``n_refs`` reference subjects."""
    rng = np.random.default_rng(1)
    theta, se = 0.41, 0.12
    refs: list[dict[str, Any]] = [
        {"subject_id": f"ref-{k:02d}", "theta": float(t), "se": 0.1, "p_above": 0.5}
        for k, t in enumerate(rng.normal(0, 1, n_refs))
    ]
    refs.sort(key=lambda r: -r["theta"])  # strongest first, as cat.assessment.summary writes them
    position = sum(1 for r in refs if r["theta"] > theta) + 1
    items = [
        {
            "id": f"q{k}",
            "scenario": SCENARIOS[k % 3],
            "response": int(rng.random() < 0.6),
            "theta_after": float(theta + rng.normal(0, 1) / (k + 1)),
            "se_after": 1.5 / math.sqrt(k + 1),
        }
        for k in range(n_items)
    ]
    data: dict[str, Any] = {
        "model": MODEL,
        "pool": {"name": "demo", "version": "1", "n_items": PARAMS.n_items, "path": "pool/demo"},
        "settings": {
            "policy": "mfi",
            "estimator": "eap",
            "max_items": n_items or 1,
            "base_url": "<b>",
            "package_version": "0.1.0",
        },
        "seed": 0,
        "theta": theta,
        "se": se,
        "theta_interval": {"low": 0.21, "high": 0.61, "level": 0.9},
        "n_items": n_items,
        "n_skipped": 0,
        "stop_reason": "max_length",
        "predicted_accuracy": {"value": 0.634, "low": 0.60, "high": 0.66},
        "accuracy_interval": {"method": "theta and the unseen answers' chance"},
        "reference_offset": 0.0,
        "person_fit": {"lz": 0.35, "flagged": False, "threshold": -1.645},
        "rank": {"position": position, "of": n_refs + 1, "above": refs},
        "items": items,
        "created": "2026-11-22T05:30:00+00:00",
        "usage": {
            "prompt_tokens": 12345,
            "completion_tokens": 2345,
            "calls": 30,
            "calls_from_store": 0,
            "pool_items": PARAMS.n_items,
        },
    }
    if scenarios:
        data["scenarios"] = {
            name: {"value": 0.7, "low": 0.65, "high": 0.74, "n_given": 10} for name in SCENARIOS
        }
    return data


def make_result(**kwargs: Any) -> AssessmentResult:
    return AssessmentResult.model_validate(result_data(**kwargs))
