"""Marginal maximum likelihood (Bayes modal with priors) for pools of binary, graded,
partial-credit and sequential items on one θ ~ N(0, 1), by Bock–Aitkin EM (Bock &
Aitkin 1981).

Each cycle is an E-step over the distinct response patterns
(``irt.polytomous_estep``) and a Fisher-scoring M-step per group of like items
(``irt.polytomous_mstep``) that never lowers an item's objective, so that every cycle
is a generalised EM step (Dempster, Laird & Rubin 1977). Cycles are accelerated by
SQUAREM in the one EM loop (``irt.estimation.em_loop``); the cycle itself is that of
``MixedCalibrator`` with one discrete family (``irt.mixed_joint``,
``irt.polytomous_family``). Start values come from ``irt.polytomous_start``,
standard errors from ``irt.polytomous_se``; scores under a fitted pool from
``irt.polytomous_scoring``.
"""

from __future__ import annotations

from typing import Any

from irt.em_settings import GridEMCalibrator
from irt.estimation.devices import resolve_device
from irt.estimation.em_loop import ProgressCallback
from irt.polytomous import PolytomousParams
from irt.polytomous_family import PolytomousFamily
from irt.polytomous_priors import PolytomousPriors
from irt.polytomous_responses import PolytomousResponses
from irt.polytomous_se import SE_METHODS
from irt.polytomous_start import ItemTypes

__all__ = ["PolytomousCalibrator"]


class PolytomousCalibrator(GridEMCalibrator):
    """Fit a pool of 2PL, 3PL, graded, gpcm and sequential items on one θ ~ N(0, 1).

    ``item_types``: one type for every item, one per item (a sequence), or a mapping
    from item id to type for some items; items not given one get R mirt's default (2PL
    for two categories, graded for more). ``priors``: ``None`` gives
    ``PolytomousPriors.default_for`` (a Beta prior on c when there are 3PL items,
    otherwise plain ML). ``n_quad`` points on [−``bound``, ``bound``]; EM stops when no
    parameter (a, d's, logit c) moves more than ``tol`` in a cycle, or after
    ``max_iter`` cycles with a ``ConvergenceWarning``. ``standard_errors``: "oakes"
    (observed information), "xpd" (cross-product of scores) or None. ``device``: where
    a cycle's curves, the E-step's products over the response patterns
    (``irt.polytomous_products``) and the M-step run ("cpu", "cuda", "cuda:K", "auto" or
    "torch:cpu", as ``irt.estimation.devices``); the posterior, the acceleration, the
    start values and the standard errors are the host's. ``progress(cycle, loglik,
    largest change)`` hears of every cycle.

    ``fit(responses)`` sets ``params_`` (with standard errors), ``loglik_``,
    ``logpost_`` (plus the log prior), ``trace_``, ``n_iter_``, ``converged_``,
    ``n_parameters_``, ``df_`` (Π_j K_j − 1 − n_parameters_, mirt's ``df``), ``aic_``,
    ``bic_``, ``se_`` (``PolytomousStandardErrors`` or None), ``priors_``, ``device_``
    (where the products ran: "cpu" or "torch:" and torch's device) and ``seconds_``.
    """

    _what = "polytomous EM"

    params_: PolytomousParams

    def __init__(
        self,
        item_types: ItemTypes = None,
        *,
        priors: PolytomousPriors | None = None,
        n_quad: int = 61,
        bound: float = 6.0,
        tol: float = 1e-4,
        max_iter: int = 500,
        max_newton: int = 10,
        standard_errors: str | None = "oakes",
        device: str = "cpu",
        progress: ProgressCallback | None = None,
    ) -> None:
        self._settings(n_quad, bound, tol, max_iter, max_newton, standard_errors, SE_METHODS)
        self.item_types = item_types
        self.priors = priors
        self.device = device
        self.progress = progress

    def describe(self) -> dict[str, Any]:
        """Settings and priors, JSON-ready (the priors actually used after a fit)."""
        priors = getattr(self, "priors_", self.priors)
        out: dict[str, Any] = {
            "method": "Bock-Aitkin EM",
            **self._describe_settings(),
            "priors": None if priors is None else priors.describe(),
        }
        if hasattr(self, "params_"):
            out["item_types"] = self._type_counts(self.params_)
        return out

    def fit(
        self, responses: PolytomousResponses, start: PolytomousParams | None = None
    ) -> PolytomousCalibrator:
        """Estimate every item's parameters from ``responses`` (missing answers are
        left out of the likelihood)."""
        self._started()
        backend = resolve_device(self.device)
        grid = self._grid()
        family = PolytomousFamily.of(
            responses, self.item_types, self.priors, grid.points, backend=backend
        )
        n_subjects = int(responses.observed.any(axis=1).sum())
        self._fit_alone(family, family.start(start), grid, responses.n_categories, n_subjects)
        self.device_ = backend.name
        return self
