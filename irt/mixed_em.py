"""Marginal maximum likelihood (Bayes modal with priors) for mixed pools — discrete items
(binary 2PL/3PL, graded, gpcm, sequential) and continuous items (CRM, Beta) — on one
θ ~ N(0, 1), by one Bock–Aitkin EM (Bock & Aitkin 1981).

Given θ the items are independent, so subject n's log-likelihood at node θ_q is the sum
of its discrete part's and its continuous part's. Each cycle's E-step computes both per
subject on the shared grid (``irt.quadrature.normal_grid``) — the discrete one as the
log-likelihood of the subject's response pattern (``irt.polytomous_estep.log_table``,
patterns mapped back to subjects), the continuous one from the exponential-family
coefficients (``irt.continuous_estep``) — adds them, and normalises once into the
posterior p_nq. Each family then gets its own expected statistics under that one
posterior — r_jkq = Σ_n 1[y_nj = k] p_nq for the discrete items, (N, S1, S2) for the
continuous ones — and runs its own M-step unchanged (``irt.polytomous_mstep.GroupMStep``,
``irt.continuous_mstep.m_step``). Both M-steps never lower their items' objectives, so
every cycle is a generalised EM step and the joint log posterior never falls
(``irt.mixed_joint``; the families in ``irt.polytomous_family`` and
``irt.continuous_family``). Cycles are optionally accelerated by SQUAREM over both
families' coordinates at once, in the one EM loop (``irt.estimation.em_loop``).

With one part only, the fit is that of ``PolytomousCalibrator`` or
``ContinuousCalibrator``: they run this EM with one family. The calibrator computes no
standard errors: ``irt.mixed_se.fit_standard_errors`` gives them for a fit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from irt.continuous import DEFAULT_EPSILON
from irt.continuous_family import ContinuousFamily
from irt.continuous_kernels import check_epsilon
from irt.continuous_priors import ContinuousPriors
from irt.continuous_start import ItemTypes as ContinuousItemTypes
from irt.continuous_start import check_item_types as check_continuous_types
from irt.em_settings import GridEMCalibrator
from irt.errors import IRTError
from irt.mixed import MixedParams, MixedResponses
from irt.mixed_joint import Family
from irt.polytomous_family import PolytomousFamily
from irt.polytomous_priors import PolytomousPriors
from irt.polytomous_start import ItemTypes as DiscreteItemTypes
from irt.types import FloatArray

__all__ = ["MixedCalibrator"]


class MixedCalibrator(GridEMCalibrator):
    """Fit a mixed pool (``MixedResponses``) of discrete and continuous items on one
    θ ~ N(0, 1) by one EM.

    ``discrete_types``: as ``PolytomousCalibrator``'s ``item_types`` (None: 2PL for two
    categories, graded for more). ``continuous_types``: as ``ContinuousCalibrator``'s
    (needed when there are continuous items). ``discrete_priors`` None gives
    ``PolytomousPriors.default_for`` (a Beta prior on c when there are 3PL items);
    ``continuous_priors`` None is plain ML. Continuous scores are clipped to
    [``epsilon``, 1 − ``epsilon``]. ``n_quad`` points on [−``bound``, ``bound``]; EM
    stops when no reported parameter of either family moves more than ``tol`` in a
    cycle, or after ``max_iter`` cycles with a ``ConvergenceWarning``. ``squarem``
    accelerates the cycles. ``standard_errors`` must be None (for errors of a fit, see
    ``irt.mixed_se.fit_standard_errors``).

    ``fit(responses)`` sets ``params_`` (``MixedParams``), ``loglik_`` (the joint
    marginal log-likelihood, continuous scores on the x scale), ``logpost_`` (plus both
    families' log priors), ``trace_`` (the log posterior at the start of every cycle,
    then at the end), ``n_iter_`` (EM maps), ``converged_``, ``n_parameters_``, ``df_``
    (−1 with continuous items), ``aic_``, ``bic_`` (n = subjects with an answer),
    ``discrete_priors_``, ``continuous_priors_`` and ``seconds_``.
    """

    _what = "mixed EM"

    params_: MixedParams

    def __init__(
        self,
        discrete_types: DiscreteItemTypes = None,
        continuous_types: ContinuousItemTypes | None = None,
        *,
        discrete_priors: PolytomousPriors | None = None,
        continuous_priors: ContinuousPriors | None = None,
        epsilon: float = DEFAULT_EPSILON,
        n_quad: int = 61,
        bound: float = 6.0,
        tol: float = 1e-4,
        max_iter: int = 500,
        max_newton: int = 10,
        squarem: bool = True,
        standard_errors: str | None = None,
    ) -> None:
        self._settings(n_quad, bound, tol, max_iter, max_newton, None, ())
        if standard_errors is not None:
            raise IRTError(
                f"standard errors of mixed pools are not implemented in the calibrator (got "
                f"{standard_errors!r}); use standard_errors=None and "
                "irt.mixed_se.fit_standard_errors on the fit"
            )
        if continuous_types is not None and not isinstance(continuous_types, Mapping):
            check_continuous_types(continuous_types)
        self.discrete_types = discrete_types
        self.continuous_types = continuous_types
        self.discrete_priors = discrete_priors
        self.continuous_priors = continuous_priors
        self.epsilon = check_epsilon(epsilon)
        self.squarem = squarem

    def describe(self) -> dict[str, Any]:
        """Settings and priors, JSON-ready (the priors actually used after a fit)."""
        dp = getattr(self, "discrete_priors_", self.discrete_priors)
        cp = getattr(self, "continuous_priors_", self.continuous_priors)
        out: dict[str, Any] = {
            "method": "Bock-Aitkin EM" + (" + SQUAREM" if self.squarem else ""),
            "epsilon": self.epsilon,
            **self._describe_settings(),
            "discrete_priors": None if dp is None else dp.describe(),
            "continuous_priors": None if cp is None else cp.describe(),
        }
        if hasattr(self, "params_"):
            out["item_types"] = self._type_counts(self.params_.discrete, self.params_.continuous)
        return out

    def fit(self, responses: MixedResponses, start: MixedParams | None = None) -> MixedCalibrator:
        """Estimate every item's parameters from ``responses`` (missing answers are left
        out of the likelihood); ``start`` must cover the same items in the same parts."""
        self._started()
        if not isinstance(responses, MixedResponses):
            raise IRTError(f"fit needs MixedResponses, got {type(responses).__name__}")
        if start is not None and start.item_ids != responses.item_ids:
            raise IRTError("the start values must list the responses' items, in the same parts")
        grid = self._grid()
        families: list[Family] = []
        starts: list[FloatArray] = []
        disc: PolytomousFamily | None = None
        cont: ContinuousFamily | None = None
        if responses.discrete is not None:
            disc = PolytomousFamily.of(
                responses.discrete,
                self.discrete_types,
                self.discrete_priors,
                grid.points,
                # Alone, the discrete items' E-step runs over their response patterns.
                by_subject=responses.continuous is not None,
            )
            families.append(disc)
            starts.append(disc.start(None if start is None else start.discrete))
        if responses.continuous is not None:
            if self.continuous_types is None:
                raise IRTError("the pool has continuous items: give continuous_types (crm or beta)")
            cont = ContinuousFamily.of(
                responses.continuous,
                self.continuous_types,
                self.continuous_priors,
                self.epsilon,
                grid.points,
            )
            families.append(cont)
            starts.append(cont.start(None if start is None else start.continuous))
        problem, run = self._run(families, starts, grid, accelerate=self.squarem)
        xs = problem.split(run.x)
        params = MixedParams(
            discrete=None if disc is None else disc.params(xs[0]),
            continuous=None if cont is None else cont.params(xs[-1]),
        )
        # Continuous items count 0 categories: no finite response table, df_ is −1.
        n_categories = [] if disc is None else list(disc.responses.n_categories)
        n_categories += [] if cont is None else [0] * cont.responses.n_items
        self._record(
            params=params,
            loglik=run.evaluation.loglik,
            logpost=run.evaluation.logpost,
            run=run,
            n_parameters=sum(f.n_parameters for f in families),
            n_categories=n_categories,
        )
        self._finish(int(responses.observed.any(axis=1).sum()))
        self.discrete_priors_ = None if disc is None else disc.priors
        self.continuous_priors_ = None if cont is None else cont.priors
        return self
