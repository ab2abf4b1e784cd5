"""What an item family is: one item model's category curves on the linear predictor η,
with their derivatives, whatever latent structure η comes from.

A family is an ``ItemFamily`` object; ``irt.families.registry`` maps R mirt's
``itemtype`` name to it. ``irt.polytomous.curves`` (one θ, η = aθ) and
``irt.mirt_polytomous.group_curves`` (factors, η = a·θ) both reach the curves through
that registry, so the graded model, say, is computed by one function for every model
of this package that has graded items.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from irt.errors import ParamsError
from irt.estimation.arrays import clip, concat, copy, zeros
from irt.families.coordinates import INTERCEPT_BOUND, LOGIT_BOUND, sigmoid
from irt.types import FloatArray

__all__ = ["SCORE_BOUND", "CategoryCurves", "CurveInputs", "ItemFamily", "ItemValues"]

#: Free scoring values ak stay within ±this.
SCORE_BOUND = 30.0


@dataclass(frozen=True)
class CategoryCurves:
    """Category curves of J items of one family with K = m + 1 categories at T points.

    ``log_p`` (T, J, K) holds log P(X = k | η). With derivatives: ``slope`` (T, J, K) is
    S_k = ∂ log P_k/∂η, so that ∂ log P_k/∂θ = a S_k and ∂ log P_k/∂a = θ S_k;
    ``thresholds`` (T, J, K, m) is ∂ log P_k/∂d_l; ``asymptote`` (T, J, K) is
    ∂ log P_k/∂c (3PL only); ``scores`` (T, J, K, m − 1) is ∂ log P_k/∂ak_l of the free
    scoring values (nominal only).
    """

    log_p: FloatArray
    slope: FloatArray | None = None
    thresholds: FloatArray | None = None
    asymptote: FloatArray | None = None
    scores: FloatArray | None = None


@dataclass(frozen=True)
class CurveInputs:
    """What the curves of J items of one family at T points depend on: the linear
    predictor ``eta`` (T, J), the thresholds ``d`` (J, m) without padding, and where the
    family has them the lower asymptotes ``c`` (J,) (None: 0) and the scoring values
    ``ak`` (J, m)."""

    eta: FloatArray
    d: FloatArray
    c: FloatArray | None = None
    ak: FloatArray | None = None


@dataclass(frozen=True)
class ItemValues:
    """What J items of one family with m thresholds hold besides their slopes: the
    thresholds ``d`` (J, m), the lower asymptotes ``c`` (J,) (0 unless the family has
    guessing) and the scoring values ``ak`` (J, m) ak_1..ak_m of a scored family (None
    otherwise)."""

    d: FloatArray
    c: FloatArray
    ak: FloatArray | None = None


class ItemFamily(ABC):
    """One item model, in R mirt's slope–intercept form, on the linear predictor η.

    A family provides:

    - ``name``: R mirt's ``itemtype`` name, the key of the registry and the value of the
      item-type enums (``irt.polytomous.ItemType``, ``irt.mirt_polytomous.MultiItemType``),
      and ``title``, how reports name it;
    - what kind of parameters its items have: ``binary`` (two categories only),
      ``has_guessing`` (a lower asymptote c), ``has_scores`` (scoring values ak_1..ak_m),
      ``ordered_thresholds`` (d_1 > … > d_m), and ``free_scores(m)``, how many of the
      ak are estimated;
    - ``curves``: log P(X = k | η) at η (T, J) of items with thresholds d (J, m) and
      their c or ak (``CurveInputs``), with, on request, the derivatives in η, d, c and
      the free ak (``CategoryCurves``). Every curve is computed in log space, so that
      a category far from the examinee gets a finite log-probability rather than log 0.

    - the coordinates its M-step moves besides the slopes: per item ``width(m)``
      internal coordinates ψ = (δ_1..δ_m, γ, ak_1..ak_f) of the thresholds, the logit of
      c (``has_guessing``) and the f = ``free_scores(m)`` free scoring values, with the
      maps ``to_internal``/``to_natural`` to and from ``ItemValues``, the box ``clip``,
      the Jacobian ``jacobian`` ∂(d, c, ak_free)/∂ψ and ``derivatives``, the curves'
      gradient in (d, c, ak_free). The thresholds' own map is the identity unless the
      family overrides ``thresholds_to_internal`` and its companions (the graded model
      keeps d_1 > … > d_m by moving log-gaps);
    - ``scoring_values``: the full ak_1..ak_m from the free ones.

    What an EM cycle calls (``curves``, ``to_natural``, ``clip``, ``jacobian``,
    ``derivatives`` and the threshold maps but ``thresholds_to_internal``) takes numpy
    arrays or torch tensors alike, written with ``irt.estimation.arrays``, so that a fit
    runs on a GPU (``--device``); start values and ``to_internal`` are the host's.

    Adding a model is one module with its ``ItemFamily`` subclass and one registry line:
    in ``irt.families.registry.FAMILIES`` for a family of this package, or
    ``irt.families.register`` (or an ``irt.families`` entry point) from outside it. The
    item-type enums then accept its name, and every fit on one θ, on correlated
    factors or on a bifactor structure estimates it, scoring scores with it and ``cat``
    calibrates, assesses and validates with it (``cat calibrate --model NAME``), since
    all of them reach a family only through this interface
    (``tests/cat/test_new_family.py`` shows it with a family of the test suite).
    """

    name: ClassVar[str]
    #: How reports name the model ("Graded response"); its ``name`` where empty.
    title: ClassVar[str] = ""
    binary: ClassVar[bool] = False
    has_guessing: ClassVar[bool] = False
    has_scores: ClassVar[bool] = False
    ordered_thresholds: ClassVar[bool] = False
    #: The fewest score categories an item of the family may have.
    min_categories: ClassVar[int] = 2

    def free_scores(self, m: int) -> int:
        """How many scoring values ak of an item with m thresholds are estimated."""
        return 0

    @property
    def has_free_scores(self) -> bool:
        """Whether items of the family estimate scoring values (nominal)."""
        return self.free_scores(self.min_categories - 1) > 0

    @abstractmethod
    def curves(self, at: CurveInputs, derivatives: bool = False) -> CategoryCurves:
        """The items' curves at ``at``, with the derivatives if asked."""

    def scoring_values(self, free: FloatArray, m: int) -> FloatArray | None:
        """ak_1..ak_m (J, m) of items whose free scoring values are ``free`` (J, f);
        None for a family without scoring values."""
        return None

    def start_values(self, counts: FloatArray, stretch: FloatArray, guess: float) -> ItemValues:
        """Classical start values of J items from their category counts ``counts``
        (J, K) (with 0.5 added) and ``stretch`` (J,) = √(1 + (a/1.702)²), which turns a
        normal-ogive logit of the observed proportions into one at the start slope a;
        ``guess`` is a start for c. By default the cumulative logits
        logit P(X ≥ k), which suit the graded model and the 2PL."""
        at_least = np.cumsum(counts[:, ::-1], axis=1)[:, ::-1]  # n(X ≥ k), k = 0..m
        p = at_least[:, 1:] / at_least[:, :1]
        d = np.log(p / (1 - p)) * stretch[:, None]
        return ItemValues(d, np.zeros(len(d)))

    # --- the M-step's coordinates besides the slopes --------------------------------

    def width(self, m: int) -> int:
        """Internal coordinates per item with m thresholds: δ, then γ, then free ak."""
        return m + int(self.has_guessing) + self.free_scores(m)

    def to_internal(self, values: ItemValues) -> FloatArray:
        """ψ (J, width) of ``values``, within the box."""
        d = values.d
        m = d.shape[1]
        parts = [self.thresholds_to_internal(d)]
        if self.has_guessing:
            cc = np.clip(values.c, 1e-6, 1 - 1e-6)
            parts.append(np.log(cc / (1 - cc))[:, None])
        if self.free_scores(m):
            if values.ak is None:
                raise ParamsError(f"{self.name} items need their scoring values ak")
            parts.append(values.ak[:, : self.free_scores(m)])
        return self.clip(np.hstack(parts), m)

    def to_natural(self, psi: FloatArray, m: int) -> ItemValues:
        """The ``ItemValues`` at ψ (J, width) (numpy or torch, like ``psi``)."""
        d = self.thresholds_to_natural(psi[:, :m])
        c = sigmoid(psi[:, m]) if self.has_guessing else zeros(psi.shape[0], psi)
        at = m + int(self.has_guessing)
        return ItemValues(d, c, self.scoring_values(psi[:, at:], m))

    def clip(self, psi: FloatArray, m: int) -> FloatArray:
        """A copy of ψ (J, width) with every coordinate in its box."""
        out = copy(psi)
        lo, hi = self.threshold_bounds(m)
        out[:, :m] = clip(out[:, :m], lo, hi)
        at = m
        if self.has_guessing:
            out[:, at] = clip(out[:, at], -LOGIT_BOUND, LOGIT_BOUND)
            at += 1
        out[:, at:] = clip(out[:, at:], -SCORE_BOUND, SCORE_BOUND)
        return out  # type: ignore[no-any-return]

    def jacobian(self, psi: FloatArray, m: int) -> FloatArray:
        """∂(d_1..d_m, c, ak_free)/∂ψ per item, (J, width, width)."""
        n, w = psi.shape[0], self.width(m)
        jac = zeros((n, w, w), psi)
        jac[:, :m, :m] = self.threshold_jacobian(psi[:, :m])
        at = m
        if self.has_guessing:
            c = sigmoid(psi[:, m])
            jac[:, m, m] = c * (1 - c)
            at += 1
        jac[:, np.arange(at, w), np.arange(at, w)] = 1.0
        return jac  # type: ignore[no-any-return]

    def derivatives(self, cv: CategoryCurves) -> FloatArray:
        """∂ log P_k/∂(d_1..d_m, c, ak_free) of curves computed with derivatives,
        (T, J, K, width)."""
        assert cv.thresholds is not None
        parts = [cv.thresholds]
        if self.has_guessing:
            assert cv.asymptote is not None
            parts.append(cv.asymptote[..., None])
        if cv.scores is not None:
            parts.append(cv.scores)
        return concat(parts, axis=-1)  # type: ignore[no-any-return]

    def thresholds_to_internal(self, d: FloatArray) -> FloatArray:
        """δ (J, m) of thresholds d (J, m): the identity unless overridden."""
        return np.asarray(d, dtype=np.float64).copy()

    def thresholds_to_natural(self, delta: FloatArray) -> FloatArray:
        """d (J, m) at δ (J, m)."""
        return copy(delta)  # type: ignore[no-any-return]

    def threshold_jacobian(self, delta: FloatArray) -> FloatArray:
        """∂d/∂δ per item, (J, m, m)."""
        n, m = delta.shape
        jac = zeros((n, m, m), delta)
        jac[:, np.arange(m), np.arange(m)] = 1.0
        return jac  # type: ignore[no-any-return]

    def threshold_bounds(self, m: int) -> tuple[FloatArray, FloatArray]:
        """The box (lower, upper) of δ_1..δ_m."""
        return np.full(m, -INTERCEPT_BOUND), np.full(m, INTERCEPT_BOUND)

    def __repr__(self) -> str:
        return f"<item family {self.name}>"
