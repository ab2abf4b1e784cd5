"""One ``cat synth`` run as a library call: pool in, response matrix and report out.

    from synth.job import run_synthesis
    report = run_synthesis(
        "examples/mini_pool", "good,bad", base_url="http://127.0.0.1:8765/v1",
        store="run.db", out="responses.jsonl",
    )

Everything is checked before the first paid call (the pool, the agents, the options, the
API keys, that every endpoint answers, that the outputs can be written); then every
participant answers every item through the run store, so a rerun after a crash makes
only the missing calls, and the graded answers are written as the response matrix (and
the chosen options beside it, for ``cat pool fit --choices``).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from itempool import PoolFormatError, QuestionSet, read_questions
from synth.backend import DEFAULT_KEY_ENV, OpenAIBackend, RetryPolicy, api_key, check_reachable
from synth.errors import SynthError
from synth.export import choices_file, summarize_results, write_choices, write_responses
from synth.participants import KINDS, Agent, Participant, make_participants, parse_agents
from synth.pricing import Prices
from synth.prompts import PROMPT_VERSION, Style
from synth.runner import RunProgress, RunSettings, SynthRunner
from synth.store import RunStore

#: Called as the run advances (often: throttle any drawing).
OnProgress = Callable[[RunProgress], None]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ParticipantSummary(_Model):
    """One participant's graded answers in the store; ``accuracy`` is None without any."""

    name: str
    answered: int
    accuracy: float | None
    unparsed: int
    failed: int


class ReflectionFlips(_Model):
    """How reflection changed the pairs' first answers."""

    right_to_wrong: int
    wrong_to_right: int
    pairs_graded: int


class StoreTotals(_Model):
    """Everything the run store holds, this run and earlier ones."""

    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: float
    failed_calls: int

    @property
    def tokens(self) -> int:
        """Prompt and completion tokens together."""
        return self.prompt_tokens + self.completion_tokens


class SynthesisReport(_Model):
    """What one run did and wrote.

    ``n_answers`` is participants × items. Of those, ``stored_answers`` were already
    graded in the store; the rest took ``new_calls`` (paid now: ``tokens`` and ``cost``)
    and stage calls the store answered (``stored_calls``, see ``RunProgress``), and
    ``failed_calls`` spent their retry budget (the answer stays missing; a rerun tries
    again). ``store_totals`` covers this run and every earlier one."""

    pool: str
    language: str
    n_items: int
    n_answers: int
    participants: list[ParticipantSummary]
    reflection: ReflectionFlips
    new_calls: int
    stored_calls: int
    stored_answers: int
    failed_calls: int
    tokens: int
    cost: float
    seconds: float
    store_totals: StoreTotals
    responses: Path
    choices: Path
    store: Path
    n_written: int

    @property
    def all_from_store(self) -> bool:
        """True when nothing was asked: every answer came from the store."""
        return self.new_calls == 0 and self.failed_calls == 0


def run_synthesis(
    pool_dir: str | Path,
    agents: str,
    *,
    store: str | Path,
    out: str | Path,
    base_url: str | None = None,
    participants: Sequence[str] = KINDS,
    styles: Sequence[Style] = (Style.DIRECT,),
    limit: int | None = None,
    temperature: float = 0.0,
    seed: int = 0,
    concurrency: int = 8,
    order_threshold: float = 0.8,
    prices: str | Path | None = None,
    api_key_env: str = DEFAULT_KEY_ENV,
    timeout: float = 60.0,
    max_attempts: int = 6,
    progress: OnProgress | None = None,
) -> SynthesisReport:
    """Ask every participant every item of the pool in ``pool_dir`` (the first ``limit``
    items if given), grade the answers, and write the response matrix to ``out`` and the
    chosen options beside it (``choices_file(out)``).

    ``agents`` is "m1,m2@URL,...": a model takes its own URL after "@", else
    ``base_url``. ``participants`` picks singles and/or ordered pairs (generation →
    debate → reflection), for each prompt style in ``styles``. Every reply goes into the
    SQLite run ``store`` the moment it arrives. Request ``k``'s endpoint gets seed
    ``seed + k``; ``temperature`` and ``seed`` are sent with every request, and the
    settings are recorded in the store. Prices per million tokens come from the JSON
    file ``prices``; API keys from the environment variable ``api_key_env`` (a local
    endpoint may go without). Raises ``SynthError`` before any call on bad input."""
    store_path, out_path = Path(store), Path(out)
    choices_path = choices_file(out_path)
    _check_settings(limit, order_threshold, timeout)
    _check_writable(out_path, choices_path, store_path)
    questions = _questions(Path(pool_dir), limit)
    agent_list = parse_agents(agents, base_url)
    who = make_participants(agent_list, participants, styles)
    price_table = Prices.read(Path(prices)) if prices is not None else None
    retry = RetryPolicy(max_attempts=max_attempts)
    settings = RunSettings(
        temperature=temperature,
        seed=seed,
        concurrency=concurrency,
        order_threshold=order_threshold,
    )
    urls = sorted({a.base_url for a in agent_list})
    for url in urls:
        api_key(url, api_key_env)  # a missing key fails here, before any call
        check_reachable(url)

    def backends() -> dict[str, OpenAIBackend]:
        return {
            url: OpenAIBackend(url, api_key_env, timeout, retry, seed=seed + k)
            for k, url in enumerate(urls)
        }

    t0 = time.perf_counter()
    with RunStore(store_path) as run_store:
        run_store.set_meta("run", _run_meta(questions, agent_list, who, settings))
        counts = _run(questions, who, run_store, backends, settings, price_table, progress)
        results = run_store.results()
        totals = run_store.totals()
    names = [p.name for p in who]
    item_ids = [item.id for item in questions.items]
    n_written = write_responses(results, names, item_ids, out_path)
    write_choices(results, names, item_ids, choices_path)
    summary = summarize_results(results, names)
    return SynthesisReport(
        pool=questions.name,
        language=questions.language,
        n_items=len(item_ids),
        n_answers=len(names) * len(item_ids),
        participants=[
            ParticipantSummary(
                name=name,
                answered=row["answered"],
                accuracy=row["accuracy"],
                unparsed=row["unparsed"],
                failed=row["failed"],
            )
            for name, row in summary["participants"].items()
        ],
        reflection=ReflectionFlips(**summary["reflection"]),
        new_calls=counts.new_calls,
        stored_calls=counts.stored_calls,
        stored_answers=counts.stored_answers,
        failed_calls=counts.failed_calls,
        tokens=counts.tokens,
        cost=counts.cost,
        seconds=time.perf_counter() - t0,
        store_totals=StoreTotals(**totals),
        responses=out_path,
        choices=choices_path,
        store=store_path,
        n_written=n_written,
    )


def _check_settings(limit: int | None, order_threshold: float, timeout: float) -> None:
    # The rest (concurrency, temperature, attempts) is checked by the classes that hold it.
    if limit is not None and limit < 1:
        raise SynthError(f"limit must be at least 1, got {limit}")
    if not -1.0 <= order_threshold <= 1.0:
        raise SynthError(f"the order threshold is a Kendall tau in [-1, 1], got {order_threshold}")
    if timeout <= 0:
        raise SynthError(f"timeout must be positive, got {timeout}")


def _check_writable(*paths: Path) -> None:
    # Before any call: a missing folder found after the run would waste all of it.
    for path in paths:
        if not path.parent.is_dir():
            raise SynthError(f"cannot write {path}: folder {path.parent} does not exist")


def _questions(pool_dir: Path, limit: int | None) -> QuestionSet:
    try:
        questions = read_questions(pool_dir)
    except PoolFormatError as exc:
        raise SynthError(str(exc)) from exc
    if limit is None:
        return questions
    return QuestionSet(
        name=questions.name, language=questions.language, items=questions.items[:limit]
    )


def _run_meta(
    questions: QuestionSet, agents: list[Agent], who: list[Participant], settings: RunSettings
) -> dict[str, Any]:
    return {
        "pool": questions.name,
        "language": questions.language,
        "agents": [a.model for a in agents],
        "participants": [p.name for p in who],
        "prompt_version": PROMPT_VERSION,
        "temperature": settings.temperature,
        "seed": settings.seed,
        "order_threshold": settings.order_threshold,
        "package_version": _package_version(),
        "updated": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


def _package_version() -> str:
    # Not cat's helper: synth sits below cat and must not import it.
    try:
        return version("cat-llm")
    except PackageNotFoundError:  # running from a source tree without installing
        return "0+unknown"


def _run(
    questions: QuestionSet,
    who: list[Participant],
    store: RunStore,
    make_backends: Callable[[], dict[str, OpenAIBackend]],
    settings: RunSettings,
    prices: Prices | None,
    progress: OnProgress | None,
) -> RunProgress:
    async def main() -> RunProgress:
        # The clients are made inside the event loop that uses them, and closed there.
        backends = make_backends()
        try:
            runner = SynthRunner(questions, who, store, backends, settings, prices, progress)
            return await runner.run()
        finally:
            for backend in backends.values():
                await backend.close()

    return asyncio.run(main())
