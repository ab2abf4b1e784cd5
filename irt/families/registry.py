"""The item families by R mirt's ``itemtype`` name, the one dispatch from an item type
to its curves, and the base of the item-type enums that name them.

A new family is its module (an ``ItemFamily`` subclass) and one line in ``FAMILIES``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Self

import numpy as np

from irt.errors import ParamsError
from irt.estimation.arrays import is_numpy
from irt.families.base import CategoryCurves, CurveInputs, ItemFamily
from irt.families.gpcm import GPCM
from irt.families.graded import Graded
from irt.families.nominal import Nominal
from irt.families.sequential import Sequential
from irt.families.three_pl import ThreePL
from irt.families.two_pl import TwoPL
from irt.item_checks import case_blind_member
from irt.types import FloatArray

__all__ = ["FAMILIES", "FamilyName", "category_curves", "family_of"]

#: Every item family, by its mirt ``itemtype`` name.
FAMILIES: dict[str, ItemFamily] = {
    family.name: family
    for family in (TwoPL(), ThreePL(), Graded(), GPCM(), Sequential(), Nominal())
}


def family_of(name: str) -> ItemFamily:
    """The family named ``name`` (an item-type enum member is its name)."""
    try:
        return FAMILIES[str(name)]
    except KeyError:
        known = ", ".join(FAMILIES)
        raise ParamsError(f"no item family {str(name)!r}; known: {known}") from None


def category_curves(
    kind: str,
    eta: FloatArray,
    d: FloatArray,
    ak: FloatArray | None = None,
    *,
    c: FloatArray | None = None,
    derivatives: bool = False,
) -> CategoryCurves:
    """Curves of items of type ``kind`` at η (Q, J) (one column per item), thresholds
    ``d`` (J, m) without padding, scoring values ``ak`` (J, m) (nominal items) and lower
    asymptotes ``c`` (J,) (3PL items)."""
    if not is_numpy(eta):  # torch: float64 on its device already
        return family_of(kind).curves(CurveInputs(eta, d, c, ak), derivatives)
    at = CurveInputs(
        np.asarray(eta, dtype=np.float64),
        np.asarray(d, dtype=np.float64),
        None if c is None else np.asarray(c, dtype=np.float64),
        ak,
    )
    return family_of(kind).curves(at, derivatives)


class FamilyName(StrEnum):
    """The base of the item-type enums (``irt.polytomous.ItemType`` on one θ,
    ``irt.mirt_polytomous.MultiItemType`` on factors): a member's value is mirt's
    ``itemtype`` name and its family is ``FAMILIES``' entry of that name. Each enum lists
    the families its parameter class accepts."""

    @classmethod
    def _missing_(cls, value: object) -> Self | None:
        # Accept "2pl", "GRADED", and the common name "grm".
        return case_blind_member(cls, value, {"grm": "graded"})

    @classmethod
    def default_for(cls, n_categories: int) -> Self:
        """R mirt's default: 2PL for a binary item, graded otherwise."""
        return cls("2PL" if n_categories == 2 else "graded")

    @property
    def family(self) -> ItemFamily:
        """The item family of this type (``irt.families``)."""
        return FAMILIES[self.value]

    @property
    def binary(self) -> bool:
        """Whether the model is only defined for two categories (0/1)."""
        return self.family.binary

    @property
    def has_guessing(self) -> bool:
        """Whether the items have a lower asymptote c (the 3PL)."""
        return self.family.has_guessing

    @property
    def scored(self) -> bool:
        """Whether the model has scoring values ak (gpcm fixed, nominal partly free)."""
        return self.family.has_scores
