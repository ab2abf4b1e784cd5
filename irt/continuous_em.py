"""Marginal maximum likelihood (Bayes modal with priors) for pools of continuous items
(``irt.continuous``: Samejima's CRM and the Beta IRT model) on one θ ~ N(0, 1), by
Bock–Aitkin EM (Bock & Aitkin 1981).

Each cycle is an E-step over a fixed quadrature grid (``irt.continuous_estep``; missing
answers are left out) and an M-step per item (``irt.continuous_mstep``: the CRM in
closed form, the Beta by safeguarded Fisher scoring) that never lowers an item's
objective, so every cycle is a generalised EM step. Cycles are optionally accelerated by
SQUAREM in the one EM loop (``irt.estimation.em_loop``); the cycle itself is that of
``MixedCalibrator`` with one continuous family (``irt.mixed_joint``,
``irt.continuous_family``). Start values come from ``irt.continuous_start``,
standard errors from ``irt.continuous_se``, scores from ``irt.continuous_scoring``.

The log-likelihood is on the x scale (with each model's Jacobian), so the two models'
``loglik_``, ``aic_`` and ``bic_`` on the same scores compare directly — with the same ε.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from irt.continuous import DEFAULT_EPSILON, ContinuousParams
from irt.continuous_family import ContinuousFamily
from irt.continuous_kernels import check_epsilon
from irt.continuous_priors import ContinuousPriors
from irt.continuous_responses import ContinuousResponses
from irt.continuous_start import ItemTypes, check_item_types
from irt.em_settings import GridEMCalibrator

__all__ = ["ContinuousCalibrator"]

#: The methods accepted for standard errors.
SE_METHODS = ("oakes",)


class ContinuousCalibrator(GridEMCalibrator):
    """Fit a pool of continuous items (scores in [0, 1]) on one θ ~ N(0, 1).

    ``item_types``: "crm" or "beta" for every item, one per item (a sequence), or a
    mapping from every item id to its type. ``priors``: None is plain marginal ML
    (``ContinuousPriors()``). Scores are clipped to [``epsilon``, 1 − ``epsilon``].
    ``n_quad`` points on [−``bound``, ``bound``]; EM stops when no parameter (a, d,
    log σ or τ) moves more than ``tol`` in a cycle, or after ``max_iter`` cycles with a
    ``ConvergenceWarning``. ``squarem`` accelerates the cycles. ``standard_errors``:
    "oakes" (observed information) or None.

    ``fit(responses)`` sets ``params_`` (with standard errors), ``loglik_`` (x scale),
    ``logpost_`` (plus the log prior), ``trace_`` (the log posterior at the start of
    every cycle, then at the end), ``n_iter_`` (EM maps), ``converged_``,
    ``n_parameters_`` (3 per item), ``df_`` (−1: scores have no finite table),
    ``aic_``, ``bic_`` (n = subjects with an answer), ``se_``, ``priors_``,
    ``epsilon_``, ``n_clipped_`` (answers moved to ε or 1 − ε) and ``seconds_``.
    """

    _what = "continuous EM"

    params_: ContinuousParams

    def __init__(
        self,
        item_types: ItemTypes,
        *,
        priors: ContinuousPriors | None = None,
        epsilon: float = DEFAULT_EPSILON,
        n_quad: int = 61,
        bound: float = 6.0,
        tol: float = 1e-4,
        max_iter: int = 500,
        max_newton: int = 10,
        squarem: bool = True,
        standard_errors: str | None = "oakes",
    ) -> None:
        self._settings(n_quad, bound, tol, max_iter, max_newton, standard_errors, SE_METHODS)
        if not isinstance(item_types, Mapping):
            check_item_types(item_types)
        self.item_types = item_types
        self.priors = priors
        self.epsilon = check_epsilon(epsilon)
        self.squarem = squarem

    def describe(self) -> dict[str, Any]:
        """Settings and priors, JSON-ready (the priors actually used after a fit)."""
        priors = getattr(self, "priors_", self.priors)
        out: dict[str, Any] = {
            "method": "Bock-Aitkin EM" + (" + SQUAREM" if self.squarem else ""),
            "epsilon": self.epsilon,
            **self._describe_settings(),
            "priors": (priors or ContinuousPriors()).describe(),
        }
        if hasattr(self, "params_"):
            out["item_types"] = self._type_counts(self.params_)
            out["n_clipped"] = self.n_clipped_
        return out

    def fit(
        self, responses: ContinuousResponses | object, start: ContinuousParams | None = None
    ) -> ContinuousCalibrator:
        """Estimate every item's parameters from ``responses`` (a ``ContinuousResponses``
        or an (N, J) array with NaN for missing answers)."""
        self._started()
        if not isinstance(responses, ContinuousResponses):
            responses = ContinuousResponses.from_array(responses)
        grid = self._grid()
        family = ContinuousFamily.of(
            responses, self.item_types, self.priors, self.epsilon, grid.points
        )
        # A continuous item counts 0 categories: no finite response table, df_ is −1.
        n_categories = [0] * responses.n_items
        n_subjects = int(responses.observed.any(axis=1).sum())
        self._fit_alone(
            family, family.start(start), grid, n_categories, n_subjects, accelerate=self.squarem
        )
        self.epsilon_ = self.epsilon
        self.n_clipped_ = responses.n_clipped(self.epsilon)
        return self
