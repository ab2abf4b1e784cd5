"""A live model as an examinee: each item asked over an OpenAI-compatible endpoint,
through the run store, the way the pool's protocol says (``itempool.protocol``) unless
the run's generation settings say otherwise."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from cat import arguments as check
from cat.arguments import PathArg
from cat.errors import CatError
from cat.pools.loading import check_output_folders
from itempool import ItemType, LoadedPool, PoolItem
from synth.backend import (
    ChatBackend,
    ChatReply,
    ChatRequest,
    OpenAIBackend,
    loglikelihood_reply,
)
from synth.budget import RequestBudget
from synth.call_grades import answer_grade, judge_grade, parsed_answer
from synth.errors import SynthError
from synth.generation import GenerationSettings, describe
from synth.grading import GradeStatus
from synth.judge import JUDGE_PROMPT_VERSION, Judge, judge_messages, parse_judge_score
from synth.loglikelihood import CONTINUATIONS, OptionScores, continuations, prompt_text
from synth.prompter import Prompter
from synth.prompts import PROMPT_VERSION, Style
from synth.protocols import ProtocolFollowed, follow_protocol
from synth.reasoning import split_reasoning
from synth.scoring import ItemScore, score_reply
from synth.store import RunStore

#: Stop when this many replies in a row cannot be parsed: the model is not answering.
UNPARSED_RUN_LIMIT = 10

#: The stage of an answer's call in the run store (``cat export`` reads it), and of a
#: judge's call.
ASSESS_STAGE = "assess"
JUDGE_STAGE = "judge"


@dataclass
class EndpointExaminee:
    """A model behind an OpenAI-compatible endpoint, asked through ``synth``: every
    reply is stored in ``store`` (a SQLite file, or an open ``RunStore``) the moment it
    arrives, so a rerun pays for nothing twice and an interrupted assessment resumes.

    ``backend`` replaces the OpenAI client (tests, the demo's local server); without it
    ``start`` checks the key and that ``base_url`` answers before any paid call.

    Each item is asked as the pool's protocol says (``pool.json`` ``protocol``: the
    prompts, few-shot examples, sampling settings and the rule that reads the answer;
    ``synth.protocols``). ``generation`` (``synth.generation.GenerationSettings``)
    overrides the fields it sets (``model_fields_set``): temperature, max tokens, a
    system prompt, a prompt template, few-shot examples (the test then never asks an
    item shown as an example: ``example_items``), stop sequences, extra body fields, the
    extractor; ``style`` (None: the protocol's) the built-in prompts' style;
    ``protocol_form`` one of the protocol's other forms (``itempool.protocol``: e.g. the
    raw prompt for a completions endpoint) instead of its main one;
    ``temperature`` alone is kept for callers that set only it. Once started,
    ``followed`` holds the settings asked with and the fields that depart from the
    protocol. A reasoning model's ``<think>`` block is not graded: only the answer after
    it (``synth.reasoning``).
    ``concurrency`` bounds the calls in flight at once (the items of a batch), or
    ``budget``, one ``synth.budget.RequestBudget`` shared by several examinees
    (``cat.assessment.many``).

    Replies are graded as ``cat synth`` grades them (``synth.scoring``): on a pool of
    scored items their points 0..max_score, else right/wrong. With ``judge_model``
    ("MODEL" on ``base_url``, or "MODEL@URL") an open item's points are the LLM judge's
    instead (``synth.judge``, its calls stored beside the model's): for a pool
    calibrated on scores that ``cat synth --open-grading judge`` wrote. A reply the
    judge gives no usable score, asked twice, counts as not answered (skipped).
    ``judge_backend`` replaces the judge's client as ``backend`` does the model's."""

    model: str
    base_url: str | None = None
    store: PathArg | RunStore = Path("cat-assess.db")
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = 60.0
    max_attempts: int = 6
    style: Style | None = None
    temperature: float | None = None
    backend: ChatBackend | None = None
    judge_model: str | None = None
    judge_backend: ChatBackend | None = None
    generation: GenerationSettings | None = None
    protocol_form: str | None = None
    concurrency: int = 8
    budget: RequestBudget | None = None
    _judge: Judge | None = field(default=None, init=False, repr=False)
    _run_store: RunStore | None = field(default=None, init=False, repr=False)
    _owns_store: bool = field(default=False, init=False, repr=False)
    _items: dict[str, PoolItem] = field(default_factory=dict, init=False, repr=False)
    _language: str = field(default="en", init=False, repr=False)
    _seed: int = field(default=0, init=False, repr=False)
    _runner: asyncio.Runner = field(default_factory=asyncio.Runner, init=False, repr=False)
    # prompt, completion and reasoning tokens paid, calls paid, calls from the store
    _tokens: list[int] = field(default_factory=lambda: [0, 0, 0, 0, 0], init=False, repr=False)
    # The answers cut off at the token limit (finish reason "length"), by item.
    _truncated: set[str] = field(default_factory=set, init=False, repr=False)
    _keys: list[str] = field(default_factory=list, init=False, repr=False)
    _unparsed_run: int = field(default=0, init=False, repr=False)
    _scored: bool = field(default=False, init=False, repr=False)
    _prompter: Prompter | None = field(default=None, init=False, repr=False)
    followed: ProtocolFollowed | None = field(default=None, init=False, repr=False)
    _replies: dict[str, tuple[str, str | None]] = field(
        default_factory=dict, init=False, repr=False
    )

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model.strip():
            raise CatError(f"give a model name, got {self.model!r}")
        if self.backend is None and self.base_url is None:
            raise CatError(
                f"model {self.model!r} needs --base-url, the endpoint that serves it "
                "(or use sim:THETA / replay:FILE#SUBJECT)"
            )
        self.generation = _generation(self.generation, self.temperature)
        if self.style is not None:
            try:
                self.style = Style(self.style)
            except ValueError as exc:
                raise CatError(
                    f"style must be one of {', '.join(Style)}, got {self.style!r}"
                ) from exc
        if self.budget is None:
            self.concurrency = check.whole(self.concurrency, "concurrency", 1)
            self.budget = RequestBudget(self.concurrency)
        elif not isinstance(self.budget, RequestBudget):
            raise CatError(f"budget must be a RequestBudget, got {type(self.budget).__name__}")
        else:
            self.concurrency = self.budget.limit

    @property
    def label(self) -> str:
        return self.model

    def start(self, pool: LoadedPool, seed: int) -> None:
        from synth.backend import RetryPolicy, api_key, check_reachable

        self.prepare(pool, seed)
        if self.backend is None:
            assert self.base_url is not None  # checked in __post_init__
            api_key(self.base_url, self.api_key_env)
            check_reachable(self.base_url)
            self.backend = OpenAIBackend(
                self.base_url,
                self.api_key_env,
                self.timeout,
                RetryPolicy(max_attempts=self.max_attempts),
                seed=seed,
            )
        if self.judge_model is not None:
            self._start_judge(seed)
        if isinstance(self.store, RunStore):
            self._run_store = self.store
        else:
            path = check.as_path(self.store, "store")
            check_output_folders(path)
            self._run_store, self._owns_store = RunStore(path), True

    def prepare(self, pool: LoadedPool, seed: int) -> None:
        """How each item of ``pool`` will be asked (the protocol followed, every prompt
        rendered), with no call and no store: ``start``'s first step, and all a
        ``--dry-run`` needs (``prompt``)."""
        self._items = {item.id: item for item in pool.items}
        self._language = pool.manifest.language
        self._seed = seed
        # A pool of scored items takes each reply's points 0..max_score, a 0/1 pool its
        # right/wrong (synth.scoring: the same grading as cat synth's).
        self._scored = pool.params is not None and pool.params.scored
        assert self.generation is not None  # set by __post_init__
        try:
            self.followed = follow_protocol(
                pool.protocol, self.generation, self.style, self.protocol_form
            )
            settings = self.followed.settings
            # Examples with the assessment's seed; every prompt is rendered now, so that
            # a template's error stops the run before any call.
            self._prompter = Prompter.for_pool(settings, pool.items, self._language, seed)
            self._prompter.check(pool.items, (self.followed.style,))
        except SynthError as exc:
            raise CatError(str(exc)) from exc

    def prompt(self, item: PoolItem) -> tuple[tuple[str, str], ...]:
        """The messages ``item`` is asked with, as ``answer`` sends them (``prepare``
        first): (role, text) pairs."""
        assert self._prompter is not None and self.followed is not None  # set by prepare
        return tuple(self._prompter.first(item, self.followed.style))

    def _start_judge(self, seed: int) -> None:
        from synth.backend import RetryPolicy, api_key, check_reachable
        from synth.participants import parse_agents

        assert self.judge_model is not None
        try:
            (agent,) = parse_agents(self.judge_model, self.base_url)
            self._judge = Judge(agent.model, agent.base_url)
        except (SynthError, ValueError) as exc:
            raise CatError(f"--judge-model {self.judge_model}: {exc}") from exc
        if self.judge_backend is None:
            if agent.base_url == self.base_url and isinstance(self.backend, OpenAIBackend):
                self.judge_backend = self.backend
            else:
                api_key(agent.base_url, self.api_key_env)
                check_reachable(agent.base_url)
                self.judge_backend = OpenAIBackend(
                    agent.base_url,
                    self.api_key_env,
                    self.timeout,
                    RetryPolicy(max_attempts=self.max_attempts),
                    seed=seed,
                )

    def example_items(self) -> tuple[str, ...]:
        """The items shown as few-shot examples, which the test must never ask (none
        without few-shot); known once ``start`` has drawn them."""
        return () if self._prompter is None else self._prompter.shown()

    def checkpoints(self) -> RunStore | None:
        return self._run_store

    def answer(self, item_ids: Sequence[str]) -> list[float | None]:
        try:
            verdicts = self._runner.run(self._ask_all(item_ids))
        except SynthError as exc:
            # The backend's messages mostly name the model already: name it once.
            message = str(exc)
            if not message.startswith(f"{self.model}:"):
                message = f"{self.model}: {message}"
            raise CatError(message) from exc
        out: list[float | None] = []
        for right, parsed in verdicts:
            self._unparsed_run = 0 if parsed else self._unparsed_run + 1
            if self._unparsed_run >= UNPARSED_RUN_LIMIT:
                raise CatError(
                    f"{self.model}: {UNPARSED_RUN_LIMIT} replies in a row had no readable answer "
                    "(see the replies in the store); stopping"
                )
            out.append(right)
        return out

    def reply_of(self, item_id: str) -> tuple[str, str | None] | None:
        """The raw reply to ``item_id``'s last answer and the answer parsed from it (a
        choice item's letters, the number read from an open reply), or None when this
        examinee did not answer it (in an earlier, interrupted part of the run)."""
        return self._replies.get(item_id)

    async def _ask_all(self, item_ids: Sequence[str]) -> list[tuple[float | None, bool]]:
        return list(await asyncio.gather(*(self._ask(self._items[i]) for i in item_ids)))

    async def _call(
        self, request: ChatRequest, backend: ChatBackend, version: str, *, loglik: bool = False
    ) -> ChatReply:
        """The reply, from the store or else asked (within the budget of calls in
        flight) and stored at once; ``loglik``: the options' log-likelihoods
        (``synth.loglikelihood``) from a completions endpoint."""
        assert self._run_store is not None and self.budget is not None  # set by start
        stored = self._run_store.get_call(request.key)
        if stored is not None:
            self._tokens[4] += 1
            self._keys.append(request.key)
            return stored.reply
        async with self.budget.slot():
            if loglik:
                if not isinstance(backend, OpenAIBackend):
                    raise SynthError("log-likelihood scoring needs an OpenAI-compatible endpoint")
                reply = await loglikelihood_reply(backend, request)
            else:
                reply = await backend.complete(request)
        self._run_store.put_call(request, reply, None, version)
        self._keys.append(request.key)
        self._tokens[0] += reply.prompt_tokens
        self._tokens[1] += reply.completion_tokens
        self._tokens[2] += reply.reasoning_tokens
        self._tokens[3] += 1
        return reply

    async def _ask(self, item: PoolItem) -> tuple[float | None, bool]:
        assert self.backend is not None and self._prompter is not None  # set by start
        assert self._run_store is not None and self.followed is not None
        messages = self._prompter.first(item, self.followed.style)
        settings = self.followed.settings
        if settings.mode == "loglikelihood":
            return await self._ask_loglikelihood(item, messages)
        request = self._prompter.request(
            self.model, messages, self._seed, item_id=item.id, stage=ASSESS_STAGE
        )
        reply = await self._call(request, self.backend, PROMPT_VERSION)
        text = reply.text
        if reply.truncated:
            self._truncated.add(item.id)
        # A reasoning model's thinking is kept in the store; only its answer is graded.
        final = split_reasoning(text).answer
        scored = score_reply(
            final,
            item,
            language=self._language,
            extractor=self.followed.settings.extractor,
        )
        answer = parsed_answer(scored)
        self._replies[item.id] = (text, answer)
        self._run_store.set_call_grade(
            request.key, answer, answer_grade(scored, item), item_id=item.id, stage=ASSESS_STAGE
        )
        if item.continuous:  # the reference metric's value itself, as the pool was fitted
            return scored.credit, scored.status is GradeStatus.OK
        if self._judge is not None and item.type is ItemType.OPEN:
            return await self._judged(item, text), scored.status is GradeStatus.OK
        points = scored.points if self._scored else int(scored.correct)
        return points, scored.status is GradeStatus.OK

    async def _ask_loglikelihood(
        self, item: PoolItem, messages: tuple[tuple[str, str], ...]
    ) -> tuple[float | None, bool]:
        """``item`` scored by the log-likelihood of each option after the prompt."""
        assert self.backend is not None and self._run_store is not None
        assert self.followed is not None and self._prompter is not None
        settings = self.followed.settings
        pairs = continuations(item, settings.choices)
        extra = {**(settings.extra_body or {}), CONTINUATIONS: [list(p) for p in pairs]}
        request = ChatRequest(
            self.model,
            (("user", prompt_text(messages)),),
            0.0,
            self._seed,
            1,
            extra_body=extra,
            item_id=item.id,
            stage=ASSESS_STAGE,
        )
        reply = await self._call(request, self.backend, PROMPT_VERSION, loglik=True)
        letter = OptionScores.from_text(reply.text).choice(settings.extractor)
        right = letter == item.answer
        credit = float(right)
        scored = ItemScore(
            GradeStatus.OK,
            letter,
            credit,
            right,
            credit,
            int(right) * item.max_score,
            item.max_score,
        )
        self._replies[item.id] = (reply.text, letter)
        self._run_store.set_call_grade(
            request.key, letter, answer_grade(scored, item), item_id=item.id, stage=ASSESS_STAGE
        )
        return scored.points if self._scored else int(right), True

    async def _judged(self, item: PoolItem, reply: str) -> int | None:
        """The judge's points for ``reply`` (a second ask, with the next seed, when the
        first gives no usable score); None when neither does."""
        assert self._judge is not None and self.judge_backend is not None
        assert self._run_store is not None
        messages = judge_messages(item, self._language, reply)
        for attempt in range(2):
            request = ChatRequest(
                self._judge.model,
                messages,
                0.0,
                self._seed + attempt,
                item_id=item.id,
                stage=JUDGE_STAGE,
            )
            text = (await self._call(request, self.judge_backend, JUDGE_PROMPT_VERSION)).text
            verdict = parse_judge_score(text, item.max_score)
            self._run_store.set_call_grade(
                request.key,
                None if verdict.points is None else str(verdict.points),
                judge_grade(verdict.points, item.max_score, verdict.problem),
                item_id=item.id,
                stage=JUDGE_STAGE,
            )
            if verdict.points is not None:
                return verdict.points if self._scored else int(verdict.points * 2 >= item.max_score)
        return None

    def truth(self) -> None:
        return None

    def call_keys(self) -> list[str]:
        """The store keys of the calls made so far, in order, paid or read from the
        store: a resumed assessment counts its whole usage by them
        (``cat.assessment.run.RunCalls``)."""
        return list(self._keys)

    def usage(self) -> dict[str, int]:
        prompt, completion, reasoning, calls, stored = self._tokens
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "calls": calls,
            "calls_from_store": stored,
            "reasoning_tokens": reasoning,
            "truncated": len(self._truncated),
        }

    def close(self) -> None:
        backends = [self.backend]
        if self.judge_backend is not None and self.judge_backend is not self.backend:
            backends.append(self.judge_backend)
        for backend in backends:
            close = getattr(backend, "close", None)
            if close is not None:
                self._runner.run(close())
        self._runner.close()
        if self._owns_store and self._run_store is not None:
            self._run_store.close()
            self._run_store = None


def _generation(generation: object, temperature: object) -> GenerationSettings:
    """The examinee's settings: ``generation``, or ``temperature`` alone (None: nothing
    set, the pool's protocol decides)."""
    if temperature is not None:
        temperature = check.number(temperature, "temperature")
    if generation is None:
        try:
            given = {} if temperature is None else {"temperature": temperature}
            return GenerationSettings(**given)
        except ValidationError as exc:
            raise CatError(describe(exc).replace("--temperature", "temperature")) from exc
    if not isinstance(generation, GenerationSettings):
        raise CatError(
            "generation must be synth.generation.GenerationSettings, got "
            f"{type(generation).__name__}"
        )
    if temperature is not None and temperature != generation.temperature:
        raise CatError(
            f"temperature {temperature:g} and generation's {generation.temperature:g} differ: "
            "give it in generation only"
        )
    return generation
