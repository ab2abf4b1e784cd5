"""The rows of the run store (``synth.store``) as Python values."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from synth.backend import ChatReply


@dataclass(frozen=True)
class StoredCall:
    """A completed call as the store holds it."""

    key: str
    reply: ChatReply
    cost: float | None


@dataclass(frozen=True)
class CallRecord:
    """A stored call in full, as ``cat export`` reads it: the request as its payload
    (model, messages, temperature, seed, max_tokens, and stop and extra_body where set),
    the reply with its usage, and what the call was for and how its reply was graded
    (None where the store does not know: a call stored by schema 2 or older, or not
    graded yet)."""

    key: str
    model: str
    request: dict[str, Any]
    reply: ChatReply
    cost: float | None
    prompt_version: str
    created: str
    item_id: str | None = None
    stage: str | None = None
    answer: str | None = None
    grade: dict[str, Any] | None = None


@dataclass(frozen=True)
class Result:
    """One participant's graded final answer to one item.

    ``credit`` (0..1) and ``points`` (0..``max_score``) are the reference grading of
    ``synth.scoring``; ``reply_hash`` is the sha256 of the final reply's text. The four
    are None in a result migrated from a schema 1 store until it is graded again."""

    participant: str
    item_id: str
    status: str  # "ok", "unparsed" or "failed"
    answer: str | None
    score: float
    correct: bool
    stages: list[dict[str, Any]]  # per stage: role, model, call key, parsed answer
    credit: float | None = None
    points: int | None = None
    max_score: int | None = None
    reply_hash: str | None = None


@dataclass(frozen=True)
class Judgement:
    """The judge's score of one open answer; ``status`` "ok" (``points`` set) or
    "failed" (the call failed or its score was refused: ``error`` says why; the next run
    asks again). ``prompt_hash`` identifies the exact judge prompt (an edited item asks
    again); ``rejected`` counts the judge replies refused so far (each retry asks with
    the seed moved on by it, so a stored refusal is not simply read back)."""

    item_id: str
    participant: str
    reply_hash: str
    judge_model: str
    prompt_version: str
    status: str
    points: int | None
    max_score: int
    prompt_hash: str
    call_key: str | None
    rejected: int = 0
    error: str | None = None


@dataclass(frozen=True)
class StoredBatch:
    """One batch of the Batch API path: a file of ``keys`` (call keys, in line order)
    for ``model`` at ``base_url``. ``file_id`` is set once the file is uploaded,
    ``batch_id`` once the batch is created; ``status`` is the batch's last known
    status ("planned" before it exists); ``imported`` once its results are stored."""

    name: str
    base_url: str
    model: str
    round: int
    keys: tuple[str, ...]
    file_id: str | None = None
    batch_id: str | None = None
    status: str = "planned"
    imported: bool = False
