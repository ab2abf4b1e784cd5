"""The bifactor 2PL model and its calibration by EM with the bifactor dimension reduction.

Every item loads on a general factor G and on at most one specific factor S_k (its
group); all factors are independent N(0, 1):

    P(x_ij = 1) = σ(aG_j·G_i + aS_j·S_ik + d_j)          (slope–intercept, as R mirt)

Given G, the groups are independent, so a subject's likelihood is

    L_i = ∫ Π_k [ ∫ Π_{j ∈ k} f_ij(G, S) φ(S) dS ] · Π_{j general only} f_ij(G) φ(G) dG,

a sum over a two-dimensional grid per group however many groups there are (Gibbons &
Hedeker 1992; Cai, Yang & Hansen 2011). The E-step is one (subjects × items) by
(items × grid²) product per group, in log space; the M-step fits each item's three
parameters by Newton steps on its expected counts over the (G, S) grid. Defaults follow
R mirt's ``bfactor``: 31 equally spaced points per dimension on [−6, 6] with normal
weights, no priors, stop when no parameter moves more than ``tol`` in a cycle.

Identification: the factors' scales are fixed at N(0, 1), so the model is identified up
to the sign of each factor; after the fit each factor's slopes are turned to a positive
sum.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from irt.errors import ConvergenceWarning, IRTError
from irt.quadrature import normal_grid
from irt.responses import ResponseMatrix
from irt.types import FloatArray, IntArray

#: The group code of an item that loads on the general factor only.
GENERAL_ONLY = -1
# Slopes stay within ±_MAX_SLOPE and intercepts within ±_MAX_INTERCEPT: an item that
# everyone answers alike would otherwise run off to infinity.
_MAX_SLOPE = 20.0
_MAX_INTERCEPT = 30.0
# The SQUAREM step, in units of a plain EM step, is at most this long.
_MAX_EXTRAPOLATION = 64.0


@dataclass(frozen=True)
class BifactorPriors:
    """Normal priors on each item's general slope, specific slope and intercept: a
    Bayes-modal fit. With tens of subjects (LLM leaderboards) the slopes of items that
    nearly everyone answers alike are not identified without them; R mirt's ``bfactor``
    uses none by default, and neither does ``BifactorCalibrator`` unless given these."""

    a_general_mean: float = 1.0
    a_general_sd: float = 1.0
    a_specific_sd: float = 0.5
    d_sd: float = 3.0

    def __post_init__(self) -> None:
        for name in ("a_general_sd", "a_specific_sd", "d_sd"):
            value = getattr(self, name)
            if not (value > 0 and np.isfinite(value)):
                raise IRTError(f"the bifactor prior's {name} must be positive, got {value}")

    def center_and_precision(self, specific: bool) -> tuple[FloatArray, FloatArray]:
        """Prior means and precisions of (aG, aS, d), or (aG, d) for a general-only item."""
        if specific:
            sds = np.array([self.a_general_sd, self.a_specific_sd, self.d_sd])
            return np.array([self.a_general_mean, 0.0, 0.0]), sds**-2.0
        sds = np.array([self.a_general_sd, self.d_sd])
        return np.array([self.a_general_mean, 0.0]), sds**-2.0

    def log_density(self, params: BifactorParams) -> float:
        """The log prior of ``params`` (up to a constant)."""
        loaded = params.group >= 0
        return -0.5 * float(
            np.sum(((params.a_general - self.a_general_mean) / self.a_general_sd) ** 2)
            + np.sum((params.a_specific[loaded] / self.a_specific_sd) ** 2)
            + np.sum((params.d / self.d_sd) ** 2)
        )


@dataclass(frozen=True)
class BifactorParams:
    """Per item: the general slope, the specific slope (0 for a general-only item), the
    intercept and the group (``GENERAL_ONLY`` or 0..K-1, naming ``groups[k]``)."""

    item_ids: tuple[str, ...]
    a_general: FloatArray
    a_specific: FloatArray
    d: FloatArray
    group: IntArray
    groups: tuple[str, ...]

    def __post_init__(self) -> None:
        n = len(self.item_ids)
        for name in ("a_general", "a_specific", "d", "group"):
            if np.shape(getattr(self, name)) != (n,):
                raise IRTError(f"bifactor {name} must have one value per item ({n})")
        if np.any(self.group < GENERAL_ONLY) or np.any(self.group >= len(self.groups)):
            raise IRTError("bifactor group codes must be -1 (general only) or name a group")

    @property
    def n_items(self) -> int:
        return len(self.item_ids)

    def logits(self, general: FloatArray, specific: FloatArray) -> FloatArray:
        """aG·G + aS·S + d for each item at its own specific factor: ``general`` and
        ``specific`` (..., n_items) broadcast."""
        return np.asarray(self.a_general * general + self.a_specific * specific + self.d)


def group_codes(
    labels: Sequence[str | None], min_items: int = 2
) -> tuple[IntArray, tuple[str, ...]]:
    """Group codes 0..K-1 (in order of first appearance) from one label per item; an
    empty or None label is ``GENERAL_ONLY``. A group needs ``min_items`` items: a
    specific factor on one item is not identified."""
    names: dict[str, int] = {}
    codes = np.full(len(labels), GENERAL_ONLY, dtype=np.int_)
    for j, label in enumerate(labels):
        if label is None or label == "":
            continue
        codes[j] = names.setdefault(str(label), len(names))
    counts = np.bincount(codes[codes >= 0], minlength=len(names))
    small = [name for name, k in names.items() if counts[k] < min_items]
    if small:
        raise IRTError(
            f"each specific factor needs at least {min_items} items; "
            f"{', '.join(repr(s) for s in small[:5])} {'has' if len(small) == 1 else 'have'} fewer"
        )
    return codes, tuple(names)


class BifactorCalibrator:
    """Fit the bifactor 2PL by EM on a grid of ``n_quad`` points per dimension on
    [−``bound``, ``bound``]; stop when no parameter moved more than ``tol`` in a cycle, or
    after ``max_iter`` cycles (with a ``ConvergenceWarning``).

    ``fit(responses, group)`` takes one group code per item (``group_codes``) and sets
    ``params_``, ``loglik_`` (marginal log-likelihood), ``logpost_`` (plus the log
    prior, with ``priors``), ``n_iter_``, ``converged_``, ``seconds_`` and
    ``n_parameters_``.
    """

    def __init__(
        self,
        n_quad: int = 31,
        bound: float = 6.0,
        tol: float = 1e-4,
        max_iter: int = 500,
        newton_steps: int = 3,
        priors: BifactorPriors | None = None,
    ) -> None:
        if not tol > 0:
            raise IRTError(f"tol must be positive, got {tol}")
        if max_iter < 1 or newton_steps < 1:
            raise IRTError("max_iter and newton_steps must be at least 1")
        self.grid = normal_grid(n_quad, bound)
        self.tol = tol
        self.max_iter = max_iter
        self.newton_steps = newton_steps
        self.priors = priors

    def fit(
        self,
        responses: ResponseMatrix,
        group: Sequence[int] | IntArray,
        groups: Sequence[str] | None = None,
    ) -> BifactorCalibrator:
        t0 = time.perf_counter()
        codes = np.asarray(group, dtype=np.int_)
        if codes.shape != (responses.n_items,):
            raise IRTError(f"give one group code per item ({responses.n_items}), got {codes.size}")
        n_groups = int(codes.max()) + 1 if codes.size and codes.max() >= 0 else 0
        names = tuple(groups) if groups is not None else tuple(str(k) for k in range(n_groups))
        if len(names) != n_groups:
            raise IRTError(f"{n_groups} groups coded but {len(names)} named")
        data = _Data.of(responses, codes, n_groups)
        params = _start(responses, codes, names)
        x, log_w = self.grid.points, self.grid.log_weights

        def em_cycle(current: BifactorParams) -> tuple[BifactorParams, float]:
            counts, loglik = _e_step(data, current, x, log_w)
            new = _m_step(current, counts, data, x, self.newton_steps, self.priors)
            return new, loglik + (0.0 if self.priors is None else self.priors.log_density(current))

        converged = False
        n_iter = 0
        while n_iter < self.max_iter:
            # SQUAREM (Varadhan & Roland 2008): two EM cycles, an extrapolated point along
            # them, kept only if its log-likelihood is no lower than the second cycle's.
            first, _ = em_cycle(params)
            second, loglik = em_cycle(first)
            n_iter += 2
            r = _vector(first) - _vector(params)
            v = _vector(second) - _vector(first) - r
            new = second
            if np.any(v):
                alpha = -min(float(np.linalg.norm(r) / np.linalg.norm(v)), _MAX_EXTRAPOLATION)
                jump = _from_vector(params, _vector(params) - 2 * alpha * r + alpha**2 * v)
                landed, jump_loglik = em_cycle(jump)
                n_iter += 1
                if np.isfinite(jump_loglik) and jump_loglik >= loglik - 1e-9:
                    new = landed
            change = float(np.max(np.abs(_vector(new) - _vector(second))))
            change = max(change, float(np.max(np.abs(_vector(second) - _vector(first)))))
            params = new
            if change < self.tol:
                converged = True
                break
        if not converged:
            warnings.warn(
                f"bifactor EM stopped after {self.max_iter} cycles without converging",
                ConvergenceWarning,
                stacklevel=2,
            )
        params = _oriented(params)
        _, self.loglik_ = _e_step(data, params, self.grid.points, self.grid.log_weights)
        self.logpost_ = self.loglik_ + (
            0.0 if self.priors is None else self.priors.log_density(params)
        )
        self.params_ = params
        self.n_iter_ = n_iter
        self.converged_ = converged
        self.n_parameters_ = int(2 * params.n_items + np.sum(params.group >= 0))
        self.seconds_ = time.perf_counter() - t0
        return self


@dataclass(frozen=True)
class _Data:
    """Right and wrong answers (0/1 floats, 0 where missing) split by group: index ``k``
    for group k, the last entry for the general-only items."""

    items: list[IntArray]
    right: list[FloatArray]
    wrong: list[FloatArray]

    @classmethod
    def of(cls, responses: ResponseMatrix, codes: IntArray, n_groups: int) -> _Data:
        observed = responses.observed
        right_all = ((responses.values == 1) & observed).astype(np.float64)
        wrong_all = ((responses.values == 0) & observed).astype(np.float64)
        items = [np.flatnonzero(codes == k) for k in (*range(n_groups), GENERAL_ONLY)]
        return cls(items, [right_all[:, j] for j in items], [wrong_all[:, j] for j in items])


@dataclass(frozen=True)
class _Counts:
    """Expected numbers answering (n) and right (r) per item at each grid point: (J_k,
    Q, Q) for a group's items over (G, S), (J_0, Q) for the general-only items."""

    n: list[FloatArray]
    r: list[FloatArray]


def _start(responses: ResponseMatrix, codes: IntArray, names: tuple[str, ...]) -> BifactorParams:
    p = np.clip(np.nan_to_num(_item_means(responses), nan=0.5), 0.02, 0.98)
    return BifactorParams(
        item_ids=tuple(responses.item_ids),
        a_general=np.full(codes.size, 1.0),
        a_specific=np.where(codes >= 0, 0.5, 0.0),
        d=np.log(p / (1 - p)) * 1.3,
        group=codes,
        groups=names,
    )


def _item_means(responses: ResponseMatrix) -> FloatArray:
    observed = responses.observed
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(((responses.values == 1) & observed).sum(axis=0) / observed.sum(axis=0))


def _log_sigmoids(z: FloatArray) -> tuple[FloatArray, FloatArray]:
    """log σ(z) and log(1 − σ(z)), stable for large |z|."""
    log_p = -np.logaddexp(0.0, -z)
    return log_p, log_p - z


def _logsumexp(x: FloatArray, axis: int) -> FloatArray:
    top = np.max(x, axis=axis, keepdims=True)
    return np.asarray(np.squeeze(top, axis=axis) + np.log(np.sum(np.exp(x - top), axis=axis)))


@dataclass(frozen=True)
class _Posterior:
    """Each subject's posterior on the grid: per group over (G, S), (N, Q·Q), and over
    G, (N, Q); each group's item probabilities there, (J_k, Q·Q); log marginals (N,)."""

    groups: list[FloatArray]
    general: FloatArray
    log_p: list[FloatArray]
    log_marginal: FloatArray


def _posterior(data: _Data, params: BifactorParams, x: FloatArray, log_w: FloatArray) -> _Posterior:
    q = x.size
    n_subjects = data.right[0].shape[0]
    per_group_ll: list[FloatArray] = []  # (N, Q, Q): log Π_{j∈k} f_ij(G, S) + log w(S)
    per_group_l: list[FloatArray] = []  # (N, Q): log L_k(G)
    log_ps: list[FloatArray] = []
    group_log_l = np.zeros((n_subjects, q))  # Σ_k log L_k(G) + general-only items
    for k, items in enumerate(data.items[:-1]):
        z = (
            params.a_general[items, None, None] * x[None, :, None]
            + params.a_specific[items, None, None] * x[None, None, :]
            + params.d[items, None, None]
        )
        log_p, log_q = _log_sigmoids(z.reshape(items.size, q * q))
        ll = (data.right[k] @ log_p + data.wrong[k] @ log_q).reshape(n_subjects, q, q)
        ll += log_w[None, None, :]
        own = _logsumexp(ll, axis=2)
        per_group_ll.append(ll)
        per_group_l.append(own)
        log_ps.append(log_p)
        group_log_l += own
    general = data.items[-1]
    z0 = params.a_general[general, None] * x[None, :] + params.d[general, None]
    log_p0, log_q0 = _log_sigmoids(z0)
    log_ps.append(log_p0)
    if general.size:
        group_log_l += data.right[-1] @ log_p0 + data.wrong[-1] @ log_q0
    joint = group_log_l + log_w[None, :]
    log_marginal = _logsumexp(joint, axis=1)  # (N,)
    posts = []
    for k in range(len(data.items) - 1):
        rest = group_log_l - per_group_l[k] + log_w[None, :] - log_marginal[:, None]  # (N, Q)
        posts.append(np.exp(per_group_ll[k] + rest[:, :, None]).reshape(n_subjects, q * q))
    post_g = np.exp(joint - log_marginal[:, None])
    return _Posterior(posts, post_g, log_ps, log_marginal)


def _e_step(
    data: _Data, params: BifactorParams, x: FloatArray, log_w: FloatArray
) -> tuple[_Counts, float]:
    """Expected counts at the grid and the marginal log-likelihood."""
    q = x.size
    post = _posterior(data, params, x, log_w)
    n_counts: list[FloatArray] = []
    r_counts: list[FloatArray] = []
    for k, items in enumerate(data.items[:-1]):
        answered = data.right[k] + data.wrong[k]
        n_counts.append((answered.T @ post.groups[k]).reshape(items.size, q, q))
        r_counts.append((data.right[k].T @ post.groups[k]).reshape(items.size, q, q))
    answered0 = data.right[-1] + data.wrong[-1]
    n_counts.append(answered0.T @ post.general)
    r_counts.append(data.right[-1].T @ post.general)
    return _Counts(n_counts, r_counts), float(np.sum(post.log_marginal))


@dataclass(frozen=True)
class BifactorScores:
    """Per subject: EAP of the general factor and its posterior SD, EAP of each specific
    factor (N, K), and the model's expected accuracy on the items it answered."""

    general: FloatArray
    general_sd: FloatArray
    specific: FloatArray
    expected_accuracy: FloatArray


def bifactor_scores(
    responses: ResponseMatrix, params: BifactorParams, n_quad: int = 31, bound: float = 6.0
) -> BifactorScores:
    """EAP scores under ``params`` and each subject's posterior-expected accuracy on the
    items it answered (the model's own account of its score)."""
    if tuple(responses.item_ids) != params.item_ids:
        raise IRTError("the responses and the bifactor parameters must list the same items")
    grid = normal_grid(n_quad, bound)
    x, q = grid.points, grid.size
    data = _Data.of(responses, params.group, len(params.groups))
    post = _posterior(data, params, x, grid.log_weights)
    n_subjects = responses.n_subjects
    g_mean = post.general @ x
    g_sd = np.sqrt(np.maximum(post.general @ x**2 - g_mean**2, 0.0))
    specific = np.zeros((n_subjects, len(params.groups)))
    expected_right = (data.right[-1] + data.wrong[-1]) @ np.exp(post.log_p[-1])  # (N, Q)
    expected = np.sum(post.general * expected_right, axis=1)
    s_grid = np.tile(x, q)
    for k in range(len(params.groups)):
        answered = data.right[k] + data.wrong[k]
        specific[:, k] = post.groups[k] @ s_grid
        expected += np.sum(post.groups[k] * (answered @ np.exp(post.log_p[k])), axis=1)
    n_answered = responses.observed.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = np.where(n_answered > 0, expected / n_answered, np.nan)
    return BifactorScores(g_mean, g_sd, specific, np.asarray(accuracy))


def _m_step(
    params: BifactorParams,
    counts: _Counts,
    data: _Data,
    x: FloatArray,
    steps: int,
    priors: BifactorPriors | None = None,
) -> BifactorParams:
    """Newton steps on each item's expected complete-data log-likelihood (plus its log
    prior, with ``priors``)."""
    a_g, a_s, d = params.a_general.copy(), params.a_specific.copy(), params.d.copy()
    q = x.size
    g_grid = np.repeat(x, q)  # the (G, S) grid, flattened as the counts are
    s_grid = np.tile(x, q)
    for k, items in enumerate(data.items):
        if not items.size:
            continue
        specific = k < len(data.items) - 1
        n = counts.n[k].reshape(items.size, -1)
        r = counts.r[k].reshape(items.size, -1)
        design = [g_grid, s_grid, np.ones(q * q)] if specific else [x, np.ones(q)]
        cols = np.stack(design)  # (P, M)
        theta = np.stack([a_g[items], a_s[items], d[items]] if specific else [a_g[items], d[items]])
        center, precision = (
            priors.center_and_precision(specific)
            if priors is not None
            else (np.zeros(cols.shape[0]), np.zeros(cols.shape[0]))
        )
        for _ in range(steps):
            p = 1.0 / (1.0 + np.exp(-(theta.T @ cols)))  # (J_k, M)
            grad = (r - n * p) @ cols.T - (theta.T - center) * precision  # (J_k, P)
            weight = n * p * (1 - p)
            hess = np.einsum("jm,am,bm->jab", weight, cols, cols)
            hess += np.diag(precision + 1e-8)[None]
            step = np.linalg.solve(hess, grad[..., None])[..., 0]
            # Cap long steps: a Newton step far from the optimum can overshoot.
            size = np.max(np.abs(step), axis=1, keepdims=True)
            step = step * np.minimum(1.0, 2.0 / np.maximum(size, 1e-12))
            theta = theta + step.T
        theta[:-1] = np.clip(theta[:-1], -_MAX_SLOPE, _MAX_SLOPE)
        theta[-1] = np.clip(theta[-1], -_MAX_INTERCEPT, _MAX_INTERCEPT)
        a_g[items] = theta[0]
        if specific:
            a_s[items] = theta[1]
        d[items] = theta[-1]
    return BifactorParams(params.item_ids, a_g, a_s, d, params.group, params.groups)


def _vector(params: BifactorParams) -> FloatArray:
    return np.concatenate([params.a_general, params.a_specific, params.d])


def _from_vector(like: BifactorParams, values: FloatArray) -> BifactorParams:
    """Parameters from ``_vector``'s layout, within bounds, general-only items kept at a
    zero specific slope."""
    n = like.n_items
    a_g = np.clip(values[:n], -_MAX_SLOPE, _MAX_SLOPE)
    a_s = np.where(like.group >= 0, np.clip(values[n : 2 * n], -_MAX_SLOPE, _MAX_SLOPE), 0.0)
    d = np.clip(values[2 * n :], -_MAX_INTERCEPT, _MAX_INTERCEPT)
    return BifactorParams(like.item_ids, a_g, a_s, d, like.group, like.groups)


def _oriented(params: BifactorParams) -> BifactorParams:
    """Each factor's slopes turned to a positive sum (the likelihood is symmetric)."""
    a_g = params.a_general * (1.0 if params.a_general.sum() >= 0 else -1.0)
    a_s = params.a_specific.copy()
    for k in range(len(params.groups)):
        mine = params.group == k
        if a_s[mine].sum() < 0:
            a_s[mine] = -a_s[mine]
    return BifactorParams(params.item_ids, a_g, a_s, params.d, params.group, params.groups)


def bifactor_log_likelihood(
    responses: ResponseMatrix, params: BifactorParams, n_quad: int = 31, bound: float = 6.0
) -> float:
    """The marginal log-likelihood of ``responses`` under ``params`` on the EM's grid."""
    if tuple(responses.item_ids) != params.item_ids:
        raise IRTError("the responses and the bifactor parameters must list the same items")
    grid = normal_grid(n_quad, bound)
    data = _Data.of(responses, params.group, len(params.groups))
    return _e_step(data, params, grid.points, grid.log_weights)[1]
