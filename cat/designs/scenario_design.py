"""The "mirt" design: a multidimensional model with one factor per scenario
(``irt.scenario_factors``) run by the low-rank design's machinery, asking the item that
most reduces the sum over scenarios of the variance of each scenario's predicted
accuracy — the profile a user reads — instead of the total's.

For scenario s with n_s items, g_s = Σ_{j ∈ s, unasked} ∂p_j/∂θ and Σ the posterior
covariance of θ, asking item j (slopes v_j, Fisher weight w_j) removes

    Σ_s [ [j ∈ s]·p_j(1 − p_j) + w_j (g_sᵀΣv_j)² / (1 + w_j v_jᵀΣv_j) ] / n_s²

(the same rank-one update as ``cat.designs.low_rank``, summed over the scenarios'
predicted scores): an A-optimal design for the scenario accuracies (c-optimality for
each, summed). On MMLU-Pro, replayed with held-out models, it kept the total's accuracy
of the unidimensional design and cut the per-category error by about a fifth at 250
items (README, "Multidimensional models").
"""

from __future__ import annotations

import numpy as np

from cat.designs.low_rank import LowRankModel, LowRankTest
from cat.errors import CatError
from irt.types import BoolArray, IntArray


class ScenarioFactorTest(LowRankTest):
    """The design's state for E examinees; ``scenario`` gives each item's code 0..S−1."""

    def __init__(
        self,
        model: LowRankModel,
        can_answer: BoolArray,
        max_items: int,
        scenario: IntArray,
    ) -> None:
        super().__init__(model, can_answer, max_items)
        codes = np.asarray(scenario, dtype=np.int_)
        if codes.shape != (model.loadings.shape[0],) or codes.min() < 0:
            raise CatError("the scenario design needs one scenario code per item")
        self.codes = codes
        self.masks = (codes[None, :] == np.arange(int(codes.max()) + 1)[:, None]).astype(
            np.float64
        )  # (S, J)
        # Each scenario's weight: its accuracy is its number right over its own items.
        self.weight = (
            1.0 / np.maximum(np.asarray(can_answer, dtype=np.float64) @ self.masks.T, 1.0) ** 2
        )

    def select(self, rows: IntArray, k: int = 1) -> IntArray:
        """(len(rows), k) the k items whose answers most reduce the summed variance of
        the scenarios' predicted accuracies."""
        v = self.model.loadings
        p, slope, weight = self._slopes_and_weights(rows)
        avail = self.available[rows]
        cov = self.cov[rows]  # (E, K, K)
        # g_s for every scenario: (E, S, K).
        g = np.einsum("sj,ej,jk->esk", self.masks, slope * avail, v)
        gs = np.einsum("esk,ekm->esm", g, cov)  # g_sᵀΣ
        w = self.weight[rows]  # (E, S)
        squared = np.einsum("es,esj->ej", w, np.einsum("esm,jm->esj", gs, v) ** 2)
        vsv = np.einsum("jk,ekm,jm->ej", v, cov, v)
        own = w[:, self.codes] * p * (1 - p)
        gain = own + weight * squared / (1.0 + weight * vsv)
        scores = np.where(avail, -gain, np.inf)
        if k == 1:
            return np.asarray(np.argmin(scores, axis=1)[:, None], dtype=np.int_)
        return np.asarray(np.argpartition(scores, k - 1, axis=1)[:, :k], dtype=np.int_)
