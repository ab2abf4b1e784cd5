"""The multidimensional designs (``bifactor``, ``mirt``): the pool's multidimensional
model run by the low-rank design's machinery (MAP factors θ̂ with the Laplace posterior
covariance Σ, predictions averaged over it), choosing each next item by one of the
named criteria of ``cat.engine.registry.CriterionName``.

With item j's slopes v_j, Fisher weight w_j = p′²/(p(1 − p)) at θ̂, and the rank-one
update Σ' = Σ − w_j Σv_j v_jᵀΣ / (1 + w_j v_jᵀΣv_j) that asking it makes:

- ``total``: w_j (gᵀΣv_j)² / (1 + w_j v_jᵀΣv_j) + p_j(1 − p_j), with g = Σ_unasked ∂p/∂θ:
  the drop in the variance of the predicted number right (``LowRankTest.gain``).
- ``profile``: the same drop summed over the scenarios, each scenario's predicted
  accuracy over its own n_s items (weights 1/n_s²).
- ``general``: w_j (Σv_j)_G² / (1 + w_j v_jᵀΣv_j), the drop of Var(θ_G).
- ``d-optimal``: log det(Σ⁻¹ + w_j v_j v_jᵀ) − log det Σ⁻¹ = log(1 + w_j v_jᵀΣv_j)
  (matrix determinant lemma; Segall 1996's Bayesian D-optimality).
- ``a-optimal``: trace(Σ) − trace(Σ') = w_j |Σv_j|² / (1 + w_j v_jᵀΣv_j).
- ``kl``: E_{θ ~ N(θ̂, Σ)} KL(P_j(θ̂) ‖ P_j(θ)), the posterior-weighted
  Kullback–Leibler information (Chang & Ying 1996; multidimensional: Veldkamp & van der
  Linden 2002, Mulder & van der Linden 2009). P_j depends on θ only through
  z = v_j·θ + d_j ~ N(ẑ_j, v_jᵀΣv_j), so the expectation is one Gauss–Hermite sum per
  item, however many factors there are.

The first three serve a prediction (the total, the profile, the general factor's
rank); the last three sharpen θ as a whole, as the psychometric literature's
multidimensional CATs do.
"""

from __future__ import annotations

import numpy as np

from cat.designs.low_rank import LowRankModel, LowRankTest
from cat.engine.registry import CriterionName
from cat.errors import CatError
from irt.families.coordinates import sigmoid
from irt.types import BoolArray, FloatArray, IntArray

#: Gauss–Hermite points of the KL criterion's expectation over z.
KL_POINTS = 15
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(KL_POINTS)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()
_EPS = 1e-12


class MultidimensionalTest(LowRankTest):
    """The design's state for E examinees under ``criterion``. ``scenario`` (each
    item's code 0..S−1) is needed by ``profile``; ``general`` (the general factor's
    column in the model's loadings) by ``general``."""

    def __init__(
        self,
        model: LowRankModel,
        can_answer: BoolArray,
        max_items: int,
        criterion: CriterionName,
        scenario: IntArray | None = None,
        general: int | None = None,
    ) -> None:
        super().__init__(model, can_answer, max_items)
        self.criterion = CriterionName(criterion)
        if self.criterion is CriterionName.GENERAL and (
            general is None or not 0 <= general < model.dims
        ):
            raise CatError(
                "the general criterion needs a model with a general factor (a bifactor pool)"
            )
        self.general = general
        self.codes: IntArray | None = None
        if self.criterion is CriterionName.PROFILE:
            if scenario is None:
                raise CatError("the profile criterion needs each item's scenario")
            codes = np.asarray(scenario, dtype=np.int_)
            if codes.shape != (model.loadings.shape[0],) or codes.min() < 0:
                raise CatError("the profile criterion needs one scenario code per item")
            self.codes = codes
            self.masks = (codes[None, :] == np.arange(int(codes.max()) + 1)[:, None]).astype(
                np.float64
            )  # (S, J)
            # Each scenario's accuracy is its number right over its own items.
            answerable = np.asarray(can_answer, dtype=np.float64) @ self.masks.T
            self.scenario_weight = 1.0 / np.maximum(answerable, 1.0) ** 2  # (E, S)

    def gain(self, rows: IntArray) -> FloatArray:
        """(len(rows), J) each item's value under the criterion (larger is better)."""
        if self.criterion is CriterionName.TOTAL:
            return super().gain(rows)
        if self.criterion is CriterionName.PROFILE:
            return self._profile_gain(rows)
        if self.criterion is CriterionName.KL:
            return self._kl_gain(rows)
        v = self.model.loadings
        _, _, weight = self._slopes_and_weights(rows)
        cov = self.cov[rows]
        sv = np.einsum("ekm,jm->ejk", cov, v)  # Σv_j: (E, J, K)
        vsv = np.einsum("jk,ejk->ej", v, sv)
        if self.criterion is CriterionName.D_OPTIMAL:
            return np.asarray(np.log1p(weight * vsv))
        if self.criterion is CriterionName.A_OPTIMAL:
            return np.asarray(weight * np.sum(sv**2, axis=2) / (1.0 + weight * vsv))
        assert self.general is not None
        return np.asarray(weight * sv[:, :, self.general] ** 2 / (1.0 + weight * vsv))

    def _profile_gain(self, rows: IntArray) -> FloatArray:
        assert self.codes is not None
        v = self.model.loadings
        p, slope, weight = self._slopes_and_weights(rows)
        cov = self.cov[rows]  # (E, K, K)
        # g_s for every scenario: (E, S, K).
        g = np.einsum("sj,ej,jk->esk", self.masks, slope * self.available[rows], v)
        gs = np.einsum("esk,ekm->esm", g, cov)  # g_sᵀΣ
        w = self.scenario_weight[rows]  # (E, S)
        squared = np.einsum("es,esj->ej", w, np.einsum("esm,jm->esj", gs, v) ** 2)
        vsv = np.einsum("jk,ekm,jm->ej", v, cov, v)
        own = w[:, self.codes] * p * (1 - p)
        return np.asarray(own + weight * squared / (1.0 + weight * vsv))

    def _kl_gain(self, rows: IntArray) -> FloatArray:
        v, d = self.model.loadings, self.model.intercepts
        z_hat = self.u[rows] @ v.T + d  # (E, J)
        spread = np.sqrt(np.einsum("jk,ekm,jm->ej", v, self.cov[rows], v))
        floor = self._floor(slice(None))
        p0 = np.clip(floor + (1 - floor) * sigmoid(z_hat), _EPS, 1 - _EPS)
        z = z_hat[..., None] + spread[..., None] * _NODES  # (E, J, points)
        p = np.clip(floor[:, None] + (1 - floor[:, None]) * sigmoid(z), _EPS, 1 - _EPS)
        p0 = p0[..., None]
        kl = p0 * np.log(p0 / p) + (1 - p0) * np.log((1 - p0) / (1 - p))
        return np.asarray(kl @ _WEIGHTS)
