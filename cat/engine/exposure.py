"""Sympson–Hetter exposure control (Sympson & Hetter, 1985).

Each item j has a control parameter K_j in (0, 1]. When the policy picks item j for an
examinee, the item is given with probability K_j; otherwise it is set aside for the rest
of that examinee's test and the policy picks again. Only the draws of items the policy
picks matter, so drawing every item's pass/fail once at the start of a test (an
examinee-specific screen of the pool) is the same procedure in distribution, and keeps
every selection policy unaware of it.

K is set by simulation on the population the pool serves, so that no item reaches more
than ``max_rate`` of the examinees: with P(S_j) the rate at which the policy selects item
j, K_j = max_rate / P(S_j) for the items selected more often than that and 1 for the
rest, repeated until the administered rates settle (the classical procedure, as set out
by van der Linden & Glas, *Elements of Adaptive Testing*, 2010; here K never rises
between rounds, which makes the rates settle under the target rather than swing). Unlike a hard cap
(``cat.engine.constraints.MaxExposure``) it needs no count of who has seen what, so it works the
same for one model assessed today and another next month.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from cat.errors import CatError
from irt.types import BoolArray, FloatArray, IntArray


@dataclass(frozen=True)
class SympsonHetter:
    """The exposure-control parameters K, one per item, applied as a screen."""

    k: tuple[float, ...]

    def __post_init__(self) -> None:
        values = np.asarray(self.k, dtype=float)
        if values.size == 0 or np.any(~np.isfinite(values)) or np.any(values <= 0):
            raise CatError("Sympson–Hetter parameters must be positive, one per item")
        if np.any(values > 1):
            raise CatError("Sympson–Hetter parameters must be at most 1")

    def screen(self, available: BoolArray, rng: np.random.Generator, length: int) -> BoolArray:
        """Each examinee's items that would pass when picked (E, J). An examinee left
        with fewer than ``length`` items keeps its whole pool: the test is not cut short."""
        k = np.asarray(self.k, dtype=float)
        if len(k) != available.shape[1]:
            raise CatError(f"{len(k)} Sympson–Hetter parameters for a pool of {available.shape[1]}")
        screened = available & (rng.random(available.shape) < k[None, :])
        short = screened.sum(axis=1) < np.minimum(length, available.sum(axis=1))
        screened[short] = available[short]
        return np.asarray(screened, dtype=bool)


#: Runs the adaptive test of the simulated population under a screen; returns the items
#: each examinee was given, −1 padded (E, L).
RunPopulation = Callable[[SympsonHetter], IntArray]


def sympson_hetter_parameters(
    n_items: int,
    run: RunPopulation,
    max_rate: float,
    rounds: int = 30,
    progress: Callable[[int, float], None] | None = None,
) -> tuple[FloatArray, FloatArray]:
    """K per item by the iterative simulation, and the administered rate each item
    reached with that K. ``run`` gives the population its tests under a screen.

    Stops after ``rounds`` or once no item's rate exceeds ``max_rate`` by more than two
    standard errors of a rate among the simulated examinees (beyond that, the largest of
    many rates only measures the simulation's noise). ``progress`` is told each round
    and the largest rate.
    """
    if not 0 < max_rate <= 1:
        raise CatError(f"the maximum exposure rate must be in (0, 1], got {max_rate}")
    if rounds < 1:
        raise CatError(f"need at least one round of simulation, got {rounds}")
    k = np.ones(n_items)
    rate, n_examinees = _rates(run(SympsonHetter(tuple(k))), n_items)
    noise = 2.0 * np.sqrt(max_rate * (1.0 - max_rate) / n_examinees)
    for n in range(rounds):
        if progress is not None:
            progress(n, float(rate.max()))
        if rate.max() <= max_rate + noise:
            break
        # Selection rate = administered rate / K, as each selection passes with K.
        selected = rate / k
        wanted = np.where(selected > max_rate, max_rate / np.maximum(selected, 1e-12), 1.0)
        # K only ever falls: the classical update lets it rise again and then the rates
        # swing around the target instead of settling under it.
        k = np.clip(np.minimum(k, wanted), 1e-3, 1.0)
        rate, _ = _rates(run(SympsonHetter(tuple(k))), n_items)
    return k, rate


def _rates(items: IntArray, n_items: int) -> tuple[FloatArray, int]:
    """Share of examinees given each item, and how many examinees there were."""
    given = items[items >= 0]
    rate = np.bincount(given, minlength=n_items) / len(items)
    return np.asarray(rate, dtype=np.float64), len(items)
