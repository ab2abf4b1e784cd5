"""Ask every participant every item, through the run store, with bounded concurrency.

``concurrency`` workers take (participant, item) jobs from a queue, so at most that many
calls are in flight and memory does not grow with the pool. Each call first looks in the
store; an identical call already in flight is awaited rather than sent again (a pair's
generation is the same request as its first agent's single answer, so they share it).
A call that spends its retry budget is recorded as failed and the job's result too;
rerunning the same command tries exactly those again and nothing else.

Before asking, results that lack the current grading (a store migrated from schema 1, or
an item whose ``max_score`` changed) are graded again from their stored final replies,
without any call. After answering, a ``judge`` scores the open answers
(``synth.judging``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from itempool import ItemType, PoolItem, QuestionSet
from synth import prompts
from synth.backend import CallDeferred, ChatBackend, ChatReply, ChatRequest
from synth.call_grades import answer_grade, parsed_answer
from synth.errors import SynthError
from synth.generation import GenerationSettings
from synth.judge import JUDGE_PROMPT_VERSION, Judge
from synth.judging import JudgeCounts, JudgePhase
from synth.names import GENERATION_STAGE
from synth.participants import Participant
from synth.pricing import Prices
from synth.prompter import Prompter
from synth.reasoning import split_reasoning
from synth.regrade import graded_result, regrade_stored
from synth.scoring import ItemScore, score_reply
from synth.store import Result, RunStore


@dataclass
class RunProgress:
    """Counts for the progress bar; ``total`` counts stage calls, shared ones included.

    ``stored_answers`` counts the (participant, item) answers already graded in the store,
    which need no call at all. ``stored_calls`` counts the stage calls of the other answers
    that the store answered: made by an earlier run cut short before the answer was graded,
    or earlier in this run by a participant that shares the call (a pair's generation is
    its first agent's single answer). ``regraded`` counts the stored answers graded again
    from their stored replies (see the module docstring). ``judge`` holds the judge's
    counts when there is one."""

    total: int
    done: int = 0
    new_calls: int = 0
    stored_calls: int = 0
    stored_answers: int = 0
    regraded: int = 0
    failed_calls: int = 0
    tokens: int = 0
    cost: float = 0.0
    judge: JudgeCounts | None = None
    started: float = field(default_factory=time.perf_counter)

    @property
    def rate(self) -> float:
        """New calls per second so far."""
        return self.new_calls / max(time.perf_counter() - self.started, 1e-9)


@dataclass(frozen=True)
class RunSettings:
    """Sampling, prompting and grading settings shared by every call of a run:
    ``generation`` holds how the answers are asked for (``synth.generation``)."""

    seed: int = 0
    order_threshold: float = 0.8
    concurrency: int = 8
    generation: GenerationSettings = field(default_factory=GenerationSettings)

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise SynthError(f"concurrency must be at least 1, got {self.concurrency}")

    @property
    def temperature(self) -> float:
        """The sampling temperature of every call (the judge's too)."""
        return self.generation.temperature

    @property
    def max_tokens(self) -> int | None:
        """The reply's token limit of every call (the judge's too); None: the endpoint's."""
        return self.generation.max_tokens


#: The stage (``DeferredCall.role``) of a judge's call.
JUDGE_ROLE = "judge"


def call_prompt_version(role: str) -> str:
    """The prompt version a call of stage ``role`` is stored under: the judge's or the
    answers'."""
    return f"judge-{JUDGE_PROMPT_VERSION}" if role == JUDGE_ROLE else prompts.PROMPT_VERSION


#: Where a stage keeps its reply text until the job's stages are parsed.
_TEXT = "_reply_text"


class _CallFailedError(Exception):
    """A call spent its retry budget (the error is in the store)."""


@dataclass(frozen=True)
class DeferredCall:
    """A request a batch must answer before its job can go on: its stage (generation,
    debate, reflection, or the judge's) and the endpoint it was meant for."""

    request: ChatRequest
    base_url: str
    role: str


class SynthRunner:
    """One run: a pool, its participants, the backends by base URL, and the store."""

    def __init__(
        self,
        pool: QuestionSet,
        participants: Sequence[Participant],
        store: RunStore,
        backends: Mapping[str, ChatBackend],
        settings: RunSettings = RunSettings(),
        prices: Prices | None = None,
        on_progress: Callable[[RunProgress], None] | None = None,
        judge: Judge | None = None,
        judge_attempts: int | None = None,
        prompter: Prompter | None = None,
    ) -> None:
        """``prompter`` builds each answer's messages and request (default: one for
        ``settings.generation``, its few-shot examples drawn from ``pool``'s items)."""
        missing = {p.first.base_url for p in participants} | {
            p.second.base_url for p in participants if p.second is not None
        }
        if judge is not None:
            missing.add(judge.base_url)
        missing -= set(backends)
        if missing:
            raise SynthError(f"no backend for {', '.join(sorted(missing))}")
        self.pool, self.participants, self.store = pool, list(participants), store
        self.backends, self.settings = backends, settings
        self.prices = prices or Prices({})
        self.on_progress = on_progress
        self.judge, self.judge_attempts = judge, judge_attempts
        if prompter is None:
            prompter = Prompter.for_pool(
                settings.generation, pool.items, pool.language, settings.seed
            )
        self.prompter = prompter
        self._in_flight: dict[str, asyncio.Future[ChatReply]] = {}
        #: The calls a batch must answer first, by key (a backend raised CallDeferred).
        self.deferred: dict[str, DeferredCall] = {}
        self._error: Exception | None = None
        self.progress = RunProgress(
            total=sum(p.n_stages for p in self.participants) * len(pool.items)
        )

    async def run(self) -> RunProgress:
        """Answer every job not yet in the store, then judge the open answers if there is
        a judge; returns the final counts."""
        names = [p.name for p in self.participants]
        done, regraded = regrade_stored(self.store, self.pool.items, names, self._score)
        self.progress.regraded += regraded
        queue: asyncio.Queue[tuple[Participant, PoolItem]] = asyncio.Queue()
        for participant in self.participants:
            for item in self.pool.items:
                if (participant.name, item.id) in done:
                    self.progress.stored_answers += 1
                    self._advance(participant.n_stages)
                else:
                    queue.put_nowait((participant, item))
        workers = [
            asyncio.create_task(self._worker(queue))
            for _ in range(min(self.settings.concurrency, max(queue.qsize(), 1)))
        ]
        try:
            await queue.join()
        finally:
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
        if self._error is not None:
            raise self._error
        if self.judge is not None:
            s = self.settings
            phase = JudgePhase(
                self.judge,
                self.pool,
                self.store,
                [p.name for p in self.participants],
                temperature=s.temperature,
                seed=s.seed,
                max_tokens=s.max_tokens,
                concurrency=s.concurrency,
                max_attempts=self.judge_attempts,
            )
            self.progress.judge = await phase.run(self._judge_call, self._grow)
        return self.progress

    def _score(self, text: str, item: PoolItem) -> ItemScore:
        final = split_reasoning(text).answer  # a reasoning model's thinking is not graded
        return score_reply(
            final,
            item,
            self.settings.order_threshold,
            language=self.pool.language,
            extractor=self.settings.generation.extractor,
        )

    async def _judge_call(self, request: ChatRequest, base_url: str) -> ChatReply | None:
        try:
            return await self._call(request, base_url, JUDGE_ROLE)
        except _CallFailedError:
            return None

    def _grow(self, n: int) -> None:
        self.progress.total += n
        self._advance(0)

    async def _worker(self, queue: asyncio.Queue[tuple[Participant, PoolItem]]) -> None:
        while True:
            participant, item = await queue.get()
            try:
                if self._error is None:
                    await self._answer(participant, item)
            except Exception as exc:  # a bug or a broken store: stop the run, keep what is stored
                self._error = exc
            finally:
                queue.task_done()

    async def _answer(self, participant: Participant, item: PoolItem) -> None:
        style, prompter = participant.style, self.prompter
        stages: list[dict[str, Any]] = []
        try:
            first = await self._stage(
                stages,
                GENERATION_STAGE,
                participant.first.model,
                participant.first.base_url,
                prompter.first(item, style),
                item,
            )
            final = first
            if participant.second is not None:
                review = await self._stage(
                    stages,
                    "debate",
                    participant.second.model,
                    participant.second.base_url,
                    prompter.debate(item, style, first),
                    item,
                )
                final = await self._stage(
                    stages,
                    "reflection",
                    participant.first.model,
                    participant.first.base_url,
                    prompter.reflection(item, style, first, review),
                    item,
                )
        except _CallFailedError:
            self._advance(participant.n_stages - len(stages))
            self._parse_stages(stages, item)
            result = Result(participant.name, item.id, "failed", None, 0.0, False, stages)
            self.store.put_result(result, prompts.PROMPT_VERSION)
            return
        except CallDeferred:  # answered by a later batch round: nothing stored yet
            self._advance(participant.n_stages - len(stages))
            return
        self._parse_stages(stages, item)
        verdict = self._score(final, item)
        self.store.put_result(
            graded_result(participant.name, item, verdict, stages, final), prompts.PROMPT_VERSION
        )

    async def _stage(
        self,
        stages: list[dict[str, Any]],
        role: str,
        model: str,
        base_url: str,
        messages: tuple[prompts.Message, ...],
        item: PoolItem,
    ) -> str:
        # The stage is the call's role (generation, debate, reflection): ``cat export``
        # reads it from the store.
        request = self.prompter.request(
            model, messages, self.settings.seed, item_id=item.id, stage=role
        )
        try:
            reply = await self._call(request, base_url, role)
        except _CallFailedError:
            stages.append({"role": role, "model": model, "key": request.key, "failed": True})
            raise
        # Parsed once the job ends (``_parse_stages``): a job deferred to a batch round
        # would parse its stored stages again in every round.
        stages.append({"role": role, "model": model, "key": request.key, _TEXT: reply.text})
        return reply.text

    def _parse_stages(self, stages: list[dict[str, Any]], item: PoolItem) -> None:
        """Each answered stage's parsed answer, in place of its reply text; the call's
        parsed answer and grade are stored with it (``synth.call_grades``)."""
        for stage in stages:
            if _TEXT not in stage:
                continue
            parsed = self._score(stage.pop(_TEXT), item)
            stage["answer"] = parsed.answer
            stage["correct"] = parsed.correct
            if item.type is ItemType.OPEN or item.max_score > 1:
                stage["credit"] = parsed.credit
            if parsed.number is not None:
                stage["number"] = parsed.number
            self.store.set_call_grade(
                stage["key"],
                parsed_answer(parsed),
                answer_grade(parsed, item),
                item_id=item.id,
                stage=stage["role"],
            )

    async def _call(self, request: ChatRequest, base_url: str, role: str) -> ChatReply:
        """The reply to ``request`` at ``base_url``, for a call of stage ``role``: from
        the store, from an identical call in flight, or asked (and stored)."""
        key = request.key
        stored = self.store.get_call(key)
        if stored is not None:
            self.progress.stored_calls += 1
            self._advance(1)
            return stored.reply
        pending = self._in_flight.get(key)
        if pending is not None:
            try:
                reply = await asyncio.shield(pending)
            except CallDeferred:
                raise  # counted with its job's remaining stages
            except BaseException:
                self._advance(1)
                raise
            self._advance(1)
            return reply
        future: asyncio.Future[ChatReply] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future
        try:
            reply = await self.backends[base_url].complete(request)
        except CallDeferred:
            self.deferred.setdefault(key, DeferredCall(request, base_url, role))
            # Identical calls waiting on this one are deferred with it.
            future.set_exception(CallDeferred())
            future.exception()
            raise
        except SynthError as exc:
            self.store.put_failure(request, str(exc))
            self.progress.failed_calls += 1
            self._fail(future, str(exc))
            self._advance(1)
            raise _CallFailedError(str(exc)) from exc
        except BaseException:  # a bug or a cancellation: waiters must not hang
            self._fail(future, "the first identical request did not finish")
            raise
        finally:
            self._in_flight.pop(key, None)
        # No await from here to the store's commit: no identical call can slip in between.
        future.set_result(reply)
        cost = self.prices.cost(request.model, reply)
        self.store.put_call(request, reply, cost, call_prompt_version(role))
        self.progress.new_calls += 1
        self.progress.tokens += reply.prompt_tokens + reply.completion_tokens
        self.progress.cost += cost or 0.0
        self._advance(1)
        return reply

    @staticmethod
    def _fail(future: asyncio.Future[ChatReply], message: str) -> None:
        future.set_exception(_CallFailedError(message))
        future.exception()  # marked retrieved: no warning when nobody else waited

    def _advance(self, n: int) -> None:
        self.progress.done += n
        if self.on_progress is not None:
            self.on_progress(self.progress)
