"""A K-factor logistic model of a response matrix: P(right) = σ(u_i · v_j + b_j).

Not an IRT model for people: a low-rank summary of how reference LLMs' answers co-vary,
which a one-dimensional θ does not hold (on ARC, 320 fine-tunes of one family, a
prototype found K = 8 ahead of every IRT predictor; ../shared/DESIGN.md).

Fitted by alternating penalised logistic regressions: with the subjects' u fixed, every
item's (v_j, b_j) is one small regression on the subjects, and with the items fixed every
subject's u is one on the items; each is solved by Newton steps halved until the
penalised log-likelihood rises, all regressions of one side at once. The L2 penalty
λ/2·(‖U‖² + ‖V‖²) fixes the scale between U and V; a weaker one on b keeps an item every
reference answered alike finite. The factors are identified only up to rotation, which
nothing downstream depends on: predictions use U·Vᵀ, and a new subject's prior is the
references' own spread of u. (A joint L-BFGS fit took a minute on 31 × 12,032 and had
not converged; the alternating fit takes seconds.)
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from irt.errors import ConvergenceWarning, IRTError
from irt.estimation.calibrator import Calibrator
from irt.families.coordinates import sigmoid
from irt.responses import ResponseMatrix
from irt.types import FloatArray, IntArray

#: Penalty on each item's intercept, relative to the factors' penalty.
INTERCEPT_PENALTY = 0.01
HALVINGS = 10


@dataclass(frozen=True)
class LowRankParams:
    """The item side of a low-rank fit: each item's loadings (J, K) and intercept (J,)."""

    item_ids: tuple[str, ...]
    loadings: FloatArray
    intercepts: FloatArray


@dataclass(frozen=True)
class _Regressions:
    """The regressions of ``logistic_rows``, with their objective."""

    design: FloatArray
    offset: FloatArray
    y: FloatArray
    mask: FloatArray
    penalty: FloatArray

    def nll(self, theta: FloatArray, rows: IntArray | None = None) -> FloatArray:
        """The penalised negative log-likelihood of each row at its coefficients
        ``theta`` (R, P), or of the regressions ``rows`` at ``theta`` (len(rows), P)."""
        y = self.y if rows is None else self.y[rows]
        mask = self.mask if rows is None else self.mask[rows]
        z = theta @ self.design.T
        z += self.offset
        loss = softplus(z)
        z *= y
        loss -= z
        loss *= mask
        return np.asarray(loss.sum(axis=1) + 0.5 * (self.penalty * theta * theta).sum(axis=1))


def softplus(z: FloatArray) -> FloatArray:
    """log(1 + exp(z)) as max(z, 0) + log1p(exp(−|z|)), in place on one new array:
    the same value as ``np.logaddexp(0, z)`` at a third of its time (numpy's exp and
    log1p are vectorised, its logaddexp is not), which the fit spends most of its time in."""
    out = np.abs(z)
    np.negative(out, out=out)
    np.exp(out, out=out)
    np.log1p(out, out=out)
    out += np.maximum(z, 0.0)
    return out


def logistic_rows(
    theta: FloatArray,
    design: FloatArray,
    offset: FloatArray,
    y: FloatArray,
    mask: FloatArray,
    penalty: FloatArray,
    steps: int = 2,
) -> FloatArray:
    """R penalised logistic regressions sharing one ``design`` (M, P) and ``offset`` (M,):
    row r has coefficients ``theta[r]`` (P,), targets ``y[r]`` (M,) counted where
    ``mask[r]``, and the penalty ½·Σ ``penalty``·θ². ``steps`` damped Newton steps from
    ``theta``; returns the new coefficients (R, P)."""
    return _newton_rows(theta, _Regressions(design, offset, y, mask, penalty), steps)[0]


def _newton_rows(
    theta: FloatArray, rows: _Regressions, steps: int = 2
) -> tuple[FloatArray, FloatArray]:
    """``logistic_rows``: the new coefficients and each row's objective at them, which the
    fit sums for its trace instead of evaluating it again."""
    design, offset, y, mask, penalty = rows.design, rows.offset, rows.y, rows.mask, rows.penalty
    theta = theta.copy()
    current = rows.nll(theta)
    for _ in range(steps):
        p = sigmoid(theta @ design.T + offset)
        weight = 1.0 - p
        weight *= p
        weight *= mask
        p -= y
        p *= mask
        grad = p @ design + penalty * theta
        hess = np.einsum("rm,mp,mq->rpq", weight, design, design, optimize=True)
        hess += np.diag(penalty)[None]
        step = np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
        scale = np.ones(len(theta))
        moving = np.ones(len(theta), dtype=bool)
        for _ in range(HALVINGS):
            idx = np.flatnonzero(moving)
            trial = theta[idx] - scale[idx, None] * step[idx]
            # Every row still moving (the first trial): no copy of the targets.
            value = rows.nll(trial, None if idx.size == len(theta) else idx)
            better = value <= current[idx] + 1e-10
            theta[idx[better]], current[idx[better]] = trial[better], value[better]
            moving[idx[better]] = False
            scale[moving] *= 0.5
            if not moving.any():
                break
    return theta, current


class LowRankCalibrator(Calibrator):
    """``fit(responses)`` sets ``person_`` (N, K), ``loadings_`` (J, K), ``intercepts_``
    (J,) and the attributes of every ``Calibrator``: ``params_`` (``LowRankParams``:
    the items' loadings and intercepts), ``loglik_`` (of the observed answers, without
    the penalty), ``logpost_`` (minus the ridge penalty), ``n_iter_`` (alternating
    sweeps), ``converged_``, ``trace_`` (the penalised log-likelihood after each sweep),
    ``n_parameters_`` and ``seconds_``; settings as in scikit-learn."""

    def __init__(
        self,
        dims: int = 4,
        penalty: float = 1.0,
        max_sweeps: int = 200,
        tol: float = 1e-5,
        seed: int = 0,
    ) -> None:
        if dims < 1:
            raise IRTError(f"a low-rank model needs at least 1 dimension, got {dims}")
        if penalty <= 0:
            raise IRTError(f"the low-rank penalty must be positive, got {penalty}")
        self.dims = dims
        self.penalty = penalty
        self.max_sweeps = max_sweeps
        self.tol = tol
        self.seed = seed

    def fit(self, responses: ResponseMatrix) -> LowRankCalibrator:
        self._started()
        n, k = responses.n_subjects, self.dims
        if n < 2:
            raise IRTError("a low-rank model needs at least 2 subjects")
        mask = responses.observed.astype(np.float64)
        y = (responses.values == 1).astype(np.float64) * mask
        # The item side's regressions run along the columns: contiguous copies once.
        y_items, mask_items = np.ascontiguousarray(y.T), np.ascontiguousarray(mask.T)
        share = np.clip(y.sum(axis=0) / np.maximum(mask.sum(axis=0), 1), 0.02, 0.98)
        rng = np.random.default_rng(self.seed)
        u = 0.5 * rng.standard_normal((n, k))
        items = np.column_stack([np.zeros((responses.n_items, k)), np.log(share / (1 - share))])
        lam = self.penalty
        item_penalty = np.array([lam] * k + [lam * INTERCEPT_PENALTY])
        person_penalty = np.full(k, lam)
        previous = np.inf
        converged, trace = False, []
        for _ in range(self.max_sweeps):
            design = np.column_stack([u, np.ones(n)])
            items = logistic_rows(items, design, np.zeros(n), y_items, mask_items, item_penalty)
            v, b = items[:, :k], items[:, k]
            u, person_nll = _newton_rows(u, _Regressions(v, b, y, mask, person_penalty))
            total = float(person_nll.sum() + 0.5 * np.sum(item_penalty * items * items))
            trace.append(-total)
            if abs(previous - total) <= self.tol * max(abs(total), 1.0):
                converged = True
                break
            previous = total
        z = u @ v.T + b
        self.person_, self.loadings_, self.intercepts_ = u, v, b
        loglik = -float(np.sum(mask * (np.logaddexp(0.0, z) - y * z)))
        self._record(
            params=LowRankParams(responses.item_ids, v, b),
            loglik=loglik,
            logpost=trace[-1],
            n_parameters=(n + responses.n_items) * k + responses.n_items,
            n_categories=[2] * responses.n_items,
            n_iter=len(trace),
            converged=converged,
            trace=trace,
        )
        if not converged:
            warnings.warn(
                f"low-rank fit not converged after {self.max_sweeps} sweeps",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self
