"""A small calibrated pool with its true item parameters, for tests that assess a model
served by the local server (``synth.local_server``) under generation settings."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from cat.pools.calibration import record_calibration
from irt.models import ItemParams
from irt.simulate import random_params, simulate_responses
from itempool import PoolItem
from tests.synth.pools import write_pool

N_ITEMS = 90
SCENARIOS = ("dosing", "units", "rates")


def live_items() -> list[PoolItem]:
    """The pool's items: three scenarios, a distinct question each."""
    return [
        PoolItem(
            id=f"g{k:03d}",
            scenario=SCENARIOS[k % 3],
            question=f"Generation test question {k}: which of the options is right?",
            options={"A": "alpha", "B": "beta", "C": "gamma", "D": "delta"},
            answer="ABCD"[k % 4],
        )
        for k in range(N_ITEMS)
    ]


def live_pool(folder: Path) -> tuple[Path, ItemParams]:
    """The pool written into ``folder``, calibrated with its true parameters and 20
    references."""
    items = live_items()
    params = random_params(N_ITEMS, np.random.default_rng(0), "3pl")
    params = replace(params, item_ids=tuple(i.id for i in items))
    pool = write_pool(folder, items)
    theta = np.linspace(-2, 2, 20)
    answers = simulate_responses(params, theta, np.random.default_rng(1))
    rows = [
        {
            "subject_id": f"ref{k:02d}",
            "theta": float(t),
            "se": 0.1,
            "accuracy": float(answers.accuracy()[k]),
            "n_answered": N_ITEMS,
        }
        for k, t in enumerate(theta)
    ]
    record_calibration(pool, params, rows, {"method": "true parameters (test)"})
    return pool, params


def true_irt(params: ItemParams) -> dict[str, tuple[float, float, float]]:
    """The pool's parameters as the local server's true item parameters."""
    rows = zip(params.item_ids, params.a, params.b, params.c, strict=True)
    return {i: (float(a), float(b), float(c)) for i, a, b, c in rows}
