"""``cat calibrate --model bifactor|mirt``: the multidimensional fit, with the figures
that compare it with the unidimensional one (log-likelihood, AIC, BIC) and the items'
groups it was given.

    fit = fit_multidimensional(matrix, MultidimensionalModel.BIFACTOR, groups=found)
    fit.params.factors, fit.aic
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np

from cat.errors import CatError
from cat.pools.scenarios import ItemScenarios
from irt.bifactor import BifactorCalibrator, BifactorPriors
from irt.bifactor_model import GENERAL_ONLY, group_codes
from irt.errors import ConvergenceWarning, IRTError
from irt.exploratory.scenario_factors import RIDGE, fit_scenario_factors
from irt.mirt_em import MirtCalibrator, MirtPriors
from irt.mirt_model import MirtParams
from irt.models import ItemParams, ModelKind
from irt.responses import ResponseMatrix

#: A product grid past this many factors is too large (R mirt's limit for EM too).
MAX_GRID_FACTORS = 5


class MultidimensionalModel(StrEnum):
    """``bifactor``: a general factor plus one specific factor per scenario;
    ``mirt``: K correlated or exploratory factors."""

    BIFACTOR = "bifactor"
    MIRT = "mirt"


def n_parameters(model: ModelKind, n_items: int) -> int:
    """Free item parameters of a unidimensional fit (the 1PL's common slope counted once)."""
    per_item = {ModelKind.ONE_PL: 1, ModelKind.TWO_PL: 2, ModelKind.THREE_PL: 3}
    count = per_item.get(model, 4) * n_items
    return count + (1 if model is ModelKind.ONE_PL else 0)


def information_criteria(loglik: float, k: int, n_subjects: int) -> dict[str, float]:
    """AIC = 2k − 2 log L and BIC = k log N − 2 log L (N subjects)."""
    return {"aic": 2 * k - 2 * loglik, "bic": k * math.log(max(n_subjects, 1)) - 2 * loglik}


@dataclass(frozen=True)
class MultidimensionalFit:
    """A multidimensional model fitted to a response matrix."""

    params: MirtParams
    loglik: float
    logpost: float
    n_parameters: int
    n_iter: int
    converged: bool
    seconds: float
    priors: dict[str, dict[str, Any]]
    settings: dict[str, Any] = field(default_factory=dict)
    # What predictions take off each unasked item's expected score (the model's drift on
    # the subjects it was fitted to; 0 where not measured).
    offset: float = 0.0
    method: str = "em"

    def criteria(self, n_subjects: int) -> dict[str, float]:
        return information_criteria(self.loglik, self.n_parameters, n_subjects)


def bifactor_groups(scenarios: ItemScenarios) -> tuple[np.ndarray, tuple[str, ...]]:
    """Group codes for the bifactor fit: each scenario a specific factor, an item with no
    scenario ("") on the general factor only."""
    labels = [scenarios.names[k] or None for k in scenarios.codes]
    try:
        return group_codes(labels)
    except IRTError as exc:
        raise CatError(f"--model bifactor: {exc}") from exc


def fit_multidimensional(
    matrix: ResponseMatrix,
    model: MultidimensionalModel | str,
    groups: ItemScenarios | None,
    guessing: bool = True,
    priors: bool = True,
    tol: float = 1e-4,
    max_iter: int = 500,
    dims: int | None = None,
    unidimensional: ItemParams | None = None,
    unidimensional_priors: dict[str, dict[str, Any]] | None = None,
) -> MultidimensionalFit:
    """Fit ``model`` to ``matrix``: the bifactor model with one specific factor per
    group of ``groups``; or ``mirt``, exploratory with ``dims`` factors by EM, else one
    correlated factor per group on the ``unidimensional`` fit's items
    (``irt.exploratory.scenario_factors``)."""
    model = MultidimensionalModel(model)
    if model is MultidimensionalModel.MIRT and dims is None and groups is not None:
        if unidimensional is None:
            raise CatError("--model mirt builds its scenario factors on a unidimensional fit")
        return _fit_scenario_factors(matrix, groups, unidimensional, unidimensional_priors)
    if model is MultidimensionalModel.MIRT:
        return _fit_mirt(matrix, groups, dims, guessing, priors, tol, max_iter)
    if dims is not None:
        raise CatError("--dims is for --model mirt; the bifactor model has one factor per group")
    if groups is None:
        raise CatError(
            "--model bifactor needs each item's scenario: give --groups ITEMS "
            "(--group-column COL) or a --pool whose items have scenarios"
        )
    codes, names = bifactor_groups(groups)
    if not np.any(codes != GENERAL_ONLY):
        raise CatError("--model bifactor: no item has a scenario to load on")
    prior = BifactorPriors() if priors else None
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        # No caller reads the standard errors: cross-fits refit this model per fold.
        calibrator = BifactorCalibrator(
            tol=tol, max_iter=max_iter, priors=prior, guessing=guessing, standard_errors=False
        ).fit(matrix, codes, names)
    return _em_fit(
        calibrator,
        calibrator.params_.to_mirt(),
        time.perf_counter() - t0,
        _describe(prior, guessing),
        {"tol": tol, "max_iter": max_iter, "n_quad": 31, "bound": 6.0},
    )


def _em_fit(
    calibrator: BifactorCalibrator | MirtCalibrator,
    params: MirtParams,
    seconds: float,
    priors: dict[str, dict[str, Any]],
    settings: dict[str, Any],
) -> MultidimensionalFit:
    """The fit figures of an EM calibrator, in one place for both."""
    return MultidimensionalFit(
        params=params,
        loglik=float(calibrator.loglik_),
        logpost=float(calibrator.logpost_),
        n_parameters=int(calibrator.n_parameters_),
        n_iter=int(calibrator.n_iter_),
        converged=bool(calibrator.converged_),
        seconds=seconds,
        priors=priors,
        settings=settings,
    )


def _fit_mirt(
    matrix: ResponseMatrix,
    groups: ItemScenarios | None,
    dims: int | None,
    guessing: bool,
    priors: bool,
    tol: float,
    max_iter: int,
) -> MultidimensionalFit:
    """The exploratory fit of ``dims`` factors by EM (``irt.mirt_em``)."""
    if dims is None:
        raise CatError("--model mirt needs --dims K (exploratory) or each item's scenario")
    if not 1 <= dims <= MAX_GRID_FACTORS:
        raise CatError(f"--dims takes 1 to {MAX_GRID_FACTORS} factors, got {dims}")
    prior = MirtPriors() if priors else None
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            calibrator = MirtCalibrator(
                dims,
                guessing=guessing,
                priors=prior,
                tol=tol,
                max_iter=max_iter,
                standard_errors=False,
            ).fit(matrix)
    except IRTError as exc:
        raise CatError(f"--model mirt: {exc}") from exc
    described: dict[str, dict[str, Any]] = {}
    if prior is not None:
        described = {
            "slopes": {"dist": "normal", "mean": prior.slope_mean, "sd": prior.slope_sd},
            "d": {"dist": "normal", "mean": 0.0, "sd": prior.d_sd},
        }
        if guessing:
            described["c"] = {"dist": "beta", "alpha": prior.c_alpha, "beta": prior.c_beta}
    return _em_fit(
        calibrator,
        calibrator.params_,
        time.perf_counter() - t0,
        described,
        {"tol": tol, "max_iter": max_iter, "bound": 6.0},
    )


def _fit_scenario_factors(
    matrix: ResponseMatrix,
    groups: ItemScenarios,
    unidimensional: ItemParams,
    item_priors: dict[str, dict[str, Any]] | None,
) -> MultidimensionalFit:
    """One correlated factor per scenario on the unidimensional fit's items (whose
    ``item_priors`` it inherits), its marginal log-likelihood by the Laplace
    approximation."""
    if "" in groups.names:
        raise CatError("--model mirt: every item needs a scenario to load on")
    t0 = time.perf_counter()
    try:
        found = fit_scenario_factors(unidimensional, matrix, groups.codes, groups.names)
    except IRTError as exc:
        raise CatError(f"--model mirt: {exc}") from exc
    s_count = len(groups.names)
    k = n_parameters(unidimensional.model, matrix.n_items) + s_count + s_count * (s_count + 1) // 2
    loglik = laplace_log_likelihood(found.params, matrix)
    return MultidimensionalFit(
        params=found.params,
        loglik=loglik,
        logpost=loglik,
        # The factors' means and covariance, less the location and scale the
        # unidimensional fit already fixed.
        n_parameters=k - 2,
        n_iter=1,
        converged=True,
        seconds=time.perf_counter() - t0,
        priors=dict(item_priors or {}),
        settings={"items": f"the {unidimensional.model.value.upper()} fit's", "ridge": RIDGE},
        offset=found.offset,
        method="two-stage",
    )


def laplace_log_likelihood(params: MirtParams, matrix: ResponseMatrix) -> float:
    """The marginal log-likelihood by the Laplace approximation at each subject's MAP û
    (prior N(0, R)): Σ_i ℓ_i(û) − ½ûᵀR⁻¹û − ½ log det R + ½ log det Cov_i, with Cov_i
    the inverse of the Fisher information plus R⁻¹. Close to the exact integral when
    every subject answers many items per factor."""
    from cat.designs.low_rank import LowRankModel, scored_test

    observed = matrix.observed
    right = (matrix.values == 1) & observed
    test = scored_test(LowRankModel.from_mirt(params), observed, observed, right.astype(float))
    p = np.clip(params.probability(test.u), 1e-12, 1 - 1e-12)
    fit = np.where(observed, np.where(right, np.log(p), np.log1p(-p)), 0.0).sum(axis=1)
    precision = np.linalg.inv(params.correlation)
    prior = -0.5 * np.einsum("ek,kl,el->e", test.u, precision, test.u)
    _, log_det_r = np.linalg.slogdet(params.correlation)
    _, log_det_cov = np.linalg.slogdet(test.cov)
    return float(np.sum(fit + prior - 0.5 * log_det_r + 0.5 * log_det_cov))


def _describe(prior: BifactorPriors | None, guessing: bool) -> dict[str, dict[str, Any]]:
    if prior is None:
        return {}
    out: dict[str, dict[str, Any]] = {
        "a_general": {"dist": "normal", "mean": prior.a_general_mean, "sd": prior.a_general_sd},
        "a_specific": {"dist": "normal", "mean": 0.0, "sd": prior.a_specific_sd},
        "d": {"dist": "normal", "mean": 0.0, "sd": prior.d_sd},
    }
    if guessing:
        out["c"] = {"dist": "beta", "alpha": prior.c_alpha, "beta": prior.c_beta}
    return out
