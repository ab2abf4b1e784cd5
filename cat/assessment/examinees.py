"""Who takes the adaptive test: a simulated examinee, recorded answers, or a live model.

Each answers a batch of pool items with 1 (right), 0 (wrong) or None (cannot answer:
the item is skipped). ``cat assess`` names them ``sim:THETA``, ``replay:FILE#SUBJECT``
and a model name behind an OpenAI-compatible endpoint.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from cat.errors import CatError
from irt.models import ItemParams, probability
from irt.readers import read_responses
from synth.backend import ChatBackend, ChatRequest
from synth.errors import SynthError
from synth.grading import GradeStatus, grade
from synth.items import PoolItem
from synth.prompts import PROMPT_VERSION, Style, generation
from synth.store import RunStore

#: Stop when this many replies in a row cannot be parsed: the model is not answering.
UNPARSED_RUN_LIMIT = 10


class Examinee(Protocol):
    """Answers pool items; ``truth`` is its full-pool accuracy where it is known."""

    def answer(self, item_ids: Sequence[str]) -> list[int | None]: ...

    def truth(self) -> float | None: ...

    def usage(self) -> dict[str, int] | None: ...


@dataclass
class SimulatedExaminee:
    """Answers by the pool's own 3PL model at a true ability ``theta``."""

    theta: float
    params: ItemParams
    rng: np.random.Generator

    def __post_init__(self) -> None:
        p = probability([self.theta], self.params)[0]
        self._p = dict(zip(self.params.item_ids, p.tolist(), strict=True))

    def answer(self, item_ids: Sequence[str]) -> list[int | None]:
        return [int(self.rng.random() < self._p[i]) for i in item_ids]

    def truth(self) -> float:
        """Expected accuracy on the whole pool."""
        return float(np.mean(list(self._p.values())))

    def usage(self) -> None:
        return None


@dataclass
class ReplayExaminee:
    """The recorded answers of one subject of a response matrix; items it never
    answered (or that are not in the file) are skipped."""

    path: Path
    subject: str
    pool_items: Sequence[str]

    def __post_init__(self) -> None:
        matrix = read_responses(self.path)
        if self.subject not in matrix.subject_ids:
            known = ", ".join(matrix.subject_ids[:5])
            raise CatError(f"{self.path.name}: no subject {self.subject!r} (e.g. {known})")
        row = matrix.subject_ids.index(self.subject)
        column = {item: j for j, item in enumerate(matrix.item_ids)}
        self._answers: dict[str, int] = {}
        for item in self.pool_items:
            j = column.get(item)
            if j is not None and matrix.observed[row, j]:
                self._answers[item] = int(matrix.values[row, j])
        if not self._answers:
            raise CatError(f"{self.path.name}: subject {self.subject!r} answered no pool item")

    def answer(self, item_ids: Sequence[str]) -> list[int | None]:
        return [self._answers.get(i) for i in item_ids]

    def truth(self) -> float:
        """Accuracy on every pool item the subject answered."""
        return float(np.mean(list(self._answers.values())))

    def usage(self) -> None:
        return None


@dataclass
class EndpointExaminee:
    """A model behind an OpenAI-compatible endpoint, asked through ``synth``: every
    reply is stored the moment it arrives, so a rerun pays for nothing twice."""

    model: str
    backend: ChatBackend
    store: RunStore
    items: dict[str, PoolItem]
    language: str
    style: Style = Style.DIRECT
    temperature: float = 0.0
    seed: int = 0
    _runner: asyncio.Runner = field(default_factory=asyncio.Runner, init=False, repr=False)
    _tokens: list[int] = field(default_factory=lambda: [0, 0, 0, 0], init=False, repr=False)
    _unparsed_run: int = field(default=0, init=False, repr=False)

    def answer(self, item_ids: Sequence[str]) -> list[int | None]:
        try:
            verdicts = self._runner.run(self._ask_all(item_ids))
        except SynthError as exc:
            raise CatError(f"{self.model}: {exc}") from exc
        out: list[int | None] = []
        for right, parsed in verdicts:
            self._unparsed_run = 0 if parsed else self._unparsed_run + 1
            if self._unparsed_run >= UNPARSED_RUN_LIMIT:
                raise CatError(
                    f"{self.model}: {UNPARSED_RUN_LIMIT} replies in a row had no readable answer "
                    "(see the replies in the store); stopping"
                )
            out.append(right)
        return out

    async def _ask_all(self, item_ids: Sequence[str]) -> list[tuple[int, bool]]:
        return list(await asyncio.gather(*(self._ask(self.items[i]) for i in item_ids)))

    async def _ask(self, item: PoolItem) -> tuple[int, bool]:
        messages = generation(item, self.language, self.style)
        request = ChatRequest(self.model, messages, self.temperature, self.seed)
        stored = self.store.get_call(request.key)
        if stored is None:
            reply = await self.backend.complete(request)
            self.store.put_call(request, reply, None, PROMPT_VERSION)
            self._tokens[0] += reply.prompt_tokens
            self._tokens[1] += reply.completion_tokens
            self._tokens[2] += 1
        else:
            reply = stored.reply
            self._tokens[3] += 1
        verdict = grade(reply.text, item)
        return int(verdict.correct), verdict.status is GradeStatus.OK

    def truth(self) -> None:
        return None

    def usage(self) -> dict[str, int]:
        prompt, completion, calls, stored = self._tokens
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "calls": calls,
            "calls_from_store": stored,
        }

    def close(self) -> None:
        close = getattr(self.backend, "close", None)
        if close is not None:
            self._runner.run(close())
        self._runner.close()


def parse_model_spec(spec: str) -> tuple[str, Any]:
    """("sim", θ), ("replay", (path, subject)) or ("endpoint", model name)."""
    if spec.startswith("sim:"):
        try:
            return "sim", float(spec[4:])
        except ValueError as exc:
            raise CatError(f"sim:THETA needs a number, got {spec!r}") from exc
    if spec.startswith("replay:"):
        path, sep, subject = spec[7:].rpartition("#")
        if not sep or not path or not subject:
            raise CatError(f"replay:FILE#SUBJECT needs a file and a subject, got {spec!r}")
        return "replay", (Path(path), subject)
    if not spec.strip():
        raise CatError("give a model")
    return "endpoint", spec.strip()
