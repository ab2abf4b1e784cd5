"""The new model in the references' low-rank space (``irt.exploratory.low_rank``).

Its factors u are found by MAP under a Gaussian prior taken from the references' u, by
Newton steps that are halved until the penalised log-likelihood rises: undamped steps
diverged on adaptively chosen items in the DESIGN.md prototype, whose items are the
least typical. The predicted accuracy is the answers given plus Σ over the rest of
E[σ(u·v_j + b_j)] under the Laplace posterior (the probit approximation of the mean).

Selection asks the item that most reduces the variance of the predicted number right on
the unasked items: its own Bernoulli variance p(1 − p), which leaves the sum once asked,
plus the rank-one drop of gᵀΣg, with g = Σ_rest ∂p_j/∂u and Σ the posterior covariance
of u (a c-optimal design for the predicted score).

The same machinery runs any compensatory multidimensional logistic model with a Gaussian
prior: a model may carry lower asymptotes (``floor``, the M3PL's c), as the bifactor
design's does (``LowRankModel.from_mirt``). Then p = c + (1 − c)·σ(z), the MAP steps
are Fisher scoring with weight w = p′²/(p(1 − p)), p′ = (1 − c)·σ(z)(1 − σ(z)), and the
rank-one drop is w·(gᵀΣv_j)²/(1 + w·v_jᵀΣv_j).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cat.errors import CatError
from irt.exploratory.low_rank import softplus
from irt.families.coordinates import sigmoid
from irt.mirt_model import MirtParams
from irt.models import log_prob_pair
from irt.types import BoolArray, FloatArray, IntArray

NEWTON_STEPS = 20
HALVINGS = 12


@dataclass(frozen=True)
class LowRankModel:
    """The references' low-rank fit: item ``loadings`` (J, K) and ``intercepts`` (J,), and
    the prior of a new subject's factors (``prior_mean`` (K,), ``prior_precision`` (K, K));
    ``floor`` (J,), when given, the items' lower asymptotes; ``offset`` what the
    predictions take off each unasked item's expected score (the model's drift on its
    references, as the unidimensional plug-in's)."""

    loadings: FloatArray
    intercepts: FloatArray
    prior_mean: FloatArray
    prior_precision: FloatArray
    floor: FloatArray | None = None
    offset: float = 0.0

    @classmethod
    def from_mirt(cls, params: MirtParams, offset: float = 0.0) -> LowRankModel:
        """A multidimensional IRT model with its own prior on θ, N(0, R)."""
        precision = np.asarray(np.linalg.inv(params.correlation), dtype=np.float64)
        return cls(
            np.asarray(params.slopes, dtype=np.float64),
            np.asarray(params.d, dtype=np.float64),
            np.zeros(params.n_factors),
            precision,
            None if params.c is None else np.asarray(params.c, dtype=np.float64),
            offset,
        )

    @classmethod
    def from_fit(
        cls, person: FloatArray, loadings: FloatArray, intercepts: FloatArray
    ) -> LowRankModel:
        """The prior is the references' mean u and covariance (with a small ridge)."""
        k = person.shape[1]
        cov = np.cov(person, rowvar=False).reshape(k, k) + 1e-3 * np.eye(k)
        precision = np.asarray(np.linalg.inv(cov), dtype=np.float64)
        return cls(loadings, intercepts, person.mean(axis=0), precision)

    @property
    def dims(self) -> int:
        return int(self.loadings.shape[1])

    @property
    def prior_covariance(self) -> FloatArray:
        return np.asarray(np.linalg.inv(self.prior_precision), dtype=np.float64)


class LowRankTest:
    """The low-rank design's state for E examinees tested together (the same methods as
    ``cat.designs.mixture.MixtureTest``)."""

    def __init__(self, model: LowRankModel, can_answer: BoolArray, max_items: int) -> None:
        can_answer = np.asarray(can_answer, dtype=bool)
        if can_answer.ndim != 2 or can_answer.shape[1] != model.loadings.shape[0]:
            raise CatError("the examinees' answerable items must cover the model's items")
        self.model = model
        n_exam = can_answer.shape[0]
        self.available = can_answer.copy()
        self.n_total = can_answer.sum(axis=1)
        self.items = np.zeros((n_exam, max_items), dtype=np.int_)
        self.right = np.zeros((n_exam, max_items))
        self.count = np.zeros(n_exam, dtype=np.int_)
        self.right_given = np.zeros(n_exam)
        self.u = np.tile(model.prior_mean, (n_exam, 1))
        self.cov = np.tile(model.prior_covariance, (n_exam, 1, 1))
        # v_j v_jᵀ flattened, (J, K²): v_jᵀΣv_j of every item for E covariances is one
        # matrix product (an einsum over (E, J, K, K) took 23 of 33 s of a replay).
        v = model.loadings
        self._outer = (v[:, :, None] * v[:, None, :]).reshape(len(v), -1)

    def _quadratic(self, rows: IntArray) -> FloatArray:
        """(len(rows), J): v_jᵀΣv_j, each item's loadings through each examinee's Σ."""
        cov = self.cov[rows]
        return np.asarray(cov.reshape(len(cov), -1) @ self._outer.T)

    def _floor(self, items: IntArray | slice) -> FloatArray:
        floor = self.model.floor
        return np.zeros(1) if floor is None else np.asarray(floor[items])

    def _objective(
        self,
        u: FloatArray,
        v: FloatArray,
        b: FloatArray,
        x: FloatArray,
        mask: FloatArray,
        floor: FloatArray,
    ) -> FloatArray:
        z = np.einsum("ek,elk->el", u, v) + b
        if self.model.floor is None:
            nll = (mask * (softplus(z) - x * z)).sum(axis=1)
        else:
            log_p, log_q = log_prob_pair(z, floor, np.ones(1))
            nll = -(mask * (x * log_p + (1 - x) * log_q)).sum(axis=1)
        d = u - self.model.prior_mean
        return np.asarray(nll + 0.5 * np.einsum("ek,kl,el->e", d, self.model.prior_precision, d))

    @staticmethod
    def _score_and_weight(
        z: FloatArray, x: FloatArray, floor: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        """d log-likelihood / dz at answers x, and the Fisher weight p′²/(p(1 − p))."""
        sig = sigmoid(z)
        p = floor + (1 - floor) * sig
        slope = (1 - floor) * sig * (1 - sig)
        q = np.clip(p * (1 - p), 1e-300, None)
        return (x - p) * slope / q, slope**2 / q

    def _fit(self, rows: IntArray) -> None:
        width = int(self.count[rows].max())
        items = self.items[rows, :width]
        mask = (np.arange(width)[None, :] < self.count[rows, None]).astype(np.float64)
        v = self.model.loadings[items]  # (E, L, K)
        b = self.model.intercepts[items]
        floor = self._floor(items)
        x = self.right[rows, :width]
        u = self.u[rows].copy()
        prec = self.model.prior_precision
        current = self._objective(u, v, b, x, mask, floor)
        for _ in range(NEWTON_STEPS):
            score, weight = self._score_and_weight(np.einsum("ek,elk->el", u, v) + b, x, floor)
            grad = -np.einsum("el,elk->ek", mask * score, v) + (u - self.model.prior_mean) @ prec
            hess = _weighted_gram(mask * weight, v) + prec
            step = np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
            scale = np.ones(len(rows))
            moving = np.ones(len(rows), dtype=bool)
            for _ in range(HALVINGS):
                trial = u - scale[:, None] * step
                value = self._objective(trial, v, b, x, mask, floor)
                better = value <= current + 1e-12
                accept = moving & better
                u[accept], current[accept] = trial[accept], value[accept]
                moving &= ~better
                scale[moving] *= 0.5
                if not moving.any():
                    break
            if np.max(np.abs(step * scale[:, None])) < 1e-6:
                break
        _, weight = self._score_and_weight(np.einsum("ek,elk->el", u, v) + b, x, floor)
        hess = _weighted_gram(mask * weight, v) + prec
        self.u[rows] = u
        self.cov[rows] = np.linalg.inv(hess)

    def _probabilities(self, rows: IntArray) -> tuple[FloatArray, FloatArray]:
        """(mean p, plug-in p) for every item: the mean under the Laplace posterior."""
        v, b = self.model.loadings, self.model.intercepts
        z = self.u[rows] @ v.T + b
        spread = self._quadratic(rows)
        floor = self._floor(slice(None))
        mean = floor + (1 - floor) * sigmoid(z / np.sqrt(1.0 + np.pi * spread / 8.0))
        return mean, floor + (1 - floor) * sigmoid(z)

    def _slopes_and_weights(self, rows: IntArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """(p, ∂p/∂z, Fisher weight) of every item at the plug-in u."""
        z = self.u[rows] @ self.model.loadings.T + self.model.intercepts
        floor = self._floor(slice(None))
        sig = sigmoid(z)
        p = floor + (1 - floor) * sig
        slope = (1 - floor) * sig * (1 - sig)
        return p, slope, slope**2 / np.clip(p * (1 - p), 1e-300, None)

    def gain(self, rows: IntArray) -> FloatArray:
        """(len(rows), J) how much asking each item would reduce the variance of the
        predicted number right on the unasked items."""
        v = self.model.loadings
        p, slope, weight = self._slopes_and_weights(rows)
        g = (slope * self.available[rows]) @ v  # (E, K)
        sg = np.einsum("ekm,em->ek", self.cov[rows], g)
        gsv = sg @ v.T  # (E, J): gᵀΣv_j
        vsv = self._quadratic(rows)
        return np.asarray(p * (1 - p) + weight * gsv**2 / (1.0 + weight * vsv))

    def select(self, rows: IntArray, k: int = 1) -> IntArray:
        """(len(rows), k) the k available items of largest ``gain`` for each examinee
        in ``rows``."""
        scores = np.where(self.available[rows], -self.gain(rows), np.inf)
        if k == 1:
            return np.asarray(np.argmin(scores, axis=1)[:, None], dtype=np.int_)
        return np.asarray(np.argpartition(scores, k - 1, axis=1)[:, :k], dtype=np.int_)

    def preference(self, rows: IntArray) -> FloatArray:
        """(len(rows), J) how much the design would like each item next: larger is
        better (the audit items' tie-break, ``cat.designs.audited``)."""
        return np.asarray(self.gain(rows))

    def record(self, rows: IntArray, items: IntArray, right: FloatArray) -> None:
        """Examinees ``rows`` answered ``items`` (one per row) with ``right`` (1/0)."""
        if not self.available[rows, items].all():
            raise CatError("an item was asked twice or could not be asked")
        if (self.count[rows] >= self.items.shape[1]).any():
            raise CatError("more answers than the test's length")
        self.items[rows, self.count[rows]] = items
        self.right[rows, self.count[rows]] = right
        self.count[rows] += 1
        self.available[rows, items] = False
        self.right_given[rows] += right

    def skip(self, rows: IntArray, items: IntArray) -> None:
        """Examinees ``rows`` cannot answer ``items`` (one per row): they leave the items
        the prediction is over."""
        if not self.available[rows, items].all():
            raise CatError("an item was asked twice or could not be asked")
        self.available[rows, items] = False
        self.n_total[rows] -= 1

    def spread(self, mask: BoolArray | None = None) -> FloatArray:
        """(E,) the sd of the number right on the unasked items (those in ``mask`` (J,)
        only, when given): u's posterior through g = Σ ∂p_j/∂u, and the Bernoulli
        chance of the answers not seen."""
        rows = np.arange(len(self.u))
        p, slope, _ = self._slopes_and_weights(rows)
        left = self.available if mask is None else self.available & mask
        g = (slope * left) @ self.model.loadings
        through_u = np.einsum("ek,ekm,em->e", g, self.cov, g)
        return np.asarray(np.sqrt(through_u + (p * (1 - p) * left).sum(axis=1)))

    def item_expectations(self) -> FloatArray:
        """(E, J) each item's chance of a right answer under u's Laplace posterior, less
        the model's ``offset``."""
        mean_p = self._probabilities(np.arange(len(self.u)))[0]
        return mean_p if not self.model.offset else np.clip(mean_p - self.model.offset, 0, 1)

    def answer_chances(self) -> FloatArray:
        """(E, J) the chances the model's likelihood gives a right answer."""
        return self._probabilities(np.arange(len(self.u)))[0]

    def refit(self, rows: IntArray) -> None:
        """Re-estimate u for examinees ``rows`` after their latest answers."""
        if rows.size:
            self._fit(rows)

    def predicted_accuracy(self) -> FloatArray:
        """(E,) right answers given plus the expected number right on the rest."""
        rest = (self.item_expectations() * self.available).sum(axis=1)
        return np.asarray((self.right_given + rest) / np.maximum(self.n_total, 1))


def _weighted_gram(weight: FloatArray, v: FloatArray) -> FloatArray:
    """(E, K, K): Σ_l weight[e, l]·v[e, l]·v[e, l]ᵀ, as one batched matrix product."""
    return np.asarray(np.matmul((v * weight[:, :, None]).transpose(0, 2, 1), v))


def low_rank_accuracy(
    model: LowRankModel, can_answer: BoolArray, given: BoolArray, right: FloatArray
) -> FloatArray:
    """The low-rank predicted accuracy of E examinees given the items ``given`` (E, J)
    with answers ``right`` (E, J; read where given) by any design."""
    return scored_test(model, can_answer, given, right).predicted_accuracy()


def scored_test(
    model: LowRankModel, can_answer: BoolArray, given: BoolArray, right: FloatArray
) -> LowRankTest:
    """The design's state for E examinees after the items ``given`` (E, J) with answers
    ``right`` (E, J; read where given), whatever chose them: ``u`` their MAP factors and
    ``cov`` their Laplace covariances."""
    given = np.asarray(given, dtype=bool) & np.asarray(can_answer, dtype=bool)
    n_given = given.sum(axis=1)
    test = LowRankTest(model, can_answer, max(int(n_given.max()), 1))
    for e in range(len(given)):
        cols = np.flatnonzero(given[e])
        test.items[e, : cols.size] = cols
        test.right[e, : cols.size] = right[e, cols] > 0.5
    test.count = n_given
    test.available &= ~given
    test.right_given = (given * (right > 0.5)).sum(axis=1).astype(np.float64)
    test.refit(np.flatnonzero(n_given > 0))
    return test
