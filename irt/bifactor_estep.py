"""The bifactor model's E-step, with the dimension reduction: given G the item groups
are independent, so a subject's likelihood is

    L_i = ∫ Π_k [ ∫ Π_{j ∈ k} f_ij(G, S) φ(S) dS ] · Π_{j general only} f_ij(G) φ(G) dG,

a sum over one two-dimensional grid per group however many groups there are (Gibbons &
Hedeker 1992; Cai, Yang & Hansen 2011): one (subjects × items) by (items × grid²)
product per group, in log space. Also the subjects' EAP scores and expected accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irt.bifactor_model import GENERAL_ONLY, BifactorParams
from irt.errors import IRTError
from irt.models import log_prob_pair
from irt.quadrature import normal_grid
from irt.responses import ResponseMatrix
from irt.types import FloatArray, IntArray


@dataclass(frozen=True)
class Answers:
    """Right and wrong answers (0/1 floats, 0 where missing) split by group: index ``k``
    for group k, the last entry for the general-only items."""

    items: list[IntArray]
    right: list[FloatArray]
    wrong: list[FloatArray]

    @classmethod
    def of(cls, responses: ResponseMatrix, codes: IntArray, n_groups: int) -> Answers:
        observed = responses.observed
        right_all = ((responses.values == 1) & observed).astype(np.float64)
        wrong_all = ((responses.values == 0) & observed).astype(np.float64)
        items = [np.flatnonzero(codes == k) for k in (*range(n_groups), GENERAL_ONLY)]
        return cls(items, [right_all[:, j] for j in items], [wrong_all[:, j] for j in items])


@dataclass(frozen=True)
class Counts:
    """Expected numbers answering (n) and right (r) per item at each grid point: (J_k,
    Q, Q) for a group's items over (G, S), (J_0, Q) for the general-only items."""

    n: list[FloatArray]
    r: list[FloatArray]


def _floor(params: BifactorParams, items: IntArray) -> FloatArray:
    """The items' lower asymptotes as a column against their (items, grid) logits."""
    return np.zeros((items.size, 1)) if params.c is None else params.c[items, None]


# The bifactor model has no upper asymptote below 1.
_CEILING = np.ones((1, 1))


def _logsumexp(x: FloatArray, axis: int) -> FloatArray:
    top = np.max(x, axis=axis, keepdims=True)
    return np.asarray(np.squeeze(top, axis=axis) + np.log(np.sum(np.exp(x - top), axis=axis)))


@dataclass(frozen=True)
class Posterior:
    """Each subject's posterior on the grid: per group over (G, S), (N, Q·Q), and over
    G, (N, Q); each group's item probabilities there, (J_k, Q·Q); log marginals (N,)."""

    groups: list[FloatArray]
    general: FloatArray
    log_p: list[FloatArray]
    log_marginal: FloatArray


def posterior(data: Answers, params: BifactorParams, x: FloatArray, log_w: FloatArray) -> Posterior:
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
        log_p, log_q = log_prob_pair(z.reshape(items.size, q * q), _floor(params, items), _CEILING)
        ll = (data.right[k] @ log_p + data.wrong[k] @ log_q).reshape(n_subjects, q, q)
        ll += log_w[None, None, :]
        own = _logsumexp(ll, axis=2)
        per_group_ll.append(ll)
        per_group_l.append(own)
        log_ps.append(log_p)
        group_log_l += own
    general = data.items[-1]
    z0 = params.a_general[general, None] * x[None, :] + params.d[general, None]
    log_p0, log_q0 = log_prob_pair(z0, _floor(params, general), _CEILING)
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
    return Posterior(posts, post_g, log_ps, log_marginal)


def e_step(
    data: Answers, params: BifactorParams, x: FloatArray, log_w: FloatArray
) -> tuple[Counts, float]:
    """Expected counts at the grid and the marginal log-likelihood."""
    q = x.size
    post = posterior(data, params, x, log_w)
    n_counts: list[FloatArray] = []
    r_counts: list[FloatArray] = []
    for k, items in enumerate(data.items[:-1]):
        answered = data.right[k] + data.wrong[k]
        n_counts.append((answered.T @ post.groups[k]).reshape(items.size, q, q))
        r_counts.append((data.right[k].T @ post.groups[k]).reshape(items.size, q, q))
    answered0 = data.right[-1] + data.wrong[-1]
    n_counts.append(answered0.T @ post.general)
    r_counts.append(data.right[-1].T @ post.general)
    return Counts(n_counts, r_counts), float(np.sum(post.log_marginal))


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
    data = Answers.of(responses, params.group, len(params.groups))
    post = posterior(data, params, x, grid.log_weights)
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


def bifactor_log_likelihood(
    responses: ResponseMatrix, params: BifactorParams, n_quad: int = 31, bound: float = 6.0
) -> float:
    """The marginal log-likelihood of ``responses`` under ``params`` on the EM's grid."""
    if tuple(responses.item_ids) != params.item_ids:
        raise IRTError("the responses and the bifactor parameters must list the same items")
    grid = normal_grid(n_quad, bound)
    data = Answers.of(responses, params.group, len(params.groups))
    return e_step(data, params, grid.points, grid.log_weights)[1]
