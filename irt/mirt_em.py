"""The compensatory multidimensional 2PL/3PL (``irt.mirt_model``) calibrated by EM on a
full product grid (Bock & Aitkin 1981; ``irt.mirt_estep``) with Fisher-scoring item
M-steps and updates of the factor correlations (``irt.mirt_mstep``): parameter-expanded
EM (Liu, Rubin & Wu 1998) until it settles, then plain EM to the exact optimum, both
SQUAREM-accelerated (Varadhan & Roland 2008).

    P(x_ij = 1) = c_j + (1 − c_j)·σ(a_j·θ_i + d_j),     θ_i ~ N(0, R)

Defaults follow R mirt's ``mirt``: 61/31/15/9/7 equally spaced points per dimension on
[−6, 6] for 1..5 factors with normalised N(0, R) weights, no priors, stop when no
parameter (slopes, d, logit c, correlations) moves more than ``tol`` in a cycle.

Identification:

- Confirmatory (``model`` a boolean loading pattern, items × factors): slopes outside
  the pattern are 0; every factor has unit variance and mean 0, so each factor is
  identified up to its sign. With ``correlated=True`` every correlation is free,
  otherwise R = I. After the fit each factor is turned so that its slopes sum to a
  positive number (its correlations turn with it).
- Exploratory (``model`` = K in 1..5): R = I and, as in R mirt, factor k (1-based)
  loads on items 1..J−k+1 only, so the last k−1 items have zero slopes on it (a
  triangle of K(K−1)/2 zeros that removes the rotational indeterminacy); signs as
  above. The unrotated slopes are reported; ``irt.exploratory.rotation.rotate`` rotates them
  (varimax or oblimin) for interpretation, which leaves the likelihood unchanged.

Item standard errors come from the cross-product of per-subject scores
(``irt.mirt_se``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from irt.errors import IRTError
from irt.estimation.em_loop import STOPPED_CAP, EMRun, run_em
from irt.mirt_calibrator import MultidimensionalCalibrator
from irt.mirt_estep import (
    Expected,
    MirtScores,
    Patterns,
    e_step,
    mirt_log_likelihood,
    mirt_scores,
    product_grid,
)
from irt.mirt_model import MirtParams, Structure
from irt.mirt_mstep import (
    MirtPriors,
    correlation_step,
    expanded_step,
    m_step,
)
from irt.mirt_se import MirtStandardErrors, item_standard_errors
from irt.mirt_start import start_values
from irt.mirt_vector import MirtEvaluation, MirtVectorEM
from irt.responses import ResponseMatrix
from irt.types import BoolArray, FloatArray

__all__ = [
    "MirtCalibrator",
    "MirtPriors",
    "MirtScores",
    "MirtStandardErrors",
    "mirt_log_likelihood",
    "mirt_scores",
]


class MirtCalibrator(MultidimensionalCalibrator):
    """Fit the multidimensional 2PL (3PL with ``guessing``) by EM.

    ``model`` is either the number of exploratory factors K (1..5) or a boolean loading
    pattern (items × factors) for a confirmatory model, whose factors ``factors`` names
    (F1, F2, ... by default). ``n_quad`` points per dimension (R mirt's default for the
    number of factors when None) on [−``bound``, ``bound``]; ``priors`` make the fit
    Bayes modal. ``expanded=False`` skips the parameter-expanded phase (it is skipped
    with priors anyway).

    ``fit(responses)`` sets ``params_``, ``loglik_`` (marginal log-likelihood),
    ``logpost_`` (plus the log prior), ``n_iter_`` (the cycles of both phases),
    ``converged_``, ``n_parameters_``, ``df_``, ``trace_``, ``aic_``, ``bic_`` (from the
    log-likelihood), ``seconds_`` and ``se_`` (item standard errors, when
    ``standard_errors``).
    """

    _what = "multidimensional EM"

    def __init__(
        self,
        model: int | BoolArray | Sequence[Sequence[bool]],
        factors: Sequence[str] | None = None,
        *,
        correlated: bool = False,
        guessing: bool = False,
        priors: MirtPriors | None = None,
        n_quad: int | None = None,
        bound: float = 6.0,
        tol: float = 1e-4,
        max_iter: int = 500,
        scoring_steps: int = 3,
        standard_errors: bool = True,
        expanded: bool = True,
    ) -> None:
        self._set_cycles(tol, max_iter, scoring_steps)
        self.pattern: BoolArray | None
        if isinstance(model, int | np.integer):
            k = int(model)
            if not 1 <= k <= 5:
                raise IRTError(f"an exploratory model has 1 to 5 factors, got {k}")
            if correlated:
                raise IRTError(
                    "exploratory factors are fitted orthogonal; rotate them obliquely "
                    "afterwards (irt.exploratory.rotation.rotate(params, 'oblimin'))"
                )
            self.pattern = None
        else:
            self.pattern = _checked_pattern(model)
            k = self.pattern.shape[1]
        names = tuple(factors) if factors is not None else tuple(f"F{i + 1}" for i in range(k))
        if len(names) != k:
            raise IRTError(f"{k} factors but {len(names)} factor names")
        if len(set(names)) != k:
            raise IRTError("factor names repeat")
        self.n_factors = k
        self.factors = names
        self.structure = Structure.EXPLORATORY if self.pattern is None else Structure.CONFIRMATORY
        self.correlated = bool(correlated) and k > 1
        self.guessing = guessing
        self.priors = priors
        self.n_quad = n_quad
        self.bound = bound
        self.points = product_grid(k, n_quad, bound)
        self.standard_errors = standard_errors
        self.expanded = expanded

    def _pattern_for(self, n_items: int) -> BoolArray:
        k = self.n_factors
        if self.pattern is None:
            if n_items < k + 1:
                raise IRTError(
                    f"an exploratory model with {k} factors needs at least {k + 1} items "
                    f"(its last factor loads on J − {k - 1} items), got {n_items}"
                )
            # Factor k (0-based) loads on items 0..J−1−k: R mirt's triangle of zeros.
            return np.arange(n_items)[:, None] <= (n_items - 1 - np.arange(k))[None, :]
        if self.pattern.shape[0] != n_items:
            raise IRTError(
                f"the loading pattern has {self.pattern.shape[0]} rows for {n_items} items"
            )
        return self.pattern

    def fit(self, responses: ResponseMatrix) -> MirtCalibrator:
        self._started()
        pattern = self._pattern_for(responses.n_items)
        data = Patterns.of(responses)
        start = start_values(responses, pattern, self.factors, self.structure, self.guessing)
        # With priors the expansion is skipped: the slopes' prior is not invariant under
        # the rescaling, so it is no EM for the posterior mode, and it fights the prior
        # for many cycles.
        n_correlated = self.n_factors if self.correlated else 0
        expanded = self.expanded and self.priors is None
        problem = _MirtEM(
            start,
            n_correlated,
            self.priors,
            data,
            self.scoring_steps,
            self.points,
            self.correlated,
            expanded,
        )
        run = self._two_phases(problem, problem.vector(start))
        params = self._record_binary(problem, run, data.n_subjects)
        self.se_ = (
            item_standard_errors(data, params, self.points, self.priors)
            if self.standard_errors
            else None
        )
        return self

    def _two_phases(self, problem: _MirtEM, start: FloatArray) -> EMRun[MirtEvaluation[Expected]]:
        """Parameter-expanded EM, fast where the slopes' scale and the correlations are
        poorly determined (a correlation running to ±1), until it settles; then plain
        EM, whose fixed point is exactly the maximum of the quadrature likelihood (the
        expanded step's is not on a coarse grid: see irt.mirt_mstep). Both phases share
        the cycle cap; the run reports their cycles and traces together."""
        run = run_em(problem, start, tol=self.tol, max_iter=self.max_iter, stabilise=True)
        if not problem.expanded or not run.converged:
            return run
        left = self.max_iter - run.n_iter
        if left < 1:
            run.converged, run.stopped = False, STOPPED_CAP
            return run
        plain = run_em(problem.plain(), run.x, tol=self.tol, max_iter=left, stabilise=True)
        plain.n_iter += run.n_iter
        plain.trace[:0] = run.trace[:-1]  # the phases share the point between them
        return plain


@dataclass(frozen=True)
class _MirtEM(MirtVectorEM[Expected]):
    """EM cycles on the full product grid: Fisher scoring per item, then either the
    parameter-expanded reduction (``expanded``) or the correlations' EM update."""

    points: FloatArray
    correlated: bool
    expanded: bool

    def plain(self) -> _MirtEM:
        """The same EM without the parameter expansion."""
        return replace(self, expanded=False)

    def e_step(self, params: MirtParams) -> Expected:
        return e_step(self.data, params, self.points)

    def m_step(self, params: MirtParams, expected: Expected) -> MirtParams:
        new = m_step(params, expected, self.points, self.scoring_steps, self.priors)
        if self.expanded:
            return expanded_step(new, expected.mass, self.points, self.correlated)
        if self.correlated:
            corr = correlation_step(params.correlation, expected.mass, self.points)
            return replace(new, correlation=corr)
        return new


def _checked_pattern(model: object) -> BoolArray:
    raw = np.asarray(model)
    if raw.ndim != 2 or raw.size == 0:
        raise IRTError(
            f"a loading pattern must be a non-empty items × factors matrix, got shape {raw.shape}"
        )
    if raw.dtype != bool and not np.all((raw == 0) | (raw == 1)):
        raise IRTError("a loading pattern must hold booleans (or 0/1)")
    pattern = raw.astype(bool)
    few = np.flatnonzero(pattern.sum(axis=0) < 2)
    if few.size:
        raise IRTError(
            f"each factor needs at least 2 items in the loading pattern; factor "
            f"{', '.join(str(int(i) + 1) for i in few)} has fewer"
        )
    return pattern
