"""Selection policies and ability estimators by their command-line names.

One table, used by ``cat simulate``, ``cat validate`` and saved sessions, so that a name
means the same strategy everywhere.
"""

from __future__ import annotations

from cat.errors import CatError
from cat.estimators import AbilityEstimator, EAPEstimator, MAPEstimator, MLEstimator, WLEEstimator
from cat.selection import MaxInfo, Randomesque, RandomItem, SelectionPolicy
from cat.selection_more import AStratified, KLInfo

POLICY_NAMES = ("mfi", "kl", "random", "randomesque", "astrat")
ESTIMATOR_NAMES = ("mle", "map", "eap", "wle")


def make_policy(
    name: str, test_length: int, randomesque_k: int = 5, n_strata: int = 4
) -> SelectionPolicy:
    """The policy called ``name``; a-stratification spreads its strata over
    ``test_length`` items."""
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
    raise CatError(f"unknown policy {name!r}; choose from {', '.join(POLICY_NAMES)}")


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
