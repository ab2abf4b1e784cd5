"""Few-shot examples: K solved items shown before each question, fixed by a seed.

An item's examples come from its own scenario (from the whole pool when it has none),
drawn once per scenario with the run's seed: every item of a scenario is shown the same
K examples, in the same order. An item is never its own example: one that is among its
scenario's K gets the next one drawn instead. A scenario with too few items is topped up
from the rest of the pool, drawn the same way.

``cat assess`` never asks an item that serves as an example (``FewShot.shown``): its
answer would be in the prompt. ``cat synth`` asks every item, each with examples other
than itself.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from itempool import PoolItem
from synth.errors import SynthError

__all__ = ["FewShot"]


@dataclass(frozen=True)
class FewShot:
    """``k`` examples per item; ``candidates`` holds each scenario's first ``k + 1``
    drawn (the last one replaces an item that is among the first ``k``)."""

    k: int
    candidates: dict[str, tuple[PoolItem, ...]]

    @classmethod
    def draw(cls, items: Sequence[PoolItem], k: int, seed: int) -> FewShot:
        """Draw the examples of every scenario of ``items`` with ``seed``."""
        if k < 1:
            raise SynthError(f"few-shot needs at least one example, got {k}")
        if len(items) <= k:
            raise SynthError(
                f"--few-shot {k} needs more than {k} items (the pool has {len(items)}): an "
                "item is never its own example"
            )
        candidates = {}
        for scenario in dict.fromkeys(item.scenario for item in items):
            # A generator per scenario, seeded by its name: adding a scenario to a pool
            # leaves the other scenarios' examples as they were.
            rng = random.Random(f"cat-llm few-shot {seed} {scenario}")
            members = [i for i in items if i.scenario == scenario] if scenario else list(items)
            drawn = rng.sample(members, min(k + 1, len(members)))
            if len(drawn) < k + 1:
                chosen = {i.id for i in drawn}
                rest = [i for i in items if i.id not in chosen]
                drawn += rng.sample(rest, k + 1 - len(drawn))
            candidates[scenario] = tuple(drawn)
        return cls(k, candidates)

    def examples_for(self, item: PoolItem) -> tuple[PoolItem, ...]:
        """The ``k`` examples shown before ``item``, never ``item`` itself."""
        drawn = self.candidates.get(item.scenario)
        if drawn is None:
            raise SynthError(f"item {item.id} is of no scenario the examples were drawn for")
        return tuple(i for i in drawn if i.id != item.id)[: self.k]

    def shown(self) -> tuple[str, ...]:
        """Every item shown as an example to an item outside this set: the items a test
        must not ask."""
        first = (i.id for drawn in self.candidates.values() for i in drawn[: self.k])
        return tuple(dict.fromkeys(first))
