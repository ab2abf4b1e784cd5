"""Grade stored answers again from their stored replies, without any call.

A result lacks the current grading when it was stored before scores existed (a run store
migrated from schema 1: no credit, points or reply hash) or when its item's max_score has
changed since. Grading is a pure function of the final reply, so the reply stored in the
call store is graded again and the result updated in place; its stages, prompt version
and date stay.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from itempool import PoolItem
from synth.scoring import ItemScore
from synth.store import Result, RunStore

#: Scores a reply to an item (``synth.scoring.score_reply`` with the run's settings).
Score = Callable[[str, PoolItem], ItemScore]


def reply_hash(text: str) -> str:
    """The sha256 hex of a reply's text: what a judgement of it is keyed by."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def graded_result(
    participant: str, item: PoolItem, verdict: ItemScore, stages: list[dict[str, Any]], text: str
) -> Result:
    """The stored result of ``participant``'s final reply ``text`` to ``item``."""
    return Result(
        participant,
        item.id,
        verdict.status.value,
        verdict.answer,
        verdict.score,
        verdict.correct,
        stages,
        credit=verdict.credit,
        points=verdict.points,
        max_score=verdict.max_score,
        reply_hash=reply_hash(text),
    )


def is_stale(result: Result, item: PoolItem) -> bool:
    """Whether ``result`` lacks the grading of ``synth.scoring`` on ``item``'s scale."""
    return result.credit is None or result.reply_hash is None or result.max_score != item.max_score


def regrade_stored(
    store: RunStore, items: Iterable[PoolItem], participants: Sequence[str], score: Score
) -> tuple[set[tuple[str, str]], int]:
    """Grade again the stale answers of ``participants`` to ``items``; returns the
    (participant, item id) answers that are done (graded, not failed) and how many were
    graded again. An answer whose final reply is missing from the store is not done: the
    run asks it again."""
    by_id = {item.id: item for item in items}
    names = set(participants)
    done, regraded = set(), 0
    for result in store.results():
        if result.status == "failed":
            continue
        item = by_id.get(result.item_id)
        if item is None or result.participant not in names or not is_stale(result, item):
            done.add((result.participant, result.item_id))
            continue
        key = result.stages[-1].get("key") if result.stages else None
        stored = store.get_call(key) if isinstance(key, str) else None
        if stored is None:
            continue
        text = stored.reply.text
        store.regrade_result(
            graded_result(result.participant, item, score(text, item), result.stages, text)
        )
        regraded += 1
        done.add((result.participant, result.item_id))
    return done, regraded
