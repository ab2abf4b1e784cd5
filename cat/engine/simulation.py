"""Adaptive tests for a batch of examinees at once: simulated or replayed.

All examinees advance together: one selection, one answer and one estimate per round
for every examinee still being tested, as array operations — no Python loop per
examinee per item. Answers come either from the model (``simulate_cat``) or from a
recorded response matrix (``replay_cat``, where an item the examinee never answered
is never asked).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import cast

import numpy as np
import numpy.typing as npt

from cat.engine.answers import Answers
from cat.engine.estimators import AbilityEstimator, MLEstimator
from cat.engine.exposure import SympsonHetter
from cat.engine.graded_estimators import GradedAnswers, GradedEstimator
from cat.engine.selection import (
    MaxInfo,
    PoolInfo,
    PoolParams,
    SelectionPolicy,
    SelectionState,
    is_scored,
)
from cat.engine.stopping import StoppingRule
from cat.errors import CatError
from irt.mixed import MixedResponses
from irt.polytomous_responses import PolytomousResponses
from irt.responses import ResponseMatrix
from irt.types import BoolArray, FloatArray, IntArray

#: Gives the answers (1/0, or scores 0..m on a scored pool) of examinees ``rows`` to
#: items ``chosen`` (one each).
Respond = Callable[[IntArray, IntArray], FloatArray]
#: (θ, SE) from item positions (E, L; −1 = none yet), their answers and a warm start.
Estimate = Callable[[IntArray, FloatArray, FloatArray], tuple[FloatArray, FloatArray]]


@dataclass(frozen=True)
class CATDesign:
    """How the adaptive test runs: the strategies and how many items per round.

    With ``batch_size`` k > 1, k items are chosen per round at the same estimate (as when
    k API calls run at once) and θ is re-estimated after the k answers. ``exposure``
    screens each examinee's pool by Sympson–Hetter before the test starts.
    """

    policy: SelectionPolicy = field(default_factory=MaxInfo)
    # A GradedEstimator on a pool of scored items (PolytomousParams, MixedParams).
    estimator: AbilityEstimator | GradedEstimator = field(default_factory=MLEstimator)
    stopping: StoppingRule = field(default_factory=StoppingRule)
    batch_size: int = 1
    start_theta: float = 0.0
    exposure: SympsonHetter | None = None

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise CatError(f"batch_size must be at least 1, got {self.batch_size}")


@dataclass(frozen=True)
class CATResult:
    """One adaptive test per examinee."""

    theta_hat: FloatArray
    se: FloatArray
    items: npt.NDArray[np.int_]  # (E, L) item positions in the pool, −1 after the end
    right: FloatArray  # (E, L) the answers (scores on a scored pool), 0 after the end
    n_items: npt.NDArray[np.int_]
    stop_reason: list[str]
    seconds: float
    theta_true: FloatArray | None = None  # known in simulations
    # (E, L) each item's chance of a right answer at the estimate it was chosen at, before
    # its answer (the prequential chances ``cat.designs.flatness.slope_z`` reads); NaN
    # after the end. None on a pool of scored items.
    chances: FloatArray | None = None

    def exposure(self, n_pool: int) -> FloatArray:
        """Share of examinees who were given each item of the pool."""
        given = self.items[self.items >= 0]
        return np.bincount(given, minlength=n_pool) / max(len(self.theta_hat), 1)


def simulate_cat(
    params: PoolParams,
    theta_true: FloatArray,
    design: CATDesign,
    rng: np.random.Generator,
    pool: PoolInfo | None = None,
) -> CATResult:
    """Give each examinee (true abilities ``theta_true``) an adaptive test drawn from
    ``params``; answers (scores, on a pool of scored items) are drawn from the model
    with ``rng``."""
    theta_true = np.asarray(theta_true, dtype=np.float64)
    if theta_true.ndim != 1 or theta_true.size == 0:
        raise CatError("theta_true must be a non-empty 1-D array")

    def respond(rows: IntArray, chosen: IntArray) -> FloatArray:
        return params.draw(theta_true[rows], chosen, rng)

    can_answer = np.ones((theta_true.size, params.n_items), dtype=bool)
    result = run_cat(params, can_answer, respond, design, rng, pool)
    return replace(result, theta_true=theta_true)


def draw_scores(
    params: PoolParams,
    theta: FloatArray,
    items: IntArray,
    rng: np.random.Generator,
) -> FloatArray:
    """One score per (θ, item) pair, drawn from the item's category probabilities (from
    its density, for a continuous item of a mixed pool): ``ParameterSet.draw``."""
    return params.draw(theta, items, rng)


def replay_cat(
    params: PoolParams,
    responses: ResponseMatrix | PolytomousResponses | MixedResponses,
    design: CATDesign,
    rng: np.random.Generator,
    pool: PoolInfo | None = None,
) -> CATResult:
    """Replay each subject's recorded answers through the adaptive test: the policy
    chooses among the items the subject answered, and its recorded answer (or score)
    is used."""
    if tuple(responses.item_ids) != tuple(params.item_ids):
        raise CatError("the responses and the pool must list the same items in the same order")
    scored = not isinstance(responses, ResponseMatrix)
    if scored != is_scored(params):
        raise CatError("scores replay on a pool of scored items, 0/1 answers on a binary pool")
    # A mixed response file goes with a mixed pool's parameter files.
    if isinstance(responses, MixedResponses) != (params.family == "mixed"):
        raise CatError("continuous scores replay on a pool with continuous items")
    values = responses.as_float() if isinstance(responses, MixedResponses) else responses.values

    def respond(rows: IntArray, chosen: IntArray) -> FloatArray:
        if scored:
            return np.asarray(values[rows, chosen], dtype=np.float64)
        return np.asarray(values[rows, chosen] == 1, dtype=np.float64)

    return run_cat(params, responses.observed, respond, design, rng, pool)


def estimation(params: PoolParams, pool: PoolInfo, estimator: object) -> Estimate:
    """How a batch's θ is estimated on this pool: a binary estimator on ``Answers``, a
    graded one on the pool's score table."""
    if params.scored:
        table = pool.scores
        if not isinstance(estimator, GradedEstimator) or table is None:
            raise CatError(
                "a pool of scored items needs a graded estimator "
                "(cat.engine.registry.make_graded_estimator)"
            )
        return lambda items, right, start: estimator.estimate(
            GradedAnswers(table, items, right), start
        )
    if isinstance(estimator, GradedEstimator):
        raise CatError("a graded estimator is for a pool of scored items, not of binary ones")
    binary = cast(AbilityEstimator, estimator)
    return lambda items, right, start: binary.estimate(Answers.gather(params, items, right), start)


def run_cat(
    params: PoolParams,
    can_answer: BoolArray,
    respond: Respond,
    design: CATDesign,
    rng: np.random.Generator,
    pool: PoolInfo | None = None,
) -> CATResult:
    """The adaptive test for E examinees; ``can_answer`` (E, J) marks what may be asked."""
    policy, stopping = design.policy, design.stopping
    batch_size, start_theta = design.batch_size, design.start_theta
    t0 = time.perf_counter()
    pool = pool or PoolInfo.build(params)
    estimate = estimation(params, pool, design.estimator)
    n_exam, n_pool = can_answer.shape
    if n_pool != params.n_items:
        raise CatError(f"{n_pool} answerable-item columns for a pool of {params.n_items}")
    length = min(stopping.max_items, n_pool)
    available = can_answer.copy()
    if design.exposure is not None:
        available = design.exposure.screen(available, rng, length)
    given = np.zeros((n_exam, n_pool), dtype=bool)
    items = np.full((n_exam, length), -1, dtype=np.int_)
    right = np.zeros((n_exam, length))
    chances = None if params.scored else np.full((n_exam, length), np.nan)
    position = np.zeros(n_exam, dtype=np.int_)  # answers so far, per examinee
    theta = np.full(n_exam, float(start_theta))
    se = np.full(n_exam, np.inf)
    active: BoolArray = np.asarray(available.any(axis=1), dtype=bool)
    reasons = ["" if a else "pool_exhausted" for a in active]
    while active.any():
        idx = np.flatnonzero(active)
        for _ in range(batch_size):
            rows = idx[available[idx].any(axis=1) & (position[idx] < length)]
            if rows.size == 0:
                break
            state = SelectionState(
                theta=theta[rows],
                available=available[rows],
                given=given[rows],
                cohort_given=given.sum(axis=0),
                cohort_size=n_exam,
            )
            chosen = policy.select(pool, state, rng)
            if not available[rows, chosen].all():
                raise CatError("the selection policy chose an item that was not available")
            available[rows, chosen] = False
            given[rows, chosen] = True
            items[rows, position[rows]] = chosen
            if chances is not None:
                chances[rows, position[rows]] = chance_of(params, theta[rows], chosen)
            right[rows, position[rows]] = respond(rows, chosen)
            position[rows] += 1
        width = int(position[idx].max())
        theta[idx], se[idx] = estimate(items[idx, :width], right[idx, :width], theta[idx])
        why = stopping.reasons(
            position[idx].astype(float), se[idx], available[idx].sum(axis=1).astype(float)
        )
        for k in np.flatnonzero(why != None):  # noqa: E711
            reasons[idx[k]] = str(why[k])
            active[idx[k]] = False
    return CATResult(
        theta_hat=theta,
        se=se,
        items=items,
        right=right,
        n_items=position.copy(),
        stop_reason=reasons,
        seconds=time.perf_counter() - t0,
        chances=chances,
    )


def chance_of(params: PoolParams, theta: FloatArray, items: IntArray) -> FloatArray:
    """Each examinee's chance of a right answer to its item ``items[e]`` at ``theta[e]``
    (a pool of 0/1 items), from the few distinct items chosen only."""
    distinct, column = np.unique(items, return_inverse=True)
    table = params.subset(distinct).expected_score(theta)  # (E, distinct items)
    return np.asarray(table[np.arange(len(items)), column], dtype=np.float64)
