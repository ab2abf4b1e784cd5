"""Which pool item a chat prompt asks about, found by the item's question text in it.

The local test server recognises each request's item this way, and ``cat export
--pool`` the item of a call stored without its id (a run store of schema 2 or older).
Whitespace is collapsed on both sides, since prompt templates re-wrap questions.
Questions of at least ``ANCHOR`` characters are indexed by their first ``ANCHOR``
characters, so that a prompt is scanned with one dict lookup per position; the few
shorter ones are searched for directly (``str.find`` runs in C). The user messages are
searched latest first, then the others. In a message the question followed by most of
its own options wins (a stem that several items share with other options, as a
benchmark may repeat one, goes to the item whose options follow it; a question quoted
inside another item's options does not count), then the one found last (few-shot
examples come before the question asked); a question found inside a longer one that is
found too does not count; items asked exactly alike go to the first of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from itempool import PoolItem

__all__ = ["ANCHOR", "QuestionIndex", "message_text", "normalise"]

#: Long enough that an anchor hit is almost always the question, short enough that every
#: realistic question has one.
ANCHOR: Final = 24
#: Prompts repeat (retries, several models on one question): remember the answers.
_CACHE_SIZE: Final = 4096
_WHITESPACE: Final = re.compile(r"\s+")


def normalise(text: str) -> str:
    """``text`` with every run of whitespace one space, stripped."""
    return _WHITESPACE.sub(" ", text).strip()


def message_text(content: Any) -> str:
    """The text of a message's ``content``: a string or a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


@dataclass(frozen=True)
class _Entry:
    question: str  # normalised
    bodies: tuple[str, ...]  # the option texts, normalised
    item: PoolItem


def _option_score(entry: _Entry, rest: str) -> tuple[float, float]:
    """The share of ``entry``'s options the prompt after its question holds: as "letter.
    text" (how the prompts letter them, which tells apart items whose option texts lie
    inside each other's), then as texts; (1, 1) for an item without options."""
    if not entry.bodies:
        return 1.0, 1.0
    letters = entry.item.options.keys()
    pairs = zip(letters, entry.bodies, strict=True)
    lettered = sum(f"{k}. {body}" in rest for k, body in pairs)
    plain = sum(body in rest for body in entry.bodies)
    return lettered / len(entry.bodies), plain / len(entry.bodies)


class QuestionIndex:
    """Finds the item of ``items`` whose question occurs in a chat prompt."""

    def __init__(self, items: Iterable[PoolItem]) -> None:
        self._by_anchor: dict[str, list[_Entry]] = {}
        self._short: list[_Entry] = []
        for item in items:
            question = normalise(item.question)
            bodies = tuple(normalise(body) for body in item.options.values())
            entry = _Entry(question, bodies, item)
            if len(question) >= ANCHOR:
                self._by_anchor.setdefault(question[:ANCHOR], []).append(entry)
            else:
                self._short.append(entry)
        self._in_text = lru_cache(maxsize=_CACHE_SIZE)(self._find)

    def find(self, messages: Sequence[Mapping[str, Any]]) -> PoolItem | None:
        """The item that ``messages`` (chat messages, ``{"role", "content"}``) ask
        about; None when no question is found."""
        ordered = [m for m in reversed(messages) if m.get("role") == "user"]
        ordered += [m for m in reversed(messages) if m.get("role") != "user"]
        for message in ordered:
            text = message_text(message.get("content"))
            if text:
                found = self._in_text(normalise(text))
                if found is not None:
                    return found
        return None

    def _find(self, text: str) -> PoolItem | None:
        matches: list[tuple[int, int, _Entry]] = []
        for start in range(len(text) - ANCHOR + 1):
            for entry in self._by_anchor.get(text[start : start + ANCHOR], ()):
                if text.startswith(entry.question, start):
                    matches.append((start, start + len(entry.question), entry))
        for entry in self._short:
            start = text.find(entry.question)
            while start >= 0:
                matches.append((start, start + len(entry.question), entry))
                start = text.find(entry.question, start + 1)
        if not matches:
            return None
        outer = [
            m
            for m in matches
            if not any(o[0] <= m[0] and m[1] <= o[1] and o[1] - o[0] > m[1] - m[0] for o in matches)
        ]

        # The question followed by its own options wins: a stem that several items share
        # goes to the one whose options follow it, and a question quoted in another
        # item's options does not count. Among equals the question found last wins
        # (few-shot examples come before the question asked), and max keeps the first
        # of items asked exactly alike; of two items on one stem whose options all follow
        # it, the one with more (another's options may be the first of its own).
        def rank(m: tuple[int, int, _Entry]) -> tuple[float, float, int, int, int]:
            lettered, plain = _option_score(m[2], text[m[1] :])
            return lettered, plain, m[0], m[1], len(m[2].bodies)

        return max(outer, key=rank)[2].item
