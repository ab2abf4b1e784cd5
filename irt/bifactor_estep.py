"""The bifactor model's E-step, with the dimension reduction: given G the item groups
are independent, so a subject's likelihood is

    L_i = ∫ Π_k [ ∫ Π_{j ∈ k} f_ij(G, S) φ(S) dS ] · Π_{j general only} f_ij(G) φ(G) dG,

a sum over one two-dimensional grid per group however many groups there are (Gibbons &
Hedeker 1992; Cai, Yang & Hansen 2011): one (subjects × items) by (items × grid²)
product per group, in log space. Also the subjects' EAP scores and expected accuracy.

Speed. Each group's cost is its (items × grid²) array of log-probabilities, so only one
such array is built per cycle: with z = aG·G + aS·S + d and ℓ(z) = log σ(z),

    log P = ℓ(z),   log(1 − P) = ℓ(z) − z                                   (2PL)
    log P = log(c + (1 − c)·e^ℓ(z)),   log(1 − P) = log(1 − c) + ℓ(z) − z  (3PL)

so a subject's log-likelihood is Σ_answered ℓ_j, plus Σ_right (log P − ℓ)_j in the 3PL,
less the wrong answers' Σ_j z_j, which is linear in the grid: (wrong · [aG, aS, d]) ·
[G; S; 1], a (subjects × 3) product. Σ_answered ℓ_j is the column sum over all items,
shared by every subject, less a product over the few items someone skipped: the 2PL
needs no (subjects × items) by (items × grid²) product at all. The EM cycles may build
ℓ in float32 (``Answers.of(..., dtype=np.float32)``), twice as fast; every sum over
items runs in float64, and the reported log-likelihood comes from a float64 pass. The
expected counts are kept only at grid points that hold posterior mass
(``SUPPORT_FLOOR``): a subject answering thousands of items has a posterior a grid
point or two wide, so with tens of subjects most of the grid is empty and the M-step
skips it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from irt.bifactor_model import GENERAL_ONLY, BifactorParams
from irt.errors import IRTError
from irt.estimation.scoring import posterior_moments
from irt.quadrature import normal_grid
from irt.responses import ResponseMatrix
from irt.structures import TieredGrid
from irt.types import FloatArray, IntArray

#: Grid points whose posterior mass, summed over subjects, is below this share of the
#: number of subjects get no expected counts: dropping them moves the M-step's objective
#: by less than this times the largest |log P| (a few hundred at the parameter bounds).
SUPPORT_FLOOR = 1e-10

AnyFloat = npt.NDArray[np.floating[Any]]


@dataclass(frozen=True)
class Answers:
    """Right and wrong answers (0/1 floats, 0 where missing) split by group: index ``k``
    for group k, the last entry for the general-only items. ``gaps[k]`` lists the
    block's items (positions within the block) that someone left unanswered and
    ``missing[k]`` marks who: a sum over the answered items is then the sum over all
    items less a small product over these. ``dtype`` is the E-step's working precision
    for the log-probabilities and the expected counts, and ``right_work`` the right
    answers in it.

    A group's rows are its subjects (N), or with ``patterns[k]`` (made by
    ``Answers.of(..., share_patterns=True)`` for the EM cycles) one row per distinct
    answer pattern within the group, ``patterns[k]`` (N,) giving each subject's row:
    subjects alike in a group's four items, say, share one row of its integral
    (``irt.structures.TieredGrid.posterior``)."""

    items: list[IntArray]
    right: list[FloatArray]
    wrong: list[FloatArray]
    gaps: list[IntArray]
    missing: list[FloatArray]
    right_work: list[AnyFloat]
    patterns: list[IntArray | None]

    @classmethod
    def of(
        cls,
        responses: ResponseMatrix,
        codes: IntArray,
        n_groups: int,
        dtype: type[np.floating[Any]] = np.float64,
        share_patterns: bool = False,
    ) -> Answers:
        observed = responses.observed
        right_all = ((responses.values == 1) & observed).astype(np.float64)
        wrong_all = ((responses.values == 0) & observed).astype(np.float64)
        items = [np.flatnonzero(codes == k) for k in (*range(n_groups), GENERAL_ONLY)]
        rows: list[IntArray | None] = [None] * len(items)
        patterns: list[IntArray | None] = [None] * len(items)
        for k, block in enumerate(items[:-1]):
            if share_patterns and block.size:
                rows[k], patterns[k] = _distinct_rows(right_all[:, block] - wrong_all[:, block])
        right = [_rows(right_all[:, j], r) for j, r in zip(items, rows, strict=True)]
        gaps = [np.flatnonzero(~observed[:, j].all(axis=0)) for j in items]
        missing = [
            _rows((~observed[:, j[g]]).astype(np.float64), r)
            for j, g, r in zip(items, gaps, rows, strict=True)
        ]
        return cls(
            items,
            right,
            [_rows(wrong_all[:, j], r) for j, r in zip(items, rows, strict=True)],
            gaps,
            missing,
            [r.astype(dtype, copy=False) for r in right],
            patterns,
        )

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.right_work[0].dtype

    @property
    def n_subjects(self) -> int:
        # The general-only block keeps a row per subject (it may have no columns).
        return int(self.right[-1].shape[0])

    @property
    def n_blocks(self) -> int:
        return len(self.items)

    def answered(self, k: int) -> FloatArray:
        return self.right[k] + self.wrong[k]


#: Groups whose distinct answer patterns number more than this share of the subjects
#: keep a row per subject: sharing would save little (MMLU-Pro's groups of hundreds of
#: items have a pattern per LLM).
_SHARE_BELOW = 0.5


def _distinct_rows(codes: FloatArray) -> tuple[IntArray | None, IntArray | None]:
    """The first row of each distinct row of ``codes`` (N, J) and each row's pattern
    number, or (None, None) when the rows are mostly distinct."""
    _, first, inverse = np.unique(codes, axis=0, return_index=True, return_inverse=True)
    if first.size > _SHARE_BELOW * codes.shape[0]:
        return None, None
    return np.asarray(first), np.asarray(inverse).ravel()


def _rows(table: FloatArray, rows: IntArray | None) -> FloatArray:
    return table if rows is None else np.ascontiguousarray(table[rows])


@dataclass(frozen=True)
class Counts:
    """Expected numbers answering (n) and right (r) per item of each block at the grid
    points ``support[k]`` (indices into the block's flattened grid: (G, S), node t·Q + g,
    for a group, G for the general-only items). ``n[k]`` is one shared row
    (1, |support|) when everyone answered the block."""

    n: list[FloatArray]
    r: list[FloatArray]
    support: list[IntArray]


def block_design(x: FloatArray, specific: bool) -> FloatArray:
    """The rows [G; S; 1] over the flattened (G, S) grid (a group's items) or [G; 1] over
    the G grid (general-only items): z = coefficients · design."""
    q = x.size
    if specific:
        # The structure's local grid: node t·Q + g (``irt.structures.TieredGrid``).
        return np.stack([np.tile(x, q), np.repeat(x, q), np.ones(q * q)])
    return np.stack([x, np.ones(q)])


def block_coefficients(params: BifactorParams, items: IntArray, specific: bool) -> FloatArray:
    """(J_k, 3) [aG, aS, d] of a group's items, or (J_k, 2) [aG, d] of general-only ones."""
    if specific:
        return np.stack([params.a_general[items], params.a_specific[items], params.d[items]], 1)
    return np.stack([params.a_general[items], params.d[items]], axis=1)


def _log_sigmoid(z: AnyFloat) -> AnyFloat:
    """log σ(z) = min(z, 0) − log(1 + e^−|z|), in place of ``z`` (no overflow)."""
    tail = np.abs(z)
    np.negative(tail, out=tail)
    np.exp(tail, out=tail)
    np.log1p(tail, out=tail)
    np.minimum(z, 0, out=z)
    z -= tail
    return z


def _block_logits(
    params: BifactorParams, items: IntArray, x: FloatArray, specific: bool, dtype: Any
) -> AnyFloat:
    """(J_k, M) z = aG·G + aS·S + d over the block's grid, built by broadcasting the
    (J_k, Q) general part against the (J_k, Q) specific part: one pass over the output
    (a BLAS product with three terms costs more)."""
    xs = x.astype(dtype)
    general = params.a_general[items, None].astype(dtype) * xs + params.d[items, None].astype(dtype)
    if not specific:
        return np.asarray(general)
    own = params.a_specific[items, None].astype(dtype) * xs
    z = own[:, :, None] + general[:, None, :]  # (J_k, T, Q): node t·Q + g
    return np.asarray(z.reshape(items.size, x.size * x.size))


def block_log_likelihood(
    data: Answers, k: int, params: BifactorParams, x: FloatArray, specific: bool
) -> FloatArray:
    """(N, M) float64: each subject's (or with ``data.patterns[k]``, each answer
    pattern's) log-likelihood of block k's answers at each of the block's M grid points
    (``block_design(x, specific)``). The log-probabilities are computed in
    ``data.dtype``; the sums over items always run in float64, as a float32 product
    summing a thousand items loses ~1e-2 of a subject's log-likelihood."""
    items = data.items[k]
    design = block_design(x, specific)
    if not items.size:
        return np.zeros((data.right[k].shape[0], design.shape[1]))
    dtype = data.dtype
    right, wrong = data.right[k], data.wrong[k]
    log_sig = _log_sigmoid(_block_logits(params, items, x, specific, dtype))  # (J_k, M)
    # Σ over the answered items of ℓ: all items, less those each subject skipped.
    ll = np.asarray(np.sum(log_sig, axis=0, dtype=np.float64))[None, :]
    gaps = data.gaps[k]
    if gaps.size:
        ll = ll - data.missing[k] @ log_sig[gaps].astype(np.float64)
    if params.c is not None:
        # Right answers: log P − ℓ on top, with log P = log(c + (1 − c)·e^ℓ).
        c = params.c[items, None].astype(dtype)
        log_p = np.exp(log_sig)
        log_p *= 1 - c
        log_p += c
        # Only an item with c = 0 far below its difficulty can underflow here.
        np.maximum(log_p, np.finfo(dtype).tiny, out=log_p)
        np.log(log_p, out=log_p)
        log_p -= log_sig
        ll = ll + right @ log_p.astype(np.float64)
    # The wrong answers' −z and log(1 − c): (N, 3) products, no grid.
    coef = block_coefficients(params, items, specific)
    out = ll - (wrong @ coef) @ design
    if params.c is not None:
        out += (wrong @ np.log1p(-params.c[items]))[:, None]
    return np.asarray(out)


def block_probability(params: BifactorParams, items: IntArray, design: FloatArray) -> FloatArray:
    """(J_k, M) P(right) of block items at the block's grid points (float64)."""
    z = block_coefficients(params, items, design.shape[0] == 3) @ design
    sigma = 1.0 / (1.0 + np.exp(-z))
    if params.c is None:
        return np.asarray(sigma)
    c = params.c[items, None]
    return np.asarray(c + (1 - c) * sigma)


@dataclass(frozen=True)
class Posterior:
    """Each subject's posterior on the grid: per group over (G, S), (N, Q·Q) (with the
    group's ``Answers.patterns``, summed over each pattern's subjects, (U, Q·Q)), and
    over G, (N, Q); log marginals (N,)."""

    groups: list[FloatArray]
    general: FloatArray
    log_marginal: FloatArray


def posterior(data: Answers, params: BifactorParams, x: FloatArray, log_w: FloatArray) -> Posterior:
    """The subjects' posteriors by the bifactor reduction (``irt.structures``'
    ``TieredGrid``) on the plane of ``x`` with log weights ``log_w`` on both axes."""
    n_groups = data.n_blocks - 1
    logliks = [block_log_likelihood(data, k, params, x, True) for k in range(n_groups)]
    logliks.append(block_log_likelihood(data, n_groups, params, x, False))
    plane = TieredGrid(n_groups, x[:, None], log_w, x, log_w)
    post = plane.posterior(logliks, data.patterns[:-1])
    return Posterior(list(post.blocks[:-1]), post.blocks[-1], post.log_marginal)


def e_step(
    data: Answers, params: BifactorParams, x: FloatArray, log_w: FloatArray
) -> tuple[Counts, float]:
    """Expected counts at the grid points holding posterior mass, and the marginal
    log-likelihood (summed in float64)."""
    post = posterior(data, params, x, log_w)
    n_counts: list[FloatArray] = []
    r_counts: list[FloatArray] = []
    supports: list[IntArray] = []
    floor = SUPPORT_FLOOR * data.n_subjects
    for k in range(data.n_blocks):
        weights = post.groups[k] if k < data.n_blocks - 1 else post.general
        mass = weights.sum(axis=0)
        keep = np.flatnonzero(mass > floor)
        on = weights[:, keep]
        r_counts.append(np.asarray(data.right_work[k].T @ on.astype(data.dtype), np.float64))
        n = np.repeat(mass[None, keep], data.items[k].size if data.gaps[k].size else 1, axis=0)
        if data.gaps[k].size:
            n[data.gaps[k]] -= data.missing[k].T @ on
            np.maximum(n, 0.0, out=n)  # rounding must not leave a negative count
        n_counts.append(n)
        supports.append(keep)
    return Counts(n_counts, r_counts, supports), float(np.sum(post.log_marginal))


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
    x = grid.points
    data = Answers.of(responses, params.group, len(params.groups))
    post = posterior(data, params, x, grid.log_weights)
    n_subjects = responses.n_subjects
    g_mean, g_sd = posterior_moments(post.general, x)
    specific = np.zeros((n_subjects, len(params.groups)))
    general = data.items[-1]
    expected_right = data.answered(-1) @ block_probability(params, general, block_design(x, False))
    expected = np.sum(post.general * expected_right, axis=1)
    design = block_design(x, specific=True)
    for k in range(len(params.groups)):
        specific[:, k] = post.groups[k] @ design[1]
        prob = block_probability(params, data.items[k], design)
        expected += np.sum(post.groups[k] * (data.answered(k) @ prob), axis=1)
    n_answered = responses.observed.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = np.where(n_answered > 0, expected / n_answered, np.nan)
    return BifactorScores(g_mean, g_sd, specific, np.asarray(accuracy))


def bifactor_log_likelihood(
    responses: ResponseMatrix, params: BifactorParams, n_quad: int = 31, bound: float = 6.0
) -> float:
    """The marginal log-likelihood of ``responses`` under ``params`` on the EM's grid."""
    if tuple(responses.item_ids) != params.item_ids:
        raise IRTError("the responses and the bifactor parameters must list the same items")
    grid = normal_grid(n_quad, bound)
    data = Answers.of(responses, params.group, len(params.groups))
    post = posterior(data, params, grid.points, grid.log_weights)
    return float(np.sum(post.log_marginal))
