"""Selection policies and ability estimators by their command-line names.

One table, used by ``cat simulate``, ``cat validate`` and saved sessions, so that a name
means the same strategy everywhere.
"""

from __future__ import annotations

from cat.constraints import ContentBalanced, pool_shares
from cat.errors import CatError
from cat.estimators import AbilityEstimator, EAPEstimator, MAPEstimator, MLEstimator, WLEEstimator
from cat.selection import MaxInfo, Randomesque, RandomItem, SelectionPolicy
from cat.selection_more import AStratified, KLInfo

POLICY_NAMES = ("mfi", "kl", "random", "randomesque", "astrat")
#: Appended to a policy name ("mfi+cb"): content-balanced to the pool's scenario shares.
BALANCED_SUFFIX = "+cb"
ESTIMATOR_NAMES = ("mle", "map", "eap", "wle")


def make_policy(
    name: str,
    test_length: int,
    randomesque_k: int = 5,
    n_strata: int = 4,
    scenario: tuple[int, ...] | None = None,
) -> SelectionPolicy:
    """The policy called ``name``; a-stratification spreads its strata over
    ``test_length`` items. A name ending in "+cb" balances content to the pool's shares
    of each ``scenario`` (one code per item)."""
    if name.endswith(BALANCED_SUFFIX):
        if not scenario:
            raise CatError(f"policy {name!r} needs each item's scenario")
        base = make_policy(name.removesuffix(BALANCED_SUFFIX), test_length, randomesque_k, n_strata)
        return ContentBalanced(base, scenario, pool_shares(scenario))
    if name == "mfi":
        return MaxInfo()
    if name == "kl":
        return KLInfo()
    if name == "random":
        return RandomItem()
    if name == "randomesque":
        return Randomesque(randomesque_k)
    if name == "astrat":
        return AStratified(n_strata, test_length)
    raise CatError(
        f"unknown policy {name!r}; choose from {', '.join(POLICY_NAMES)} "
        f"(each may end in {BALANCED_SUFFIX!r} for content balancing)"
    )


def make_estimator(name: str) -> AbilityEstimator:
    """The ability estimator called ``name``."""
    if name == "mle":
        return MLEstimator()
    if name == "map":
        return MAPEstimator()
    if name == "eap":
        return EAPEstimator()
    if name == "wle":
        return WLEEstimator()
    raise CatError(f"unknown estimator {name!r}; choose from {', '.join(ESTIMATOR_NAMES)}")
