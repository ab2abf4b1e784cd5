"""The names of models and methods, as the command line and output files spell them.

Kept apart from the numerical modules, which re-export them, so that the ``cat`` command
line can offer these choices (``--help``, argument checks) without importing numpy.

``MODELS`` is the one list of the models this package fits by the names a user types
(``cat calibrate --model``, ``cat validate --model``), each with its group (how it is
fitted, and which of ``cat``'s calibration paths takes it) and the title a report gives
it; ``model_named`` finds one, item families registered from outside the package
(``irt.families.register``) included. The item-type enums of the parameter classes
(``ModelKind`` here, ``irt.polytomous.ItemType``, ``irt.continuous.ContinuousType``)
hold the same names as typed constants; a test holds them to ``MODELS``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from enum import StrEnum

from irt.errors import ParamsError


class ModelKind(StrEnum):
    """The four logistic models; the value is the name used on the command line."""

    ONE_PL = "1pl"
    TWO_PL = "2pl"
    THREE_PL = "3pl"
    FOUR_PL = "4pl"

    @classmethod
    def _missing_(cls, value: object) -> ModelKind | None:
        # Accept "3PL" as well as "3pl".
        if isinstance(value, str):
            for member in cls:
                if member.value == value.lower():
                    return member
        return None

    @property
    def has_guessing(self) -> bool:
        return self in (ModelKind.THREE_PL, ModelKind.FOUR_PL)

    @property
    def has_slipping(self) -> bool:
        return self is ModelKind.FOUR_PL


class CalibrationMethod(StrEnum):
    """Marginal maximum likelihood (or Bayes modal) by EM, or a full Bayesian fit (pyro)."""

    EM = "em"
    BAYES = "bayes"


class AbilityMethod(StrEnum):
    """How θ is estimated from a subject's answers."""

    EAP = "eap"
    MAP = "map"
    ML = "ml"
    WLE = "wle"


class ModelGroup(StrEnum):
    """How a model is fitted; the value names ``cat``'s calibration path for it."""

    #: 0/1 answers under one of the four logistic models (``ModelKind``).
    BINARY = "binary"
    #: 0/1 answers on several factors, fitted beside the 3PL.
    MULTIDIMENSIONAL = "multidimensional"
    #: Scores 0..m under an item family on one θ (``irt.families``).
    GRADED = "graded"
    #: Scores in [0, 1].
    CONTINUOUS = "continuous"


@dataclass(frozen=True)
class Model:
    """A model by the name a user types: its ``group`` and the ``title`` reports give it."""

    name: str
    group: ModelGroup
    title: str


#: Every model of this package, in the order ``--help`` lists them.
MODELS: tuple[Model, ...] = (
    Model("1pl", ModelGroup.BINARY, "1PL"),
    Model("2pl", ModelGroup.BINARY, "2PL"),
    Model("3pl", ModelGroup.BINARY, "3PL"),
    Model("4pl", ModelGroup.BINARY, "4PL"),
    Model("bifactor", ModelGroup.MULTIDIMENSIONAL, "Bifactor"),
    Model("mirt", ModelGroup.MULTIDIMENSIONAL, "Multidimensional"),
    Model("graded", ModelGroup.GRADED, "Graded response"),
    Model("gpcm", ModelGroup.GRADED, "Generalized partial credit"),
    Model("sequential", ModelGroup.GRADED, "Sequential"),
    Model("nominal", ModelGroup.GRADED, "Nominal response"),
    Model("crm", ModelGroup.CONTINUOUS, "Continuous response model"),
    Model("beta", ModelGroup.CONTINUOUS, "Beta IRT"),
)


def model_names(group: ModelGroup | None = None) -> tuple[str, ...]:
    """The names of ``MODELS`` (of one ``group``)."""
    return tuple(m.name for m in MODELS if group is None or m.group is group)


def model_named(name: str) -> Model:
    """The model ``name`` names, in any case: one of ``MODELS``, or an item family
    registered from outside the package (``irt.families.register``, or an entry point
    of the group ``irt.families``), which is fitted as the graded models are. Raises
    ``ParamsError`` with the known names for anything else."""
    low = str(name).strip().lower()
    for model in MODELS:
        if model.name == low:
            return model
    known = ", ".join(model_names())
    unknown = ParamsError(f"unknown model {name!r}; choose from {known}")
    # The registry imports numpy: a mistyped name on the command line must not pay for
    # it, so it is consulted only where a family may have been registered there (it is
    # imported already) or may come from an entry point of that name.
    if "irt.families.registry" not in sys.modules and low not in _entry_point_names():
        raise unknown
    from irt.families.registry import family_of

    try:
        family = family_of(low)
    except ParamsError:
        raise unknown from None
    return Model(family.name.lower(), ModelGroup.GRADED, family.title or family.name)


def _entry_point_names() -> set[str]:
    """The names, in lower case, of the item families of other distributions' entry
    points (``irt.families.registry.ENTRY_POINT_GROUP``)."""
    from importlib.metadata import entry_points

    return {point.name.lower() for point in entry_points(group="irt.families")}
