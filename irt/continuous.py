"""Item models for continuous scores x in [0, 1] on one latent trait θ ~ N(0, 1), such as
the similarity (ROUGE-L, BLEU, embedding cosine) of a language model's free-text answer
to a reference. Both are in slope–intercept form, η = aθ + d with a > 0:

- ``crm`` — Samejima's (1973) continuous response model in the form of Wang & Zeng
  (1998): on the logit scale y = log(x / (1 − x)) the score is normal,
  y | θ ~ N(aθ + d, σ²). On the x scale the density carries the Jacobian 1/(x(1 − x)).
  The Fisher information for θ is a²/σ² at every θ (the logit is one-to-one, so x and y
  carry the same information).
- ``beta`` — the Beta IRT model of Noel & Dauvier (2007), with a slope:
  x | θ ~ Beta(m, n), m = exp((η + τ)/2), n = exp((−η + τ)/2), so that
  E[x | θ] = m/(m + n) = σ(η), log(m n) = τ sets the precision, and the item has the
  same three parameters as the CRM.

Both densities are exponential families in two statistics of x, so for either model

    log f(x | θ) = A(θ) + B(θ) t₁(x) + C(θ) t₂(x) − log(x(1 − x))

with (t₁, t₂) = (y, y²) for the CRM (A = −½ log 2π − log σ − μ²/(2σ²), B = μ/σ²,
C = −1/(2σ²), μ = aθ + d) and (log x, log(1 − x)) for the Beta (A = −log B(m, n),
B = m, C = n). The EM (``irt.continuous_em``) works on these coefficients: the
log-likelihood of every subject at every quadrature node is three matrix products.

The Beta's Fisher information for η follows from the information matrix of Beta(m, n)
in (m, n) — ψ₁(m) − ψ₁(m + n), ψ₁(n) − ψ₁(m + n) on the diagonal, −ψ₁(m + n) off it
(ψ₁ the trigamma function) — and ∂(m, n)/∂η = (m/2, −n/2):

    I_η = ¼ [m² ψ₁(m) + n² ψ₁(n) − (m − n)² ψ₁(m + n)],   I(θ) = a² I_η,

computed in a form without cancellation (``irt.continuous_kernels.beta_information``).

Scores of exactly 0 or 1, common for similarity metrics, have no density under either
model: they are clipped to [ε, 1 − ε] with ε = ``DEFAULT_EPSILON`` unless told, and ε
travels with the parameters (``ContinuousParams.epsilon``) so that a fit and its
scoring clip alike. A log-likelihood on data with many clipped scores depends on ε.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import ClassVar, Literal

import numpy as np

from irt.continuous_kernels import (
    DEFAULT_EPSILON,
    beta_eta_information,
    beta_shapes,
    check_epsilon,
    check_scores,
    clip_scores,
    coefficients,
    log_jacobian,
    statistics,
)
from irt.errors import ParamsError
from irt.item_checks import case_blind_member, checked_item_types, item_type, item_vector
from irt.parameter_set import UnitScores, bernoulli_probabilities, item_positions
from irt.types import BoolArray, FloatArray, IntArray

__all__ = ["DEFAULT_EPSILON", "ContinuousParams", "ContinuousType"]

# Gauss–Hermite nodes for the CRM's E[x | θ] = E[σ(y)] (a logistic-normal mean).
_GH_NODES, _GH_WEIGHTS = np.polynomial.hermite_e.hermegauss(40)
_GH_WEIGHTS = _GH_WEIGHTS / _GH_WEIGHTS.sum()


class ContinuousType(StrEnum):
    """A continuous item model."""

    CRM = "crm"
    BETA = "beta"

    @classmethod
    def _missing_(cls, value: object) -> ContinuousType | None:
        return case_blind_member(cls, value)


@dataclass(frozen=True)
class ContinuousParams(UnitScores):
    """J continuous items on one θ: slopes ``a`` > 0 and intercepts ``d`` (J,), the
    CRM's residual SD ``sigma`` on the logit scale (NaN for Beta items) and the Beta's
    log precision ``tau`` (NaN for CRM items); optional standard errors shaped alike;
    ``epsilon`` the clipping of scores at 0 and 1. A ``irt.ParameterSet``: a score's
    "category probabilities" are (1 − E[x | θ], E[x | θ]), on the scores 0 and 1."""

    family: ClassVar[Literal["continuous"]] = "continuous"
    scored: ClassVar[Literal[True]] = True
    n_dimensions: ClassVar[int] = 1

    item_ids: tuple[str, ...]
    item_types: tuple[ContinuousType, ...]
    a: FloatArray
    d: FloatArray
    sigma: FloatArray
    tau: FloatArray
    epsilon: float = DEFAULT_EPSILON
    se_a: FloatArray | None = field(default=None, compare=False)
    se_d: FloatArray | None = field(default=None, compare=False)
    se_sigma: FloatArray | None = field(default=None, compare=False)
    se_tau: FloatArray | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        n = len(self.item_ids)
        types = checked_item_types(ContinuousType, self.item_ids, self.item_types)
        object.__setattr__(self, "item_types", types)
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        for name in ("a", "d", "sigma", "tau"):
            object.__setattr__(self, name, item_vector(name, getattr(self, name), n))
        for j, item in enumerate(self.item_ids):
            self._check_item(j, item)
        for name in ("se_a", "se_d", "se_sigma", "se_tau"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, item_vector(name, getattr(self, name), n))

    def _check_item(self, j: int, item: str) -> None:
        if not (np.isfinite(self.a[j]) and self.a[j] > 0):
            raise ParamsError(f"item {item!r}: the slope a must be positive, got {self.a[j]}")
        if not np.isfinite(self.d[j]):
            raise ParamsError(f"item {item!r}: the intercept d must be finite, got {self.d[j]}")
        own, other = (
            ("sigma", "tau") if self.item_types[j] is ContinuousType.CRM else ("tau", "sigma")
        )
        value = getattr(self, own)[j]
        if not np.isfinite(value) or (own == "sigma" and not value > 0):
            need = "positive" if own == "sigma" else "finite"
            raise ParamsError(f"item {item!r}: {own} must be {need}, got {value}")
        if not np.isnan(getattr(self, other)[j]):
            raise ParamsError(
                f"item {item!r} is {self.item_types[j].value}; only "
                f"{'beta' if other == 'tau' else 'crm'} items have {other} (leave it NaN)"
            )

    @classmethod
    def create(
        cls,
        item_types: Sequence[ContinuousType | str] | ContinuousType | str,
        a: object,
        d: object,
        dispersion: object,
        *,
        item_ids: Sequence[str] | None = None,
        epsilon: float = DEFAULT_EPSILON,
    ) -> ContinuousParams:
        """From one type for all items or one per item, slopes, intercepts and each
        item's ``dispersion`` (σ for a CRM item, τ for a Beta one); ids ``i0000``…"""
        a_arr = np.array(a, dtype=np.float64, ndmin=1)
        n = a_arr.shape[0]
        raw = [item_types] * n if isinstance(item_types, str | ContinuousType) else item_types
        ids = tuple(item_ids) if item_ids is not None else tuple(f"i{j:04d}" for j in range(n))
        types = tuple(item_type(ContinuousType, t, i) for t, i in zip(raw, ids, strict=False))
        disp = item_vector("dispersion", dispersion, n)
        crm = np.array([t is ContinuousType.CRM for t in types], dtype=bool)
        if crm.shape != (n,):
            raise ParamsError(f"{crm.size} item types for {n} items")
        return cls(
            item_ids=ids,
            item_types=types,
            a=a_arr,
            d=np.array(d, dtype=np.float64, ndmin=1),
            sigma=np.where(crm, disp, np.nan),
            tau=np.where(crm, np.nan, disp),
            epsilon=epsilon,
        )

    @property
    def is_continuous(self) -> BoolArray:
        return np.ones(self.n_items, dtype=bool)

    @property
    def is_crm(self) -> BoolArray:
        """True for CRM items, (J,)."""
        return np.array([t is ContinuousType.CRM for t in self.item_types], dtype=bool)

    @property
    def dispersion(self) -> FloatArray:
        """σ for CRM items and τ for Beta items, (J,)."""
        return np.asarray(np.where(self.is_crm, self.sigma, self.tau))

    def _pairs(self, theta: object, items: object | None) -> tuple[FloatArray, IntArray]:
        th = np.asarray(theta, dtype=np.float64)
        if items is None:
            return th.reshape(-1)[:, None], np.arange(self.n_items)[None, :]
        pos = np.asarray(items, dtype=np.int_).reshape(-1)
        th = th.reshape(-1)
        if th.shape != pos.shape:
            raise ParamsError(f"{th.size} abilities for {pos.size} items")
        if pos.size and (pos.min() < -self.n_items or pos.max() >= self.n_items):
            raise ParamsError(f"item position out of range 0..{self.n_items - 1}")
        return th, pos

    def log_density(self, theta: object, x: object, items: object | None = None) -> FloatArray:
        """log f_j(x | θ) on the x scale (clipped at ε; NaN where x is NaN).

        Without ``items``: ``x`` is one score per item (J,) or a (T, J) array, the result
        (T, J) over ``theta`` (T,). With ``items`` (N,) positions: pairs, ``theta``,
        ``items`` and ``x`` all (N,), the result (N,)."""
        th, pos = self._pairs(theta, items)
        xs = np.asarray(x, dtype=np.float64)
        shape = np.broadcast_shapes(th.shape, pos.shape)
        if xs.shape not in (shape, shape[-1:]):
            raise ParamsError(f"scores have shape {xs.shape}, expected {shape[-1:]} or {shape}")
        check_scores(xs)
        xc = clip_scores(np.broadcast_to(xs, shape), self.epsilon)
        crm = self.is_crm[pos]
        with np.errstate(invalid="ignore"):
            t1, t2 = statistics(crm, xc)
            a_c, b_c, c_c = coefficients(crm, self.a[pos] * th + self.d[pos], self.dispersion[pos])
            return np.asarray(a_c + b_c * t1 + c_c * t2 + log_jacobian(xc))

    def expected(self, theta: object) -> FloatArray:
        """E[x_j | θ], (T, J): σ(η) for Beta items; E[σ(y)], y ~ N(η, σ²), for CRM
        items (40-point Gauss–Hermite)."""
        th = np.asarray(theta, dtype=np.float64).reshape(-1)
        eta = th[:, None] * self.a + self.d  # (T, J)
        sig = np.where(self.is_crm, self.sigma, 0.0)
        crm_mean = expit(eta[..., None] + sig[:, None] * _GH_NODES) @ _GH_WEIGHTS
        return np.asarray(np.where(self.is_crm, crm_mean, expit(eta)))

    def expected_score(self, theta: object) -> FloatArray:
        """E[x_j | θ], (T, J) (``expected``)."""
        return self.expected(theta)

    def probabilities(self, theta: object) -> FloatArray:
        """(1 − E[x_j | θ], E[x_j | θ]), (T, J, 2): the two-point reading of a score in
        [0, 1] with its mean, which ``irt.ParameterSet`` gives for continuous items."""
        return bernoulli_probabilities(self.expected(theta))

    def log_likelihood(self, theta: object, responses: object) -> FloatArray:
        """Σ_j log f_j(x_tj | θ_t) of each row of scores ``responses`` (T, J; NaN =
        missing) at its own θ, (T,) (``log_density``)."""
        x = np.atleast_2d(np.asarray(responses, dtype=np.float64))
        th = np.asarray(theta, dtype=np.float64).reshape(-1)
        if x.shape != (th.size, self.n_items):
            raise ParamsError(f"scores have shape {x.shape}, expected {(th.size, self.n_items)}")
        density = self.log_density(th, x)
        return np.asarray(np.where(np.isnan(x), 0.0, density).sum(axis=1))

    def draw(self, theta: object, items: object, rng: np.random.Generator) -> FloatArray:
        """One score per (θ_n, item_n) pair drawn from the item's model, (N,): σ(y),
        y ~ N(η, σ²), for the CRM; Beta(m, n) for the Beta (not clipped)."""
        pos = np.asarray(items, dtype=np.int_)
        eta = self.a[pos] * np.asarray(theta, dtype=np.float64) + self.d[pos]
        crm = self.is_crm[pos]
        y = eta + np.where(crm, self.sigma[pos], 0.0) * rng.standard_normal(eta.shape)
        m, n = beta_shapes(np.where(crm, 0.0, eta), np.where(crm, 0.0, self.tau[pos]))
        return np.asarray(np.where(crm, 1.0 / (1.0 + np.exp(-y)), rng.beta(m, n)))

    def person_fit(self, theta: object, items: object, responses: object) -> float:
        """NaN: lz is defined for discrete scores."""
        return float("nan")

    def variance(self, theta: object) -> FloatArray:
        """Var[x_j | θ], (T, J): σ(η)(1 − σ(η))/(1 + m + n) for Beta items; for CRM items
        E[σ(y)²] − E[σ(y)]² (40-point Gauss–Hermite). Scores are not clipped here."""
        th = np.asarray(theta, dtype=np.float64).reshape(-1)
        eta = th[:, None] * self.a + self.d
        sig = np.where(self.is_crm, self.sigma, 0.0)
        at_nodes = expit(eta[..., None] + sig[:, None] * _GH_NODES)
        crm_var = at_nodes**2 @ _GH_WEIGHTS - (at_nodes @ _GH_WEIGHTS) ** 2
        m, n = beta_shapes(eta, np.where(self.is_crm, 0.0, self.tau))
        mean = expit(eta)
        return np.asarray(np.where(self.is_crm, crm_var, mean * (1 - mean) / (1 + m + n)))

    def information(self, theta: object) -> FloatArray:
        """Fisher information for θ, (T, J): a²/σ² (CRM), a² I_η (Beta)."""
        th = np.asarray(theta, dtype=np.float64).reshape(-1)
        eta = th[:, None] * self.a + self.d
        m, n = beta_shapes(eta, np.where(self.is_crm, 0.0, self.tau))
        beta_info = beta_eta_information(m, n)
        crm_info = 1.0 / np.where(self.is_crm, self.sigma, 1.0) ** 2
        return np.asarray(self.a**2 * np.where(self.is_crm, crm_info, beta_info))

    def test_information(self, theta: object) -> FloatArray:
        """Σ_j I_j(θ), (T,)."""
        return np.asarray(self.information(theta).sum(axis=1))

    def subset(self, items: object) -> ContinuousParams:
        """The items selected by ids (a sequence of str) or a numpy index, in that order."""
        idx = item_positions(self.item_ids, items)

        def pick(values: FloatArray | None) -> FloatArray | None:
            return None if values is None else values[idx]

        return ContinuousParams(
            item_ids=tuple(self.item_ids[k] for k in idx),
            item_types=tuple(self.item_types[k] for k in idx),
            a=self.a[idx],
            d=self.d[idx],
            sigma=self.sigma[idx],
            tau=self.tau[idx],
            epsilon=self.epsilon,
            se_a=pick(self.se_a),
            se_d=pick(self.se_d),
            se_sigma=pick(self.se_sigma),
            se_tau=pick(self.se_tau),
        )

    def simulate(self, theta: object, rng: np.random.Generator) -> FloatArray:
        """Scores (N, J) of subjects at ``theta`` (N,) drawn from the models (not clipped)."""
        th = np.asarray(theta, dtype=np.float64).reshape(-1)
        eta = th[:, None] * self.a + self.d
        y = eta + np.where(self.is_crm, self.sigma, 0.0) * rng.standard_normal(eta.shape)
        m, n = beta_shapes(eta, np.where(self.is_crm, 0.0, self.tau))
        return np.asarray(np.where(self.is_crm, expit(y), rng.beta(m, n)))


def expit(x: FloatArray) -> FloatArray:
    """scipy.special.expit, imported when first used: a pool without continuous items
    does not pay 0.4 s for scipy.special at start-up."""
    from scipy.special import expit as logistic

    return np.asarray(logistic(x))
