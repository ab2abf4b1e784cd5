"""Simulated adaptive tests, vectorised across examinees.

All examinees advance in lock-step: one selection, one answer and one estimate per step
for every examinee still being tested, as array operations — no Python loop per
examinee per item.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from cat.answers import Answers
from cat.errors import CatError
from cat.estimators import AbilityEstimator
from cat.selection import PoolInfo, SelectionPolicy, SelectionState
from cat.stopping import StoppingRule
from irt.models import ItemParams
from irt.types import FloatArray


@dataclass(frozen=True)
class SimulationResult:
    """One simulated test per examinee."""

    theta_true: FloatArray
    theta_hat: FloatArray
    se: FloatArray
    items: npt.NDArray[np.int_]  # (E, L) item positions in the pool, −1 after the end
    n_items: npt.NDArray[np.int_]
    stop_reason: list[str]
    seconds: float

    def exposure(self, n_pool: int) -> FloatArray:
        """Share of examinees who were given each item of the pool."""
        given = self.items[self.items >= 0]
        return np.bincount(given, minlength=n_pool) / max(len(self.theta_true), 1)


def simulate_cat(
    params: ItemParams,
    theta_true: FloatArray,
    policy: SelectionPolicy,
    estimator: AbilityEstimator,
    stopping: StoppingRule,
    rng: np.random.Generator,
    pool: PoolInfo | None = None,
    start_theta: float = 0.0,
    batch_size: int = 1,
) -> SimulationResult:
    """Give each examinee (true abilities ``theta_true``) an adaptive test drawn from
    ``params``; answers are drawn from the model with ``rng``.

    With ``batch_size`` k > 1, k items are chosen per round at the same estimate (as
    when k API calls run at once) and θ is re-estimated after the k answers.
    """
    theta_true = np.asarray(theta_true, dtype=np.float64)
    if theta_true.ndim != 1 or theta_true.size == 0:
        raise CatError("theta_true must be a non-empty 1-D array")
    if batch_size < 1:
        raise CatError(f"batch_size must be at least 1, got {batch_size}")
    t0 = time.perf_counter()
    pool = pool or PoolInfo.build(params)
    n_exam, n_pool = len(theta_true), params.n_items
    length = min(stopping.max_items, n_pool)
    available = np.ones((n_exam, n_pool), dtype=bool)
    given = np.zeros((n_exam, n_pool), dtype=bool)
    items = np.full((n_exam, length), -1, dtype=np.int_)
    right = np.zeros((n_exam, length))
    theta = np.full(n_exam, float(start_theta))
    se = np.full(n_exam, np.inf)
    active = np.ones(n_exam, dtype=bool)
    reasons: list[str] = [""] * n_exam
    n_done = 0  # lock-step: every active examinee has answered this many items
    while n_done < length:
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        for _ in range(min(batch_size, length - n_done)):
            state = SelectionState(theta=theta[idx], available=available[idx], given=given[idx])
            chosen = policy.select(pool, state, rng)
            if not available[idx, chosen].all():
                raise CatError("the selection policy chose an item that was not available")
            available[idx, chosen] = False
            given[idx, chosen] = True
            z = params.a[chosen] * (theta_true[idx] - params.b[chosen])
            prob = params.c[chosen] + (params.d[chosen] - params.c[chosen]) / (1 + np.exp(-z))
            items[idx, n_done] = chosen
            right[idx, n_done] = rng.random(idx.size) < prob
            n_done += 1
        answers = Answers.gather(params, items[idx, :n_done], right[idx, :n_done])
        theta[idx], se[idx] = estimator.estimate(answers, theta[idx])
        why = stopping.reasons(
            np.full(idx.size, float(n_done)), se[idx], available[idx].sum(axis=1).astype(float)
        )
        for k in np.flatnonzero(why != None):  # noqa: E711
            reasons[idx[k]] = str(why[k])
            active[idx[k]] = False
    return SimulationResult(
        theta_true=theta_true,
        theta_hat=theta,
        se=se,
        items=items,
        n_items=(items >= 0).sum(axis=1),
        stop_reason=reasons,
        seconds=time.perf_counter() - t0,
    )
