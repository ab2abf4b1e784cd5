"""Items that ask the same thing: the same question text and the same options (the same
letters with the same texts), compared after whitespace is collapsed. A benchmark built
from several sources holds such copies (MMLU-Pro: 159 pairs); an adaptive test should
ask one copy only, and a pool's builder wants them reported."""

from __future__ import annotations

from collections.abc import Iterable

from itempool.items import PoolItem

__all__ = ["duplicate_groups", "twins"]


def _content(item: PoolItem) -> tuple[str, tuple[tuple[str, str], ...]]:
    """What makes two items the same question."""
    options = tuple(
        sorted((letter, " ".join(text.split())) for letter, text in (item.options or {}).items())
    )
    return " ".join(item.question.split()), options


def duplicate_groups(items: Iterable[PoolItem]) -> list[tuple[str, ...]]:
    """The ids of each set of two or more items asking the same thing, in pool order
    (by each set's first item)."""
    by_content: dict[tuple[str, tuple[tuple[str, str], ...]], list[str]] = {}
    for item in items:
        by_content.setdefault(_content(item), []).append(item.id)
    return [tuple(ids) for ids in by_content.values() if len(ids) > 1]


def twins(items: Iterable[PoolItem]) -> dict[str, tuple[str, ...]]:
    """Each duplicated item's id -> the ids of its copies (itself left out)."""
    out: dict[str, tuple[str, ...]] = {}
    for group in duplicate_groups(items):
        for item in group:
            out[item] = tuple(other for other in group if other != item)
    return out
