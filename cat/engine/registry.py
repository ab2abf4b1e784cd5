"""The one table of selection policies and ability estimators by name.

``cat simulate``, ``cat validate``, ``cat assess``, saved sessions and the library API all
take names from here, so that a name means the same strategy everywhere and a new policy
is added in one place.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from cat.engine.constraints import ContentBalanced, pool_shares
from cat.engine.estimators import (
    AbilityEstimator,
    EAPEstimator,
    MAPEstimator,
    MLEstimator,
    WLEEstimator,
)
from cat.engine.selection import MaxInfo, Randomesque, RandomItem, SelectionPolicy
from cat.engine.selection_kl import KLInfo
from cat.engine.selection_strata import AStratified
from cat.errors import CatError


class PolicyName(StrEnum):
    """Item selection: maximum Fisher information, Kullback–Leibler information, random,
    randomesque (random among the k most informative), a-stratified with b-blocking."""

    MFI = "mfi"
    KL = "kl"
    RANDOM = "random"
    RANDOMESQUE = "randomesque"
    ASTRAT = "astrat"


class EstimatorName(StrEnum):
    """Ability estimators: maximum likelihood (MAP while all answers agree), maximum a
    posteriori, expected a posteriori, Warm's weighted likelihood."""

    MLE = "mle"
    MAP = "map"
    EAP = "eap"
    WLE = "wle"


POLICY_NAMES: tuple[str, ...] = tuple(p.value for p in PolicyName)
ESTIMATOR_NAMES: tuple[str, ...] = tuple(e.value for e in EstimatorName)
#: Appended to a policy name ("mfi+cb"): content-balanced to the pool's scenario shares.
BALANCED_SUFFIX = "+cb"

# What `cat assess` runs with no options, in one place: `cat assess`, `cat.assess`,
# `cat calibrate --cross-fit` and the "default" policy of `cat validate` all read it here.
#: The policy name that stands for the default design in `cat validate`.
DEFAULT = "default"
#: The default's selection (content-balanced to the pool's shares when items have scenarios).
DEFAULT_POLICY = PolicyName.MFI
#: The default's ability estimator (ML, MAP while all answers agree).
DEFAULT_ESTIMATOR = EstimatorName.MLE
#: Whether the default keeps the pool's mix of scenarios.
DEFAULT_CONTENT_BALANCING = True


def default_selection(scenario: tuple[int, ...] | None) -> str:
    """The name of the selection policy ``cat assess`` runs with no options: MFI,
    content-balanced to the pool's shares ("mfi+cb") when each item's ``scenario`` is known."""
    if DEFAULT_CONTENT_BALANCING and scenario:
        return f"{DEFAULT_POLICY.value}{BALANCED_SUFFIX}"
    return DEFAULT_POLICY.value


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
    of each ``scenario`` (one code per item); "default" is ``default_selection(scenario)``."""
    if name == DEFAULT:
        return make_policy(
            default_selection(scenario), test_length, randomesque_k, n_strata, scenario
        )
    if name.endswith(BALANCED_SUFFIX):
        if not scenario:
            raise CatError(f"policy {name!r} needs each item's scenario")
        base = make_policy(name.removesuffix(BALANCED_SUFFIX), test_length, randomesque_k, n_strata)
        return ContentBalanced(base, scenario, pool_shares(scenario))
    if name not in POLICY_NAMES:
        raise CatError(
            f"unknown policy {name!r}; choose from {DEFAULT}, {', '.join(POLICY_NAMES)} "
            f"(each may end in {BALANCED_SUFFIX!r} for content balancing)"
        )
    policies: dict[PolicyName, Callable[[], SelectionPolicy]] = {
        PolicyName.MFI: MaxInfo,
        PolicyName.KL: KLInfo,
        PolicyName.RANDOM: RandomItem,
        PolicyName.RANDOMESQUE: lambda: Randomesque(randomesque_k),
        PolicyName.ASTRAT: lambda: AStratified(n_strata, test_length),
    }
    return policies[PolicyName(name)]()


def make_estimator(name: str) -> AbilityEstimator:
    """The ability estimator called ``name``."""
    if name not in ESTIMATOR_NAMES:
        raise CatError(f"unknown estimator {name!r}; choose from {', '.join(ESTIMATOR_NAMES)}")
    return _ESTIMATORS[EstimatorName(name)]()
