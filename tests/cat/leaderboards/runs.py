"""Results of ``cat.assess`` on the demo pool to rank: simulated models, a short test
each, made once per test session (the leaderboard only reads them)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import cat
from cat.assessment.result import AssessmentResult

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "item_pools" / "demo"
DEMO_EN = ROOT / "item_pools" / "demo-en"
#: True abilities, far enough apart for a 20-item test to order them.
THETAS = (-1.0, 0.4, 1.5)


@cache
def assessed(theta: float, length: int = 20, seed: int = 0, pool: Path = DEMO) -> AssessmentResult:
    """``sim:THETA`` assessed on ``pool``."""
    return cat.assess(pool, cat.SimulatedExaminee(theta, seed=seed), length=length, seed=seed)


def write(folder: Path, name: str, result: AssessmentResult | dict[str, Any]) -> Path:
    """``result`` (or its JSON as a dict, changed by a test) as ``folder/name``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    data = result if isinstance(result, dict) else result.model_dump(mode="json")
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def with_usage(
    result: AssessmentResult, model: str, prompt: int, completion: int
) -> dict[str, Any]:
    """``result``'s JSON as a live model's: named ``model``, with calls and tokens."""
    data = result.model_dump(mode="json")
    data["model"] = model
    data["truth"] = None
    data["usage"] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "calls": result.n_items,
        "calls_from_store": 2,
        "pool_items": result.pool.n_items,
    }
    return data
