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
from irt.mirt_model import MirtParams
from irt.models import ModelKind
from irt.responses import ResponseMatrix


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
) -> MultidimensionalFit:
    """Fit ``model`` to ``matrix``: the bifactor model with one specific factor per
    group of ``groups``."""
    model = MultidimensionalModel(model)
    if model is not MultidimensionalModel.BIFACTOR:
        raise CatError(f"--model {model.value} is not available yet; use --model bifactor")
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
        calibrator = BifactorCalibrator(
            tol=tol, max_iter=max_iter, priors=prior, guessing=guessing
        ).fit(matrix, codes, names)
    return MultidimensionalFit(
        params=calibrator.params_.to_mirt(),
        loglik=float(calibrator.loglik_),
        logpost=float(calibrator.logpost_),
        n_parameters=int(calibrator.n_parameters_),
        n_iter=int(calibrator.n_iter_),
        converged=bool(calibrator.converged_),
        seconds=time.perf_counter() - t0,
        priors=_describe(prior, guessing),
        settings={"tol": tol, "max_iter": max_iter, "n_quad": 31, "bound": 6.0},
    )


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
