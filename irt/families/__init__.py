"""Item families: one class per item model (``2PL``, ``3PL``, ``graded``, ``gpcm``,
``sequential``, ``nominal``), each in its own module, holding that model's category
curves on the linear predictor η with their derivatives, the coordinates its M-step
moves (with their boxes and Jacobians), its classical start values and its scoring
values, so that a family is the same object whatever the latent structure (one θ in
``irt.polytomous``, factors in ``irt.mirt_polytomous``). ``irt.families.base.ItemFamily``
says what a family provides; ``irt.families.registry`` maps mirt's ``itemtype`` names to
the families.
"""

from __future__ import annotations

from irt.families.base import CategoryCurves, CurveInputs, ItemFamily
from irt.families.registry import FAMILIES, FamilyName, category_curves, family_of, register

__all__ = [
    "FAMILIES",
    "CategoryCurves",
    "CurveInputs",
    "FamilyName",
    "ItemFamily",
    "category_curves",
    "family_of",
    "register",
]
