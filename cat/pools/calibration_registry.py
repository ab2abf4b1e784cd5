"""The families ``cat.calibrate`` knows, and which one a request runs.

Each family is a ``cat.pools.calibration_steps.Family``: the model names that select
it and its own function for each step of the job. A model for scores 0..m given scores
in [0, 1] beside (``continuous``, a ``MixedResponses``, or a pool with continuous
items) runs the mixed family, which fits both kinds on one θ.
"""

from __future__ import annotations

from typing import Any

from cat.errors import CatError
from cat.pools.binary_calibration import BINARY
from cat.pools.calibration_steps import Family
from cat.pools.continuous_calibration import CONTINUOUS
from cat.pools.graded_calibration import GRADED
from cat.pools.mixed_calibration import MIXED
from cat.pools.multidimensional_calibration import MULTIDIMENSIONAL
from irt.errors import IRTError
from irt.names import model_named, model_names

__all__ = ["FAMILIES", "MODELS", "family_of", "is_mixed", "takes_continuous", "with_continuous"]

#: Every family, in the order their models are listed.
FAMILIES: tuple[Family[Any, Any, Any], ...] = (
    BINARY,
    MULTIDIMENSIONAL,
    GRADED,
    CONTINUOUS,
    MIXED,
)
#: A family whose models take continuous scores beside their own → the family that
#: fits both.
_WITH_CONTINUOUS: dict[str, Family[Any, Any, Any]] = {GRADED.name: MIXED}
#: The family that fits each group of models (``irt.names.ModelGroup``).
_BY_GROUP = {family.name: family for family in FAMILIES if family is not MIXED}
#: Every model ``cat.calibrate`` fits, by the names ``cat calibrate --model`` takes
#: (item families registered from outside the package besides).
MODELS: tuple[str, ...] = model_names()


def family_of(model: str) -> Family[Any, Any, Any]:
    """The family that fits ``model`` (``irt.names.model_named``)."""
    try:
        return _BY_GROUP[model_named(model).group.value]
    except IRTError as exc:
        raise CatError(str(exc)) from None


def takes_continuous(family: Family[Any, Any, Any]) -> bool:
    """Whether ``family``'s models can have continuous scores beside their own."""
    return family.name in _WITH_CONTINUOUS


def with_continuous(family: Family[Any, Any, Any], model: str) -> Family[Any, Any, Any]:
    """The family that fits ``model``'s scores and continuous scores together."""
    if family.name not in _WITH_CONTINUOUS:
        scored = "|".join(GRADED.models)
        raise CatError(
            f"--continuous goes with --model {scored} (the scored items' model), "
            f"not --model {model}"
        )
    return _WITH_CONTINUOUS[family.name]


def is_mixed(family: Family[Any, Any, Any]) -> bool:
    """Whether ``family`` fits continuous scores beside scored ones (and so takes
    ``continuous_out`` and ``continuous_model``)."""
    return family in _WITH_CONTINUOUS.values()
