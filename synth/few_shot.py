"""Few-shot examples: K solved items shown before each question, fixed by a seed.

An item's examples come from its own scenario (from the whole pool when it has none),
drawn once per scenario with the run's seed: every item of a scenario is shown the same
K examples, in the same order. An item is never its own example: one that is among its
scenario's K gets the next one drawn instead. A scenario with too few items is topped up
from the rest of the pool, drawn the same way.

``cat assess`` never asks an item that serves as an example (``FewShot.shown``): its
answer would be in the prompt. ``cat synth`` asks every item, each with examples other
than itself.

A protocol's worked examples (``itempool.worked_examples``) are chosen by
``WorkedShots``: drawn per scenario with the seed as above, or the first K of the item's
scenario in file order (MMLU-Pro's official choice). They are not pool items, so no
item is left out for them unless it has an example's id.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from itempool import PoolItem, WorkedExample
from synth.errors import SynthError

__all__ = ["FewShot", "WorkedShots"]


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


@dataclass(frozen=True)
class WorkedShots:
    """``k`` worked examples per item, from ``by_scenario`` (a scenario's examples in the
    order they are shown; "" holds every example, for a scenario with none of its own
    under a seeded draw)."""

    k: int
    by_scenario: dict[str, tuple[WorkedExample, ...]]
    first: bool

    @classmethod
    def choose(
        cls, examples: Sequence[WorkedExample], k: int, select: str, seed: int
    ) -> WorkedShots:
        """The examples of each scenario: the first ``k`` in file order (``select``
        "first"), or ``k`` drawn with ``seed`` ("seeded"; a scenario with fewer is
        topped up from the others)."""
        if k < 1:
            raise SynthError(f"few-shot needs at least one example, got {k}")
        scenarios = dict.fromkeys(e.scenario for e in examples)
        if select == "first":
            by = {s: tuple(e for e in examples if e.scenario == s)[:k] for s in scenarios}
            return cls(k, by, True)
        if len(examples) < k:
            raise SynthError(
                f"--few-shot {k} needs {k} worked examples; the file has {len(examples)}"
            )
        by = {}
        for scenario in (*scenarios, ""):
            rng = random.Random(f"cat-llm worked examples {seed} {scenario}")
            own = [e for e in examples if e.scenario == scenario] if scenario else []
            drawn = rng.sample(own, min(k, len(own)))
            rest = [e for e in examples if e not in drawn]
            by[scenario] = tuple(drawn + rng.sample(rest, k - len(drawn)))
        return cls(k, by, False)

    def examples_for(self, item: PoolItem) -> tuple[WorkedExample, ...]:
        """The examples shown before ``item``: its scenario's (the first ones: only as
        many as the file has)."""
        own = self.by_scenario.get(item.scenario)
        if own is None and not self.first:
            own = self.by_scenario[""]
        if not own:
            raise SynthError(f"item {item.id}: no worked example of its scenario {item.scenario!r}")
        return own

    def check(self, items: Sequence[PoolItem]) -> None:
        """``SynthError`` naming the first scenario of ``items`` without examples."""
        for item in items:
            self.examples_for(item)

    def shown(self, items: Sequence[PoolItem]) -> tuple[str, ...]:
        """The pool items among ``items`` that are also examples (by id): never asked."""
        ids = {e.id for shown in self.by_scenario.values() for e in shown}
        return tuple(item.id for item in items if item.id in ids)
