"""The one table of selection policies and ability estimators by name.

``cat simulate``, ``cat validate``, ``cat assess``, saved sessions and the library API all
take names from here, so that a name means the same strategy everywhere and a new policy
is added in one place.
"""

from __future__ import annotations

from collections.abc import Callable

from cat.engine.audit import Audited
from cat.engine.constraints import ContentBalanced, pool_shares
from cat.engine.estimators import (
    AbilityEstimator,
    EAPEstimator,
    MAPEstimator,
    MLEstimator,
    WLEEstimator,
)
from cat.engine.graded_estimators import GradedEAP, GradedEstimator, GradedMAP, GradedML
from cat.engine.names import (
    ALL_DESIGN_NAMES,
    AUTO,
    BALANCED_SUFFIX,
    CRITERION_NAMES,
    DEFAULT,
    DEFAULT_CONTENT_BALANCING,
    DEFAULT_CRITERION,
    DEFAULT_ESTIMATOR,
    DEFAULT_POLICY,
    DESIGN_NAMES,
    ESTIMATOR_NAMES,
    MULTIDIMENSIONAL_DESIGNS,
    POLICY_NAMES,
    REFERENCE_DESIGNS,
    CriterionName,
    DesignChoice,
    DesignName,
    EstimatorName,
    PolicyName,
    default_selection,
    design_names,
)
from cat.engine.selection import (
    MaxInfo,
    Proportional,
    Randomesque,
    RandomItem,
    SelectionPolicy,
)
from cat.engine.selection_kl import KLInfo
from cat.engine.selection_strata import AStratified
from cat.errors import CatError

# The names live in cat.engine.names (light, for the command line); they are re-exported
# here so that a name and the strategy it makes are found in one place.
__all__ = [
    "ALL_DESIGN_NAMES",
    "AUTO",
    "BALANCED_SUFFIX",
    "CRITERION_NAMES",
    "DEFAULT",
    "DEFAULT_CONTENT_BALANCING",
    "DEFAULT_CRITERION",
    "DEFAULT_ESTIMATOR",
    "DEFAULT_POLICY",
    "DESIGN_NAMES",
    "ESTIMATOR_NAMES",
    "MULTIDIMENSIONAL_DESIGNS",
    "POLICY_NAMES",
    "REFERENCE_DESIGNS",
    "CriterionName",
    "DesignChoice",
    "DesignName",
    "EstimatorName",
    "PolicyName",
    "default_selection",
    "design_names",
    "make_any_estimator",
    "make_estimator",
    "make_graded_estimator",
    "make_policy",
]


_ESTIMATORS: dict[EstimatorName, Callable[[], AbilityEstimator]] = {
    EstimatorName.MLE: MLEstimator,
    EstimatorName.MAP: MAPEstimator,
    EstimatorName.EAP: EAPEstimator,
    EstimatorName.WLE: WLEEstimator,
}


def make_policy(
    name: str,
    test_length: int,
    randomesque_k: int = 5,
    n_strata: int = 4,
    scenario: tuple[int, ...] | None = None,
) -> SelectionPolicy:
    """The policy called ``name``; a-stratification spreads its strata over
    ``test_length`` items. A name ending in "+cb" balances content to the pool's shares
    of each ``scenario`` (one code per item); "irt" is the IRT design's,
    ``default_selection(scenario)`` with its audit items (``cat.engine.audit``)."""
    if name == DesignName.IRT.value:
        return Audited(
            make_policy(default_selection(scenario), test_length, randomesque_k, n_strata, scenario)
        )
    if name.endswith(BALANCED_SUFFIX):
        if not scenario:
            raise CatError(f"policy {name!r} needs each item's scenario")
        base = make_policy(name.removesuffix(BALANCED_SUFFIX), test_length, randomesque_k, n_strata)
        return ContentBalanced(base, scenario, pool_shares(scenario))
    if name not in POLICY_NAMES:
        raise CatError(
            f"unknown policy {name!r}; choose from {DesignName.IRT.value}, "
            f"{', '.join(POLICY_NAMES)} "
            f"(each may end in {BALANCED_SUFFIX!r} for content balancing)"
        )
    policies: dict[PolicyName, Callable[[], SelectionPolicy]] = {
        PolicyName.MFI: MaxInfo,
        PolicyName.KL: KLInfo,
        PolicyName.RANDOM: RandomItem,
        PolicyName.RANDOMESQUE: lambda: Randomesque(randomesque_k),
        PolicyName.ASTRAT: lambda: AStratified(n_strata, test_length),
        PolicyName.PROPORTIONAL: Proportional,
    }
    return policies[PolicyName(name)]()


def make_estimator(name: str) -> AbilityEstimator:
    """The ability estimator called ``name``."""
    if name not in ESTIMATOR_NAMES:
        raise CatError(f"unknown estimator {name!r}; choose from {', '.join(ESTIMATOR_NAMES)}")
    return _ESTIMATORS[EstimatorName(name)]()


_GRADED_ESTIMATORS: dict[EstimatorName, Callable[[], GradedEstimator]] = {
    EstimatorName.MLE: GradedML,
    EstimatorName.MAP: GradedMAP,
    EstimatorName.EAP: GradedEAP,
}


def make_graded_estimator(name: str) -> GradedEstimator:
    """The estimator called ``name`` for a pool of scored items (graded, partial-credit,
    sequential and binary items mixed)."""
    make_estimator(name)  # an unknown name gets the same message
    chosen = EstimatorName(name)
    if chosen not in _GRADED_ESTIMATORS:
        names = ", ".join(e.value for e in _GRADED_ESTIMATORS)
        raise CatError(
            f"estimator {chosen.value!r} is for binary items; a scored pool takes {names}"
        )
    return _GRADED_ESTIMATORS[chosen]()


def make_any_estimator(name: str, scored: bool) -> AbilityEstimator | GradedEstimator:
    """The estimator called ``name`` for a scored pool (``scored``) or a binary one."""
    return make_graded_estimator(name) if scored else make_estimator(name)
