"""Correlated scenario factors on a unidimensional 3PL's items, estimated in two stages.

Item j of scenario s loads on that scenario's factor only:

    P(x_ij = 1) = c_j + (1 − c_j)·σ(a_j(θ_is − b_j)),     θ_i ~ N(μ, Σ)

with the items' (a, b, c) those of the unidimensional calibration. Stage two estimates
μ and Σ from the subjects' per-scenario ML abilities, each from all their answers in
that scenario with the items fixed (a grid search on [−6, 6]): the mean and the sample
covariance plus a small ridge. This is the multidimensional form of augmented
subscores (Wainer et al. 2001; de la Torre & Patz 2005): with tens of subjects and a
dozen scenarios the full-information EM of a confirmatory model is out of reach (a
14-dimensional grid), while the scenarios' abilities, correlated about 0.96 among LLMs
on MMLU-Pro, let a short test borrow strength across scenarios.

The model is returned in the compensatory form with unit-variance factors: slopes
a_j·σ_s, intercepts a_j(μ_s − b_j), and the correlation matrix of Σ.

``offset`` is the model's drift on the subjects it was fitted to: the mean over subjects
of (expected − observed number right) / answered at their own abilities, which a
predictor takes off its expected scores (as the unidimensional plug-in does).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from irt.errors import IRTError
from irt.mirt_model import MirtParams, Structure
from irt.models import ItemParams, ModelKind, probability
from irt.responses import ResponseMatrix
from irt.types import FloatArray, IntArray

#: The grid of the per-scenario ML abilities, and the ridge added to their covariance.
GRID = np.linspace(-6.0, 6.0, 1201)
RIDGE = 1e-3


@dataclass(frozen=True)
class ScenarioFactorFit:
    """The model, the subjects' per-scenario abilities (N, S) and the model's drift."""

    params: MirtParams
    theta: FloatArray
    offset: float


def scenario_thetas(
    params: ItemParams, responses: ResponseMatrix, codes: IntArray, n_scenarios: int
) -> FloatArray:
    """(N, S) each subject's ML ability in each scenario from its answers there, items
    fixed; a scenario it answered nothing in gets the grid's middle (0)."""
    p = np.clip(probability(GRID, params), 1e-9, 1 - 1e-9)  # (G, J)
    log_p, log_q = np.log(p), np.log1p(-p)
    observed = responses.observed
    right = ((responses.values == 1) & observed).astype(np.float64)
    wrong = ((responses.values == 0) & observed).astype(np.float64)
    out = np.zeros((responses.n_subjects, n_scenarios))
    for s in range(n_scenarios):
        mine = codes == s
        ll = right[:, mine] @ log_p[:, mine].T + wrong[:, mine] @ log_q[:, mine].T
        out[:, s] = GRID[np.argmax(ll, axis=1)]
    return out


def fit_scenario_factors(
    params: ItemParams,
    responses: ResponseMatrix,
    codes: Sequence[int] | IntArray,
    names: Sequence[str],
) -> ScenarioFactorFit:
    """The correlated scenario-factor model of ``responses`` on the items ``params``,
    scenario ``codes[j]`` (naming ``names``) per item."""
    codes = np.asarray(codes, dtype=np.int_)
    s_count = len(names)
    if params.model is ModelKind.FOUR_PL:
        raise IRTError("scenario factors are built on 1PL-3PL items (no upper asymptote)")
    if tuple(responses.item_ids) != params.item_ids or codes.shape != (params.n_items,):
        raise IRTError("give the responses, item parameters and scenario codes of the same items")
    if s_count < 2 or codes.min() < 0 or codes.max() >= s_count:
        raise IRTError("scenario factors need at least 2 scenarios and a code per item")
    if responses.n_subjects < 3:
        raise IRTError("the factors' covariance needs at least 3 subjects")
    theta = scenario_thetas(params, responses, codes, s_count)
    mu = theta.mean(axis=0)
    cov = np.cov(theta, rowvar=False) + RIDGE * np.eye(s_count)
    sd = np.sqrt(np.diag(cov))
    corr = cov / np.outer(sd, sd)
    corr = (corr + corr.T) / 2
    np.fill_diagonal(corr, 1.0)
    rows = np.arange(params.n_items)
    slopes = np.zeros((params.n_items, s_count))
    slopes[rows, codes] = params.a * sd[codes]
    pattern = np.zeros((params.n_items, s_count), dtype=bool)
    pattern[rows, codes] = True
    model = MirtParams(
        item_ids=params.item_ids,
        slopes=slopes,
        d=params.a * (mu[codes] - params.b),
        factors=tuple(names),
        correlation=corr,
        pattern=pattern,
        structure=Structure.CONFIRMATORY,
        c=None if not params.model.has_guessing else np.asarray(params.c, dtype=np.float64),
    )
    return ScenarioFactorFit(model, theta, _drift(params, responses, codes, theta))


def _drift(
    params: ItemParams, responses: ResponseMatrix, codes: IntArray, theta: FloatArray
) -> float:
    """Mean over subjects of (expected − observed number right) / answered, each item at
    its scenario's ability."""
    observed = responses.observed
    at_own = theta[:, codes]  # (N, J)
    a, b, c = params.a, params.b, np.asarray(params.c, dtype=np.float64)
    expected = c + (1 - c) / (1 + np.exp(-a * (at_own - b)))
    right = (responses.values == 1) & observed
    n = observed.sum(axis=1)
    per_subject = ((expected * observed).sum(axis=1) - right.sum(axis=1)) / np.maximum(n, 1)
    return float(np.mean(per_subject[n > 0]))
