"""Which pool item a prompt asks about, found by the item's question text in it.

For calls stored without their item's id (a run store of schema 2 or older, written by
``cat assess``): ``cat export --pool`` finds the item by its question. Whitespace is
collapsed on both sides, since prompt templates re-wrap questions. Questions of at least
``ANCHOR`` characters are indexed by their first ``ANCHOR`` characters, so that a prompt
is scanned with one dict lookup per position; the few shorter ones are searched for
directly. The question found last in the latest user message wins (few-shot examples
come before the question asked), and a question found inside a longer one that is
found too does not count.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from itempool import PoolItem

__all__ = ["ANCHOR", "QuestionIndex"]

#: Long enough that an anchor hit is almost always the question, short enough that every
#: realistic question has one.
ANCHOR: Final = 24
_WHITESPACE: Final = re.compile(r"\s+")


def _normalise(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


class QuestionIndex:
    """Finds the item of ``items`` whose question occurs in a chat prompt."""

    def __init__(self, items: Iterable[PoolItem]) -> None:
        self._by_anchor: dict[str, list[tuple[str, PoolItem]]] = {}
        self._short: list[tuple[str, PoolItem]] = []
        for item in items:
            question = _normalise(item.question)
            if len(question) >= ANCHOR:
                self._by_anchor.setdefault(question[:ANCHOR], []).append((question, item))
            else:
                self._short.append((question, item))

    def find(self, messages: Sequence[Mapping[str, Any]]) -> PoolItem | None:
        """The item that ``messages`` (chat messages, ``{"role", "content"}``) ask
        about: searched in the user messages, latest first, then in the others; None
        when no question is found."""
        ordered = [m for m in reversed(messages) if m.get("role") == "user"]
        ordered += [m for m in reversed(messages) if m.get("role") != "user"]
        for message in ordered:
            content = message.get("content")
            if isinstance(content, str) and content:
                found = self._find(_normalise(content))
                if found is not None:
                    return found
        return None

    def _find(self, text: str) -> PoolItem | None:
        matches: list[tuple[int, int, PoolItem]] = []
        for start in range(len(text) - ANCHOR + 1):
            for question, item in self._by_anchor.get(text[start : start + ANCHOR], ()):
                if text.startswith(question, start):
                    matches.append((start, start + len(question), item))
        for question, item in self._short:
            start = text.find(question)
            while start >= 0:
                matches.append((start, start + len(question), item))
                start = text.find(question, start + 1)
        if not matches:
            return None
        outer = [
            m
            for m in matches
            if not any(o[0] <= m[0] and m[1] <= o[1] and o[1] - o[0] > m[1] - m[0] for o in matches)
        ]
        return max(outer, key=lambda m: (m[0], m[1]))[2]
