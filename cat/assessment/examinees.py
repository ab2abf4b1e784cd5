"""Who takes the adaptive test: a simulated examinee, recorded answers, or a live model.

Each answers a batch of pool items with 1 (right), 0 (wrong) or None (cannot answer:
the item is skipped). ``cat assess`` names them ``sim:THETA``, ``replay:FILE#SUBJECT``
and a model name behind an OpenAI-compatible endpoint.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

import numpy as np

from cat import arguments as check
from cat.arguments import PathArg
from cat.engine.selection import PoolParams
from cat.engine.simulation import draw_scores
from cat.errors import CatError
from cat.pools.loading import calibrated_params, check_output_folders
from cat.prediction.shares import expected_share
from irt.mixed import MixedParams, MixedResponses
from irt.mixed_readers import read_mixed_responses
from irt.models import ItemParams
from irt.polytomous import PolytomousParams
from irt.polytomous_responses import PolytomousResponses
from irt.readers import read_responses, read_scored_responses
from irt.responses import ResponseMatrix
from itempool import ItemType, LoadedPool, PoolItem
from synth.backend import ChatBackend, ChatRequest
from synth.errors import SynthError
from synth.grading import GradeStatus
from synth.judge import JUDGE_PROMPT_VERSION, Judge, judge_messages, parse_judge_score
from synth.prompts import PROMPT_VERSION, Style, generation
from synth.scoring import score_reply
from synth.store import RunStore
from synth.text_metrics import Language

#: Stop when this many replies in a row cannot be parsed: the model is not answering.
UNPARSED_RUN_LIMIT = 10


class Examinee(Protocol):
    """Takes the adaptive test: ``start`` binds it to a pool (and the assessment's seed),
    then ``answer`` is called with batches of item ids until the test stops."""

    @property
    def label(self) -> str:
        """How RESULT.json's ``model`` names it (``sim:0.8``, ``replay:FILE#ID``, a model)."""
        ...

    def start(self, pool: LoadedPool, seed: int) -> None: ...

    def answer(self, item_ids: Sequence[str]) -> list[float | None]:
        """1/0, a score 0..m, or a score in [0, 1] for a continuous item; None: the
        examinee cannot answer it."""
        ...

    def truth(self) -> float | None:
        """Full-pool accuracy where it is known (simulated, replayed), else None."""
        ...

    def usage(self) -> dict[str, int] | None:
        """Calls and tokens of a live model, else None."""
        ...

    def checkpoints(self) -> RunStore | None:
        """Where an interrupted assessment is saved and resumed from, if anywhere."""
        ...

    def close(self) -> None: ...


class _OfflineExaminee:
    """What an examinee that makes no calls and keeps no store answers to the rest."""

    def usage(self) -> None:
        return None

    def checkpoints(self) -> None:
        return None

    def close(self) -> None:
        return None


@dataclass
class SimulatedExaminee(_OfflineExaminee):
    """Answers by the pool's own IRT model at a true ability ``theta``. With ``seed``
    None its answers are drawn from the assessment's seed."""

    theta: float
    seed: int | None = None
    _p: dict[str, float] = field(default_factory=dict, init=False, repr=False)
    _rng: np.random.Generator | None = field(default=None, init=False, repr=False)
    _params: PoolParams | None = field(default=None, init=False, repr=False)
    _position: dict[str, int] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        # Checked here, not at start: a NaN θ would answer every item wrong and report a
        # true accuracy of nan, and a string fails only when the label is formatted.
        self.theta = check.number(self.theta, "theta")
        if self.seed is not None:
            self.seed = check.seed(self.seed)

    @property
    def label(self) -> str:
        return f"sim:{self.theta:g}"

    def start(self, pool: LoadedPool, seed: int) -> None:
        params = calibrated_params(pool)
        self._params = params
        self._position = {item: j for j, item in enumerate(params.item_ids)}
        p = expected_share(params, [self.theta])[0]
        self._p = dict(zip(params.item_ids, p.tolist(), strict=True))
        self._rng = np.random.default_rng([seed, 1] if self.seed is None else self.seed)

    def answer(self, item_ids: Sequence[str]) -> list[float | None]:
        if self._rng is None or self._params is None:
            raise CatError("start the examinee on a pool before asking it")
        if not isinstance(self._params, ItemParams):
            # A score per item drawn from its category probabilities (its density, for
            # a continuous item) at θ.
            items = np.array([self._position[i] for i in item_ids], dtype=np.int_)
            theta = np.full(items.size, self.theta)
            drawn = draw_scores(self._params, theta, items, self._rng)
            n_discrete = _n_discrete(self._params)
            return [
                float(x) if j >= n_discrete else int(x) for j, x in zip(items, drawn, strict=True)
            ]
        return [int(self._rng.random() < self._p[i]) for i in item_ids]

    def truth(self) -> float:
        """Expected accuracy (on scored items, expected share of the top score) on the
        whole pool."""
        return float(np.mean(list(self._p.values())))


@dataclass
class ReplayExaminee(_OfflineExaminee):
    """The recorded answers of one subject of a response matrix (JSONL or wide CSV);
    items it never answered (or that are not in the file) are skipped."""

    path: Path
    subject: str
    _answers: dict[str, float] = field(default_factory=dict, init=False, repr=False)
    _shares: dict[str, float] = field(default_factory=dict, init=False, repr=False)

    # Written out (dataclass keeps it) so that ``path`` may be a str as well as a Path.
    def __init__(self, path: PathArg, subject: str) -> None:
        self.path = check.as_path(path, "path")
        if not isinstance(subject, str) or not subject:
            raise CatError(f"subject must be a subject id (a non-empty str), got {subject!r}")
        self.subject = subject
        self._answers = {}
        self._shares = {}

    @property
    def label(self) -> str:
        return f"replay:{self.path}#{self.subject}"

    def start(self, pool: LoadedPool, seed: int) -> None:
        params = calibrated_params(pool)
        matrix: ResponseMatrix | PolytomousResponses | MixedResponses
        if isinstance(params, MixedParams):
            matrix = read_mixed_responses(
                self.path, continuous=params.continuous_ids, n_categories=_categories(params)
            )
        elif isinstance(params, PolytomousParams):
            tops = dict(zip(params.item_ids, params.n_categories.tolist(), strict=True))
            matrix = read_scored_responses(self.path, n_categories=tops)
        else:
            matrix = read_responses(self.path)
        if self.subject not in matrix.subject_ids:
            known = ", ".join(matrix.subject_ids[:5])
            raise CatError(f"{self.path.name}: no subject {self.subject!r} (e.g. {known})")
        row = matrix.subject_ids.index(self.subject)
        column = {item: j for j, item in enumerate(matrix.item_ids)}
        values = matrix.as_float() if isinstance(matrix, MixedResponses) else matrix.values
        top = np.ones(params.n_items) if isinstance(params, ItemParams) else params.max_scores
        continuous = set(params.continuous_ids) if isinstance(params, MixedParams) else set()
        self._answers = {}
        self._shares = {}
        for k, item in enumerate(params.item_ids):
            j = column.get(item)
            if j is not None and matrix.observed[row, j]:
                value = float(values[row, j])
                self._answers[item] = value if item in continuous else int(value)
                self._shares[item] = value / float(top[k])
        if not self._answers:
            raise CatError(f"{self.path.name}: subject {self.subject!r} answered no pool item")

    def answer(self, item_ids: Sequence[str]) -> list[float | None]:
        return [self._answers.get(i) for i in item_ids]

    def truth(self) -> float:
        """Accuracy (on scored items, mean share of the top score) on every pool item the
        subject answered."""
        return float(np.mean(list(self._shares.values())))


@dataclass
class EndpointExaminee:
    """A model behind an OpenAI-compatible endpoint, asked through ``synth``: every
    reply is stored in ``store`` (a SQLite file, or an open ``RunStore``) the moment it
    arrives, so a rerun pays for nothing twice and an interrupted assessment resumes.

    ``backend`` replaces the OpenAI client (tests, the demo's local server); without it
    ``start`` checks the key and that ``base_url`` answers before any paid call.

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
    style: Style = Style.DIRECT
    temperature: float = 0.0
    backend: ChatBackend | None = None
    judge_model: str | None = None
    judge_backend: ChatBackend | None = None
    _judge: Judge | None = field(default=None, init=False, repr=False)
    _run_store: RunStore | None = field(default=None, init=False, repr=False)
    _owns_store: bool = field(default=False, init=False, repr=False)
    _items: dict[str, PoolItem] = field(default_factory=dict, init=False, repr=False)
    _language: str = field(default="en", init=False, repr=False)
    _seed: int = field(default=0, init=False, repr=False)
    _runner: asyncio.Runner = field(default_factory=asyncio.Runner, init=False, repr=False)
    _tokens: list[int] = field(default_factory=lambda: [0, 0, 0, 0], init=False, repr=False)
    _keys: list[str] = field(default_factory=list, init=False, repr=False)
    _unparsed_run: int = field(default=0, init=False, repr=False)
    _scored: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model.strip():
            raise CatError(f"give a model name, got {self.model!r}")
        if self.backend is None and self.base_url is None:
            raise CatError(
                f"model {self.model!r} needs --base-url, the endpoint that serves it "
                "(or use sim:THETA / replay:FILE#SUBJECT)"
            )

    @property
    def label(self) -> str:
        return self.model

    def start(self, pool: LoadedPool, seed: int) -> None:
        from synth.backend import OpenAIBackend, RetryPolicy, api_key, check_reachable

        self._items = {item.id: item for item in pool.items}
        self._language = pool.manifest.language
        self._seed = seed
        # A pool of scored items takes each reply's points 0..max_score, a 0/1 pool its
        # right/wrong (synth.scoring: the same grading as cat synth's).
        self._scored = isinstance(pool.params, PolytomousParams | MixedParams)
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

    def _start_judge(self, seed: int) -> None:
        from synth.backend import OpenAIBackend, RetryPolicy, api_key, check_reachable
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

    async def _ask_all(self, item_ids: Sequence[str]) -> list[tuple[float | None, bool]]:
        return list(await asyncio.gather(*(self._ask(self._items[i]) for i in item_ids)))

    async def _call(self, request: ChatRequest, backend: ChatBackend, version: str) -> str:
        """The reply's text, from the store or else asked and stored at once."""
        assert self._run_store is not None  # set by start
        stored = self._run_store.get_call(request.key)
        if stored is not None:
            self._tokens[3] += 1
            self._keys.append(request.key)
            return stored.reply.text
        reply = await backend.complete(request)
        self._run_store.put_call(request, reply, None, version)
        self._keys.append(request.key)
        self._tokens[0] += reply.prompt_tokens
        self._tokens[1] += reply.completion_tokens
        self._tokens[2] += 1
        return reply.text

    async def _ask(self, item: PoolItem) -> tuple[float | None, bool]:
        assert self.backend is not None  # set by start
        messages = generation(item, self._language, self.style)
        request = ChatRequest(self.model, messages, self.temperature, self._seed)
        text = await self._call(request, self.backend, PROMPT_VERSION)
        scored = score_reply(text, item, language=cast(Language, self._language))
        if item.continuous:  # the reference metric's value itself, as the pool was fitted
            return scored.credit, scored.status is GradeStatus.OK
        if self._judge is not None and item.type is ItemType.OPEN:
            return await self._judged(item, text), scored.status is GradeStatus.OK
        points = scored.points if self._scored else int(scored.correct)
        return points, scored.status is GradeStatus.OK

    async def _judged(self, item: PoolItem, reply: str) -> int | None:
        """The judge's points for ``reply`` (a second ask, with the next seed, when the
        first gives no usable score); None when neither does."""
        assert self._judge is not None and self.judge_backend is not None
        messages = judge_messages(item, self._language, reply)
        for attempt in range(2):
            request = ChatRequest(self._judge.model, messages, 0.0, self._seed + attempt)
            text = await self._call(request, self.judge_backend, JUDGE_PROMPT_VERSION)
            verdict = parse_judge_score(text, item.max_score)
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
        prompt, completion, calls, stored = self._tokens
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "calls": calls,
            "calls_from_store": stored,
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


def parse_model_spec(spec: str, **endpoint: Any) -> Examinee:
    """The examinee ``cat assess --model`` names: ``sim:THETA``, ``replay:FILE#SUBJECT``,
    or a model name at an endpoint (``endpoint`` holds ``EndpointExaminee``'s settings)."""
    if spec.startswith(("sim:", "replay:")):
        _refuse_judge(spec, endpoint)
    if spec.startswith("sim:"):
        try:
            theta = float(spec[4:])
        except ValueError as exc:
            raise CatError(f"sim:THETA needs a number, got {spec!r}") from exc
        if not math.isfinite(theta):  # float() reads "nan" and "inf" too
            raise CatError(f"sim:THETA needs a finite number, got {spec!r}")
        return SimulatedExaminee(theta)
    if spec.startswith("replay:"):
        path, sep, subject = spec[7:].rpartition("#")
        if not sep or not path or not subject:
            raise CatError(f"replay:FILE#SUBJECT needs a file and a subject, got {spec!r}")
        return ReplayExaminee(Path(path), subject)
    if not spec.strip():
        raise CatError("give a model")
    return EndpointExaminee(spec.strip(), **endpoint)


def _refuse_judge(spec: str, endpoint: dict[str, Any]) -> None:
    """A judge grades a live model's replies: refuse it for sim: and replay:."""
    if endpoint.get("judge_model") is not None:
        raise CatError(f"--judge-model grades a live model's replies, not {spec.split(':')[0]}:")


def _n_discrete(params: PoolParams) -> int:
    """Positions from here on are continuous items (none on a pool without them)."""
    return params.n_discrete if isinstance(params, MixedParams) else int(params.n_items)


def _categories(params: MixedParams) -> dict[str, int]:
    """Each discrete item's number of scores."""
    if params.discrete is None:
        return {}
    counts = params.discrete.n_categories.tolist()
    return dict(zip(params.discrete.item_ids, counts, strict=True))
