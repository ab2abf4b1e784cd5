"""The item families by R mirt's ``itemtype`` name, the one dispatch from an item type
to its curves, and the base of the item-type enums that name them.

A new family is its module (an ``ItemFamily`` subclass) and either one line in
``FAMILIES`` (a family of this package) or, from outside it, ``register(family)`` or an
entry point of the group ``irt.families`` in the distribution that holds it::

    [project.entry-points."irt.families"]
    slip2PL = "mypackage.slipping:SlippingTwoPL"

An entry point is read the first time a name is not found, so a registered family is
an item type everywhere a type is read (``ItemType("slip2PL")``, a params.csv's
``type`` column, ``cat calibrate --model slip2pl``).
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

__all__ = [
    "ENTRY_POINT_GROUP",
    "FAMILIES",
    "FamilyName",
    "category_curves",
    "family_of",
    "register",
]

#: The entry-point group of families from other distributions.
ENTRY_POINT_GROUP = "irt.families"

#: Every item family, by its mirt ``itemtype`` name.
FAMILIES: dict[str, ItemFamily] = {
    family.name: family
    for family in (TwoPL(), ThreePL(), Graded(), GPCM(), Sequential(), Nominal())
}
#: The families of this package: an item-type enum that does not list one of them
#: leaves it out on purpose.
_BUILT_IN = frozenset(FAMILIES)


def register(family: ItemFamily) -> ItemFamily:
    """Add ``family`` (an instance) to the registry under its ``name`` and return it.
    Registering the same class again does nothing; another family of a known name, in
    any case, is refused (a params.csv's types must keep meaning one model)."""
    if not isinstance(family, ItemFamily):
        raise ParamsError(f"register takes an ItemFamily instance, got {family!r}")
    name = getattr(family, "name", None)
    if not isinstance(name, str) or not name.strip() or name != name.strip():
        raise ParamsError(f"{type(family).__name__}.name must be a non-empty name, got {name!r}")
    known = _find(name)
    if known is not None:
        if type(known) is type(family):
            return known
        raise ParamsError(f"item family {name!r} is taken by {type(known).__name__}")
    FAMILIES[name] = family
    return family


def family_of(name: str) -> ItemFamily:
    """The family named ``name`` in any case (an item-type enum member is its name);
    families of other distributions' entry points are loaded on the first miss."""
    found = _find(str(name))
    if found is None and _load_entry_points():
        found = _find(str(name))
    if found is None:
        known = ", ".join(FAMILIES)
        raise ParamsError(f"no item family {str(name)!r}; known: {known}")
    return found


def _find(name: str) -> ItemFamily | None:
    """The registered family whose name is ``name`` in any case, or None."""
    if name in FAMILIES:
        return FAMILIES[name]
    low = name.lower()
    return next((f for key, f in FAMILIES.items() if key.lower() == low), None)


_entry_points_loaded = False


def _load_entry_points() -> bool:
    """Register the families of the group ``ENTRY_POINT_GROUP`` (once); whether any
    was new. An entry point names an ``ItemFamily`` subclass or instance."""
    global _entry_points_loaded
    if _entry_points_loaded:
        return False
    _entry_points_loaded = True
    from importlib.metadata import entry_points

    before = len(FAMILIES)
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            loaded = point.load()
        except Exception as exc:  # a broken plugin must say which one it is
            raise ParamsError(f"item family entry point {point.name!r}: {exc}") from exc
        family = loaded() if isinstance(loaded, type) else loaded
        register(family)
    return len(FAMILIES) > before


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
        # Accept "2pl", "GRADED", and the common name "grm"; then any registered family
        # the enum accepts, as a member made for it (``register``).
        member = case_blind_member(cls, value, {"grm": "graded"})
        if member is not None or not isinstance(value, str):
            return member
        try:
            family = family_of(value)
        except ParamsError:
            return None
        if not cls.accepts(family):
            return None
        made = str.__new__(cls, family.name)
        made._name_ = made._value_ = family.name
        return cls._value2member_map_.setdefault(family.name, made)  # type: ignore[return-value]

    @classmethod
    def accepts(cls, family: ItemFamily) -> bool:
        """Whether items of a registered ``family`` that the enum does not list may
        take this type: any family from outside the package, unless the enum says
        otherwise (what its parameter class can fit)."""
        return family.name not in _BUILT_IN

    @classmethod
    def known(cls) -> tuple[Self, ...]:
        """Every type of the enum: its members, then the registered families made
        members so far."""
        return tuple(dict.fromkeys(cls._value2member_map_.values()))  # type: ignore[arg-type]

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
