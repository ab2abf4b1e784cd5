"""Items that ask the same thing, found by their question and options."""

from __future__ import annotations

from itempool import PoolItem
from itempool.duplicates import duplicate_groups, twins


def _item(id_: str, question: str, options: dict[str, str] | None = None) -> PoolItem:
    return PoolItem(
        id=id_,
        scenario="s",
        question=question,
        options=options or {"A": "yes", "B": "no"},
        answer="A",
    )


def test_copies_are_the_same_question_and_options_whatever_the_spacing() -> None:
    items = [
        _item("1", "Is water wet?"),
        _item("2", "Is  water wet?\n"),
        _item("3", "Is water wet?", {"A": "no", "B": "yes"}),  # other options: not a copy
        _item("4", "Is fire hot?"),
        _item("5", "Is water wet?", {"A": " yes", "B": "no "}),
    ]
    assert duplicate_groups(items) == [("1", "2", "5")]
    assert twins(items) == {"1": ("2", "5"), "2": ("1", "5"), "5": ("1", "2")}
    assert duplicate_groups(items[2:4]) == []
