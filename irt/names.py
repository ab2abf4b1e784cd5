"""The names of models and methods, as the command line and output files spell them.

Kept apart from the numerical modules, which re-export them, so that the ``cat`` command
line can offer these choices (``--help``, argument checks) without importing numpy.
"""

from __future__ import annotations

from enum import StrEnum


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
