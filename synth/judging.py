"""The judge phase of a run: the LLM judge scores every open answer it has not scored yet.

After the participants have answered, each graded answer to an open item is judged once:
the judgement is stored under (item, participant, sha256 of the final reply, judge model,
``JUDGE_PROMPT_VERSION``), so a rerun finds it and asks nothing. A judgement is asked
again when it failed (the call spent its retries, or the judge's score was refused), or
when its prompt changed (an edited question, reference, rubric or max_score). A refused
reply is in the call store, so its retry is asked with the seed moved on by the number
of refusals so far: otherwise the rerun would read the same refusal back. In a batch run
(``synth.batch_round``, ``synth.batch_api``) the judge's calls are deferred to batches
like the answers', and a score refused ``max_attempts`` times is not asked again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from itempool import ItemType, PoolItem, QuestionSet
from synth.backend import CallDeferred, ChatReply, ChatRequest
from synth.call_grades import judge_grade
from synth.judge import JUDGE_PROMPT_VERSION, Judge, judge_messages, parse_judge_score
from synth.prompts import Message
from synth.store import Judgement, Result, RunStore

log = logging.getLogger(__name__)

#: Asks one request at one base URL; None when the call failed (recorded by the caller).
JudgeCall = Callable[[ChatRequest, str], Awaitable[ChatReply | None]]
#: The stage a judge's call is stored under (``synth.runner.JUDGE_ROLE`` is the same).
JUDGE_STAGE = "judge"


@dataclass
class JudgeCounts:
    """What the judge phase did: ``new`` judgements made now, ``stored`` ones found in
    the store, ``failed`` ones (the call failed or the score was refused; ``refused``
    counts the latter), to be asked again by the next run."""

    new: int = 0
    stored: int = 0
    failed: int = 0
    refused: int = 0


@dataclass(frozen=True)
class _Job:
    item: PoolItem
    participant: str
    reply_hash: str
    messages: tuple[Message, ...]
    prompt_hash: str
    rejected: int


class JudgePhase:
    """Judges the open answers of ``participants`` to ``pool``'s items in ``store``."""

    def __init__(
        self,
        judge: Judge,
        pool: QuestionSet,
        store: RunStore,
        participants: Sequence[str],
        *,
        temperature: float,
        seed: int,
        max_tokens: int | None,
        concurrency: int,
        max_attempts: int | None = None,
    ) -> None:
        self.judge, self.pool, self.store = judge, pool, store
        self.participants = set(participants)
        self.temperature, self.seed, self.max_tokens = temperature, seed, max_tokens
        self.concurrency = concurrency
        # A batch run goes round until nothing is asked: its refused scores must stop.
        self.max_attempts = max_attempts
        self.counts = JudgeCounts()
        self._error: Exception | None = None

    async def run(self, call: JudgeCall, grow: Callable[[int], None]) -> JudgeCounts:
        """Judge what needs judging through ``call``; ``grow(n)`` announces n more calls."""
        jobs = self._jobs()
        grow(len(jobs))
        queue: asyncio.Queue[_Job] = asyncio.Queue()
        for job in jobs:
            queue.put_nowait(job)
        workers = [
            asyncio.create_task(self._worker(queue, call))
            for _ in range(min(self.concurrency, max(len(jobs), 1)))
        ]
        try:
            await queue.join()
        finally:
            for worker in workers:
                worker.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
        if self._error is not None:
            raise self._error
        return self.counts

    def _jobs(self) -> list[_Job]:
        items = {item.id: item for item in self.pool.items if item.type is ItemType.OPEN}
        jobs = []
        for result in self.store.results():
            item = items.get(result.item_id)
            if (
                item is None
                or result.status == "failed"
                or result.participant not in self.participants
                or result.reply_hash is None
            ):
                continue
            text = self._final_reply(result)
            if text is None:
                continue
            messages = judge_messages(item, self.pool.language, text)
            prompt_hash = messages_hash(messages)
            old = self.store.get_judgement(
                item.id,
                result.participant,
                result.reply_hash,
                self.judge.model,
                JUDGE_PROMPT_VERSION,
            )
            same_prompt = old is not None and old.prompt_hash == prompt_hash
            if old is not None and same_prompt and old.status == "ok":
                self.counts.stored += 1
                continue
            rejected = old.rejected if old is not None and same_prompt else 0
            if self.max_attempts is not None and rejected >= self.max_attempts:
                self.counts.failed += 1  # refused as often as allowed: not asked again
                continue
            jobs.append(
                _Job(item, result.participant, result.reply_hash, messages, prompt_hash, rejected)
            )
        return jobs

    def _final_reply(self, result: Result) -> str | None:
        key = result.stages[-1].get("key") if result.stages else None
        stored = self.store.get_call(key) if isinstance(key, str) else None
        return None if stored is None else stored.reply.text

    async def _worker(self, queue: asyncio.Queue[_Job], call: JudgeCall) -> None:
        while True:
            job = await queue.get()
            try:
                if self._error is None:
                    await self._judge(job, call)
            except CallDeferred:
                pass  # a batch answers it first: judged in a later round
            except Exception as exc:  # a bug or a broken store: stop, keep what is stored
                self._error = exc
            finally:
                queue.task_done()

    async def _judge(self, job: _Job, call: JudgeCall) -> None:
        request = ChatRequest(
            self.judge.model,
            job.messages,
            self.temperature,
            self.seed + job.rejected,
            self.max_tokens,
            item_id=job.item.id,
            stage=JUDGE_STAGE,
        )
        reply = await call(request, self.judge.base_url)
        points, error, rejected = None, None, job.rejected
        if reply is None:
            error = "the judge's call failed (see the store's failures)"
        else:
            verdict = parse_judge_score(reply.text, job.item.max_score)
            points, error = verdict.points, verdict.problem
            self.store.set_call_grade(
                request.key,
                None if points is None else str(points),
                judge_grade(points, job.item.max_score, error),
                item_id=job.item.id,
                stage=JUDGE_STAGE,
            )
            if error is not None:
                rejected += 1
                self.counts.refused += 1
                log.warning("judge %s on %s: %s", self.judge.model, job.item.id, error)
        self.store.put_judgement(
            Judgement(
                item_id=job.item.id,
                participant=job.participant,
                reply_hash=job.reply_hash,
                judge_model=self.judge.model,
                prompt_version=JUDGE_PROMPT_VERSION,
                status="ok" if error is None else "failed",
                points=points,
                max_score=job.item.max_score,
                prompt_hash=job.prompt_hash,
                call_key=request.key,
                rejected=rejected,
                error=error,
            )
        )
        if error is None:
            self.counts.new += 1
        else:
            self.counts.failed += 1


def messages_hash(messages: Sequence[Message]) -> str:
    """The sha256 hex of a prompt's messages (a judge prompt's identity, seed aside)."""
    canonical = json.dumps([list(m) for m in messages], ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def judged_points(
    store: RunStore, judge_model: str, results: Sequence[Result], items: Mapping[str, PoolItem]
) -> dict[tuple[str, str], int]:
    """(participant, item id) -> the judge's points, for each open answer among
    ``results`` whose stored judgement is valid: made by ``judge_model`` under the
    current judge prompt version, of the same reply, on the item's current scale."""
    answers = {
        (r.participant, r.item_id): r
        for r in results
        if r.status != "failed" and r.item_id in items and items[r.item_id].type is ItemType.OPEN
    }
    points = {}
    for j in store.judgements(judge_model, JUDGE_PROMPT_VERSION):
        result = answers.get((j.participant, j.item_id))
        if (
            j.status == "ok"
            and j.points is not None
            and result is not None
            and result.reply_hash == j.reply_hash
            and items[j.item_id].max_score == j.max_score
        ):
            points[(j.participant, j.item_id)] = j.points
    return points
