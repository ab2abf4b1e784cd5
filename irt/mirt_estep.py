"""The E-step of the compensatory multidimensional 2PL/3PL on a full product grid
(Bock & Aitkin 1981, extended to several correlated factors): in log space, each
subject's posterior over the grid nodes θ_q is

    post_iq ∝ w_q(R) · Π_{j answered by i} P_j(θ_q)^{y_ij} (1 − P_j(θ_q))^{1 − y_ij},

with w_q(R) the N(0, R) density at θ_q normalised to sum 1 over the grid (as R mirt
weights its equally spaced nodes, not Gauss–Hermite). Identical response patterns
(missing cells included) are collapsed and weighted by their counts, and the patterns
are taken in chunks so that no (patterns × nodes) array outgrows a few tens of MB.

Also the grid itself, the marginal log-likelihood, EAP scores with posterior SDs and
the model's expected accuracy (``mirt_scores``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from irt.errors import IRTError
from irt.estimation.scoring import posterior_moments
from irt.mirt_model import MirtParams
from irt.models import log_prob_pair
from irt.responses import ResponseMatrix
from irt.structures import normal_log_weights, normalised
from irt.types import FloatArray, IntArray

#: R mirt's points per dimension for 1..5 factors (``select_quadpts``): the product grid
#: stays near 1,000–17,000 nodes.
DEFAULT_POINTS = {1: 61, 2: 31, 3: 15, 4: 9, 5: 7}
#: A product grid with more nodes than this is refused: every E-step touches
#: (patterns × nodes) numbers several times.
MAX_GRID_POINTS = 200_000
# Patterns per chunk are chosen so that a chunk's (patterns × nodes) array holds at most
# this many numbers (16 MB of float64).
_CHUNK_CELLS = 2**21


def default_points(n_factors: int) -> int:
    """Points per dimension for ``n_factors`` factors: R mirt's choice up to 5 factors,
    5 beyond (a grid that the size limit still refuses past 7 factors)."""
    return DEFAULT_POINTS.get(n_factors, 5)


def product_grid(n_factors: int, n_quad: int | None = None, bound: float = 6.0) -> FloatArray:
    """Nodes (Q, K) of the product of ``n_quad`` equally spaced points on [−bound, bound]
    per factor (``default_points`` when None)."""
    n = default_points(n_factors) if n_quad is None else int(n_quad)
    if n < 3:
        raise IRTError(f"a quadrature grid needs at least 3 points per dimension, got {n}")
    if not bound > 0:
        raise IRTError(f"the quadrature bound must be positive, got {bound}")
    size = n**n_factors
    if size > MAX_GRID_POINTS:
        fewer = int(np.floor(MAX_GRID_POINTS ** (1.0 / n_factors)))
        raise IRTError(
            f"{n} points per dimension for {n_factors} factors make a grid of {size:,} nodes, "
            f"more than {MAX_GRID_POINTS:,}; use fewer points (n_quad <= {fewer})"
        )
    axis = np.linspace(-bound, bound, n)
    mesh = np.meshgrid(*([axis] * n_factors), indexing="ij")
    return np.stack([m.ravel() for m in mesh], axis=1)


#: log w_q: the N(0, R) density at the nodes, normalised to sum 1 over the grid.
log_weights = normal_log_weights


@dataclass(frozen=True)
class Patterns:
    """The distinct response patterns: right answers and answered items as 0/1 floats
    (P, J), both side by side (P, 2J), how many subjects gave each (P,), and each
    subject's pattern (N,)."""

    right: FloatArray
    answered: FloatArray
    both: FloatArray
    counts: FloatArray
    inverse: IntArray

    @classmethod
    def of(cls, responses: ResponseMatrix) -> Patterns:
        rows, inverse, counts = np.unique(
            responses.values, axis=0, return_inverse=True, return_counts=True
        )
        right = (rows == 1).astype(np.float64)
        answered = (rows >= 0).astype(np.float64)
        return cls(
            right=right,
            answered=answered,
            both=np.hstack([right, answered]),
            counts=counts.astype(np.float64),
            inverse=np.asarray(inverse, dtype=np.int_).ravel(),
        )

    @property
    def complete(self) -> bool:
        return bool(np.all(self.answered == 1.0))

    @property
    def n_subjects(self) -> float:
        return float(self.counts.sum())


def item_log_probs(params: MirtParams, points: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(log P, log(1 − P)) of every item at every node, each (J, Q)."""
    z = params.slopes @ points.T + params.d[:, None]
    floor = np.zeros((params.n_items, 1)) if params.c is None else params.c[:, None]
    return log_prob_pair(z, floor, np.ones((1, 1)))


@dataclass(frozen=True)
class Chunk:
    """The posterior (p, Q) of the patterns ``rows``, each row multiplied by its
    pattern's weight when ``posterior_chunks`` was given weights, and their log
    marginals (p,)."""

    rows: slice
    posterior: FloatArray
    log_marginal: FloatArray


def posterior_chunks(
    data: Patterns,
    log_p: FloatArray,
    log_q: FloatArray,
    log_w: FloatArray,
    weights: FloatArray | None = None,
) -> Iterator[Chunk]:
    """Each chunk of patterns' posterior on the grid (times ``weights`` per pattern, if
    given), from the items' log probabilities (J, Q) and the nodes' log weights (Q,)."""
    n_patterns, n_nodes = data.right.shape[0], log_w.size
    step = max(1, _CHUNK_CELLS // n_nodes)
    complete = data.complete
    if complete:
        # With every item answered, Σ_j log(1 − P_j) is one row for all patterns.
        design, loadings, base = data.right, log_p - log_q, log_w + log_q.sum(axis=0)
    else:
        design, loadings, base = data.both, np.vstack([log_p - log_q, log_q]), log_w
    for start in range(0, n_patterns, step):
        rows = slice(start, min(start + step, n_patterns))
        ll = design[rows] @ loadings
        ll += base
        log_marginal, post = normalised(ll)
        if weights is not None:
            post *= weights[rows, None]
        yield Chunk(rows, post, log_marginal)


@dataclass(frozen=True)
class Expected:
    """Expected numbers answering (n) and right (r) per item and node (J, Q), the
    posterior mass at each node summed over subjects (Q,), and the marginal
    log-likelihood at the parameters the E-step used."""

    n: FloatArray
    r: FloatArray
    mass: FloatArray
    loglik: float


def e_step(data: Patterns, params: MirtParams, points: FloatArray) -> Expected:
    """The expected counts under ``params`` and its marginal log-likelihood."""
    log_p, log_q = item_log_probs(params, points)
    log_w = log_weights(points, params.correlation)
    n_items, n_nodes = log_p.shape
    complete = data.complete
    counts = np.zeros((n_items if complete else 2 * n_items, n_nodes))
    mass = np.zeros(n_nodes)
    loglik = 0.0
    design = data.right if complete else data.both
    for chunk in posterior_chunks(data, log_p, log_q, log_w, data.counts):
        mass += chunk.posterior.sum(axis=0)
        counts += design[chunk.rows].T @ chunk.posterior
        loglik += float(data.counts[chunk.rows] @ chunk.log_marginal)
    if complete:
        return Expected(np.broadcast_to(mass, (n_items, n_nodes)).copy(), counts, mass, loglik)
    return Expected(counts[n_items:], counts[:n_items], mass, loglik)


def _checked(responses: ResponseMatrix, params: MirtParams) -> None:
    if tuple(responses.item_ids) != tuple(params.item_ids):
        raise IRTError("the responses and the parameters must list the same items in order")


def mirt_log_likelihood(
    responses: ResponseMatrix, params: MirtParams, n_quad: int | None = None, bound: float = 6.0
) -> float:
    """The marginal log-likelihood of ``responses`` under ``params`` on the product grid
    the calibrator uses (``n_quad`` points per dimension on [−bound, bound])."""
    _checked(responses, params)
    points = product_grid(params.n_factors, n_quad, bound)
    return e_step(Patterns.of(responses), params, points).loglik


@dataclass(frozen=True)
class MirtScores:
    """Per subject: EAP of each factor (N, K) and its posterior SD (N, K), and the
    model's expected accuracy on the items the subject answered (NaN if none)."""

    theta: FloatArray
    sd: FloatArray
    expected_accuracy: FloatArray


def mirt_scores(
    responses: ResponseMatrix, params: MirtParams, n_quad: int | None = None, bound: float = 6.0
) -> MirtScores:
    """EAP scores under ``params`` on the product grid, with posterior SDs, and each
    subject's posterior-expected accuracy on the items it answered (the model's own
    account of its score)."""
    _checked(responses, params)
    points = product_grid(params.n_factors, n_quad, bound)
    data = Patterns.of(responses)
    log_p, log_q = item_log_probs(params, points)
    prob = np.exp(log_p)
    n_patterns, k = data.right.shape[0], params.n_factors
    mean = np.zeros((n_patterns, k))
    sd = np.zeros((n_patterns, k))
    expected = np.zeros(n_patterns)
    for chunk in posterior_chunks(data, log_p, log_q, log_weights(points, params.correlation)):
        mean[chunk.rows], sd[chunk.rows] = posterior_moments(chunk.posterior, points)
        expected[chunk.rows] = np.sum((chunk.posterior @ prob.T) * data.answered[chunk.rows], 1)
    n_answered = data.answered.sum(axis=1)
    accuracy = np.full(n_patterns, np.nan)
    np.divide(expected, n_answered, out=accuracy, where=n_answered > 0)
    idx = data.inverse
    return MirtScores(mean[idx], sd[idx], accuracy[idx])
