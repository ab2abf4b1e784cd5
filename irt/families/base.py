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

from irt.types import FloatArray

__all__ = ["CategoryCurves", "CurveInputs", "ItemFamily"]


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


class ItemFamily(ABC):
    """One item model, in R mirt's slope–intercept form, on the linear predictor η.

    A family provides:

    - ``name``: R mirt's ``itemtype`` name, the key of the registry and the value of the
      item-type enums (``irt.polytomous.ItemType``, ``irt.mirt_polytomous.MultiItemType``);
    - what kind of parameters its items have: ``binary`` (two categories only),
      ``has_guessing`` (a lower asymptote c), ``has_scores`` (scoring values ak_1..ak_m),
      ``ordered_thresholds`` (d_1 > … > d_m), and ``free_scores(m)``, how many of the
      ak are estimated;
    - ``curves``: log P(X = k | η) at η (T, J) of items with thresholds d (J, m) and
      their c or ak (``CurveInputs``), with, on request, the derivatives in η, d, c and
      the free ak (``CategoryCurves``). Every curve is computed in log space, so that
      a category far from the examinee gets a finite log-probability rather than log 0.

    Adding a model is one module under ``irt/families/`` with its ``ItemFamily`` subclass
    and one line in ``irt.families.registry.FAMILIES``; an enum member with that name
    lets the parameter classes accept it.

    Still outside the family today (the next step of this move): the internal
    coordinates ψ of the M-steps and their boxes and Jacobians
    (``irt.polytomous_layout`` for one θ, ``GroupCoordinates`` in
    ``irt.mirt_polytomous_mstep`` for factors, both with a graded branch), the priors
    (``irt.polytomous_priors``), the start values (``irt.polytomous_start``,
    ``irt.mirt_polytomous_start``) and the parameter checks of ``PolytomousParams`` and
    ``MirtPolytomousParams``.
    """

    name: ClassVar[str]
    binary: ClassVar[bool] = False
    has_guessing: ClassVar[bool] = False
    has_scores: ClassVar[bool] = False
    ordered_thresholds: ClassVar[bool] = False

    def free_scores(self, m: int) -> int:
        """How many scoring values ak of an item with m thresholds are estimated."""
        return 0

    @abstractmethod
    def curves(self, at: CurveInputs, derivatives: bool = False) -> CategoryCurves:
        """The items' curves at ``at``, with the derivatives if asked."""

    def __repr__(self) -> str:
        return f"<item family {self.name}>"
