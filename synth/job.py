"""One ``cat synth`` run as a library call: pool in, response matrix and report out.

    from synth.job import run_synthesis
    report = run_synthesis(
        "examples/mini_pool", "good,bad", base_url="http://127.0.0.1:8765/v1",
        store="run.db", out="responses.jsonl",
    )

Everything is checked before the first paid call (the pool, the agents, the judge, the
options, the API keys, that every endpoint answers, that the outputs can be written);
then every participant answers every item through the run store, so a rerun after a
crash makes only the missing calls; a judge, if given, scores the open answers; and the
graded answers are written as the response matrix (and the chosen options beside it,
for ``cat pool fit --choices``).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from itempool import ItemType, PoolFormatError, QuestionSet, read_questions
from itempool.protocol_bundle import bundle_beside
from synth.backend import (
    DEFAULT_KEY_ENV,
    ChatBackend,
    OpenAIBackend,
    RetryPolicy,
    api_key,
    check_reachable,
)
from synth.errors import SynthError
from synth.export import choices_file, write_text_atomic
from synth.generation import GenerationSettings, changed_settings, describe
from synth.judge import JUDGE_PROMPT_VERSION, Judge
from synth.names import GENERATION_STAGE
from synth.participants import KINDS, Agent, Participant, make_participants, parse_agents
from synth.pricing import Prices
from synth.prompter import Prompter
from synth.prompts import PROMPT_VERSION, Style
from synth.protocols import protocol_of_run
from synth.report import (
    BatchCalls,
    JudgeAgreement,
    JudgeSummary,
    ParticipantSummary,
    ReflectionFlips,
    StoreTotals,
    SynthesisReport,
)
from synth.runner import RunProgress, RunSettings, SynthRunner
from synth.scoring import check_open_item
from synth.store import RunStore
from synth.summary import OPEN_GRADINGS, export_run

__all__ = [
    "OPEN_GRADINGS",
    "JudgeAgreement",
    "JudgeSummary",
    "OnProgress",
    "ParticipantSummary",
    "ReflectionFlips",
    "StoreTotals",
    "SynthesisReport",
    "run_synthesis",
]

#: Called as the run advances (often: throttle any drawing).
OnProgress = Callable[[RunProgress], None]


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
    judge_model: str | None = None,
    open_grading: str = "metric",
    binary: bool = False,
    report: str | Path | None = None,
    prices: str | Path | None = None,
    generation: GenerationSettings | None = None,
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
    settings are recorded in the store. ``generation`` (``synth.generation``) sets the
    rest of how answers are asked for: max tokens, a system prompt, a prompt template
    and few-shot examples for the first answer, stop sequences and extra body fields;
    its ``temperature`` replaces ``temperature``. At most ``concurrency`` calls are in
    flight at once. Prices per million tokens come from the JSON
    file ``prices``; API keys from the environment variable ``api_key_env`` (a local
    endpoint may go without).

    Scores: every answer gets points 0..max_score (``synth.scoring``). ``judge_model``
    ("MODEL" on ``base_url``, or "MODEL@URL") has an LLM judge score the open answers
    too; ``open_grading`` ("metric" or "judge") picks which of the two becomes an open
    item's points (the other is kept in the store and compared in the report). The
    matrix holds the points when any item scores above 1, else 0/1; ``binary`` writes
    the 0/1 reading anyway. ``report`` (a path) also gets the report as JSON.

    Raises ``SynthError`` before any call on bad input."""
    plan = prepare_run(
        pool_dir,
        agents,
        store=store,
        out=out,
        base_url=base_url,
        participants=participants,
        styles=styles,
        limit=limit,
        temperature=temperature,
        seed=seed,
        concurrency=concurrency,
        order_threshold=order_threshold,
        judge_model=judge_model,
        open_grading=open_grading,
        binary=binary,
        report=report,
        prices=prices,
        generation=generation,
        timeout=timeout,
    )
    retry = RetryPolicy(max_attempts=max_attempts)
    for url in plan.urls:
        api_key(url, api_key_env)  # a missing key fails here, before any call
        check_reachable(url)

    def backends() -> dict[str, ChatBackend]:
        return {
            url: OpenAIBackend(url, api_key_env, timeout, retry, seed=seed + k)
            for k, url in enumerate(plan.urls)
        }

    t0 = time.perf_counter()
    with RunStore(plan.store) as run_store:
        plan.record_in(run_store)
        counts = run_with(plan, run_store, backends, progress)
        return finish_run(plan, run_store, counts, t0)


@dataclass(frozen=True)
class RunPlan:
    """A run checked and ready: what is asked, of whom, how, and where it goes."""

    full: QuestionSet
    questions: QuestionSet
    agents: list[Agent]
    who: list[Participant]
    judge: Judge | None
    notes: list[str]
    settings: RunSettings
    prompter: Prompter
    prices: Prices | None
    urls: list[str]
    open_grading: str
    binary: bool
    store: Path
    out: Path
    choices: Path
    report: Path | None

    def meta(self) -> dict[str, Any]:
        """The run's settings as the store records them."""
        return _run_meta(
            self.questions,
            self.agents,
            self.who,
            self.settings,
            self.judge,
            self.open_grading,
            self.binary,
        )

    def record_in(self, store: RunStore) -> None:
        """Record the run's settings in ``store``, refusing a store whose answers were
        asked with other generation settings: its graded answers would be reused as
        they are, where a changed setting must ask again."""
        saved = store.get_meta("run")
        if isinstance(saved, dict):
            before = saved.get("generation")
            if before is None:  # recorded before generation settings: only a temperature
                before = {"temperature": saved.get("temperature", 0.0)}
            changed = changed_settings(before, self.settings.generation.record())
            if changed:
                raise SynthError(
                    f"{store.path} holds answers asked with other generation settings "
                    f"({'; '.join(changed)}), which this run would reuse as they are: give "
                    "it another --store"
                )
        store.set_meta("run", self.meta())


def prepare_run(
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
    judge_model: str | None = None,
    open_grading: str = "metric",
    binary: bool = False,
    report: str | Path | None = None,
    prices: str | Path | None = None,
    generation: GenerationSettings | None = None,
    timeout: float = 60.0,
    offline: bool = False,
) -> RunPlan:
    """Every check ``run_synthesis`` makes of its input before a call (the arguments
    are its own), with no call made: endpoints and keys are checked by the caller.

    ``offline`` plans a run through batch files (``synth.batch_round``), which calls no
    endpoint: an agent or judge may then go without a URL."""
    store_path, out_path = Path(store), Path(out)
    report_path = None if report is None else Path(report)
    choices_path = choices_file(out_path)
    _check_settings(limit, order_threshold, timeout, open_grading, judge_model)
    _check_writable(out_path, choices_path, store_path, *([report_path] if report_path else []))
    full, questions = _questions(Path(pool_dir), limit)
    agent_list = parse_agents(agents, base_url, need_url=not offline)
    who = make_participants(agent_list, participants, styles)
    judge, notes = _judge(judge_model, base_url, questions, need_url=not offline)
    settings = RunSettings(
        seed=seed,
        concurrency=concurrency,
        order_threshold=order_threshold,
        generation=_generation(generation, temperature),
    )
    # Examples come from the whole pool; every prompt asked is rendered now, so that a
    # template's error stops the run before its first call.
    prompter = Prompter.for_pool(settings.generation, full.items, full.language, seed)
    prompter.check(questions.items, {p.style for p in who})
    urls = sorted({a.base_url for a in agent_list} | ({judge.base_url} if judge else set()))
    return RunPlan(
        full=full,
        questions=questions,
        agents=agent_list,
        who=who,
        judge=judge,
        notes=notes,
        settings=settings,
        prompter=prompter,
        prices=Prices.read(Path(prices)) if prices is not None else None,
        urls=urls,
        open_grading=open_grading,
        binary=binary,
        store=store_path,
        out=out_path,
        choices=choices_path,
        report=report_path,
    )


def finish_run(
    plan: RunPlan, run_store: RunStore, counts: RunProgress, t0: float
) -> SynthesisReport:
    """Write the response matrix and the chosen options of a run whose every call is
    answered (or failed), and its report."""
    questions = plan.questions
    exported = export_run(
        run_store,
        plan.full,
        questions,
        [p.name for p in plan.who],
        plan.out,
        judge=plan.judge,
        judge_counts=counts.judge,
        open_grading=plan.open_grading if plan.judge is not None else "metric",
        binary=plan.binary,
    )
    write_protocol(plan, run_store)
    totals = run_store.totals()
    result = SynthesisReport(
        batch=batch_calls(run_store, plan.prices),
        pool=questions.name,
        language=questions.language,
        n_items=len(questions.items),
        n_open_items=sum(item.type is ItemType.OPEN for item in questions.items),
        max_score=max((item.max_score for item in questions.items), default=1),
        n_answers=len(plan.who) * len(questions.items),
        participants=exported.participants,
        reflection=exported.reflection,
        new_calls=counts.new_calls,
        stored_calls=counts.stored_calls,
        stored_answers=counts.stored_answers,
        regraded_answers=counts.regraded,
        failed_calls=counts.failed_calls,
        tokens=counts.tokens,
        cost=counts.cost,
        seconds=time.perf_counter() - t0,
        store_totals=StoreTotals(**totals),
        scores=exported.scores,
        open_grading=exported.open_grading,
        judge=exported.judge,
        notes=plan.notes + exported.notes,
        responses=plan.out,
        choices=plan.choices,
        store=plan.store,
        report=plan.report,
        n_written=exported.n_written,
    )
    if plan.report is not None:
        write_text_atomic(plan.report, result.model_dump_json(indent=2) + "\n")
    return result


def write_protocol(plan: RunPlan, run_store: RunStore | None = None) -> Path:
    """Write beside the responses how they were asked and graded
    (``itempool.protocol_bundle``): ``cat calibrate --pool`` gives it to the pool. With
    ``run_store``, the mean length of the first answers' replies goes with it (the
    protocol's ``reply_tokens``, what ``--dry-run`` expects a reply to cost)."""
    styles = list(dict.fromkeys(p.style for p in plan.who))
    note = None
    if any(p.second is not None for p in plan.who):
        note = (
            "pairs answered by generation, debate and reflection; the protocol asks "
            "each model alone"
        )
    path = bundle_beside(plan.out)
    bundle = protocol_of_run(plan.settings.generation, styles, note)
    if run_store is not None:
        models = [p.first.model for p in plan.who]
        mean = run_store.mean_completion_tokens(models, GENERATION_STAGE)
        if mean is not None:
            protocol = bundle.protocol.model_copy(update={"reply_tokens": round(mean, 1)})
            bundle = bundle.model_copy(update={"protocol": protocol})
    bundle.write(path)
    return path


def batch_calls(store: RunStore, prices: Prices | None) -> BatchCalls | None:
    """The stored calls that batches answered, with their cost at batch prices and the
    same calls' cost online; None when batches answered none."""
    rows = store.batch_calls()
    if not rows:
        return None
    online = 0.0
    for model, prompt_tokens, completion_tokens, _ in rows:
        online += (
            prices.token_cost(model, prompt_tokens, completion_tokens) if prices else 0.0
        ) or 0.0
    paid = sum(cost or 0.0 for *_, cost in rows)
    return BatchCalls(calls=len(rows), cost=paid, online_cost=online)


def _check_settings(
    limit: int | None,
    order_threshold: float,
    timeout: float,
    open_grading: str,
    judge_model: str | None,
) -> None:
    # The rest (concurrency, temperature, attempts) is checked by the classes that hold it.
    if limit is not None and limit < 1:
        raise SynthError(f"limit must be at least 1, got {limit}")
    if not -1.0 <= order_threshold <= 1.0:
        raise SynthError(f"the order threshold is a Kendall tau in [-1, 1], got {order_threshold}")
    if timeout <= 0:
        raise SynthError(f"timeout must be positive, got {timeout}")
    if open_grading not in OPEN_GRADINGS:
        raise SynthError(f"open grading is one of {', '.join(OPEN_GRADINGS)}, got {open_grading!r}")
    if open_grading == "judge" and not judge_model:
        raise SynthError("open grading by the judge needs a judge model (--judge-model)")


def _generation(generation: GenerationSettings | None, temperature: float) -> GenerationSettings:
    """The run's generation settings: ``generation``, or the default ones at
    ``temperature`` (which ``generation`` must then not contradict)."""
    if generation is None:
        try:
            return GenerationSettings(temperature=temperature)
        except ValidationError as exc:
            raise SynthError(describe(exc)) from exc
    if not isinstance(generation, GenerationSettings):
        raise SynthError(f"generation must be GenerationSettings, got {type(generation).__name__}")
    if temperature not in (0.0, generation.temperature):
        raise SynthError(
            f"temperature {temperature} and generation's {generation.temperature} differ: "
            "give it in generation only"
        )
    return generation


def _check_writable(*paths: Path) -> None:
    # Before any call: a missing folder found after the run would waste all of it.
    for path in paths:
        if not path.parent.is_dir():
            raise SynthError(f"cannot write {path}: folder {path.parent} does not exist")


def _questions(pool_dir: Path, limit: int | None) -> tuple[QuestionSet, QuestionSet]:
    """The whole pool and the items to ask (its first ``limit``)."""
    try:
        questions = read_questions(pool_dir)
    except PoolFormatError as exc:
        raise SynthError(str(exc)) from exc
    asked = questions
    if limit is not None:
        asked = QuestionSet(
            name=questions.name, language=questions.language, items=questions.items[:limit]
        )
    for item in asked.items:
        check_open_item(item, asked.language)
    return questions, asked


def _judge(
    spec: str | None, base_url: str | None, questions: QuestionSet, *, need_url: bool = True
) -> tuple[Judge | None, list[str]]:
    """The judge named by ``spec`` ("MODEL" or "MODEL@URL"), or None with a note when
    no item asked is open (a judge is then harmless, not an error)."""
    if not spec:
        return None, []
    if "," in spec:
        raise SynthError(f"give one judge model, got {spec!r}")
    (agent,) = parse_agents(spec, base_url, need_url=need_url)
    if not any(item.type is ItemType.OPEN for item in questions.items):
        n = len(questions.items)
        return None, [
            f"judge {agent.model} asked nothing: none of the {n} items asked is open "
            "(points come from the reference grading)"
        ]
    return Judge(agent.model, agent.base_url), []


def _run_meta(
    questions: QuestionSet,
    agents: list[Agent],
    who: list[Participant],
    settings: RunSettings,
    judge: Judge | None,
    open_grading: str,
    binary: bool,
) -> dict[str, Any]:
    return {
        "pool": questions.name,
        "language": questions.language,
        "agents": [a.model for a in agents],
        "participants": [p.name for p in who],
        "prompt_version": PROMPT_VERSION,
        "temperature": settings.temperature,
        "generation": settings.generation.record().model_dump(mode="json"),
        "concurrency": settings.concurrency,
        "seed": settings.seed,
        "order_threshold": settings.order_threshold,
        "judge_model": None if judge is None else judge.model,
        "judge_prompt_version": None if judge is None else JUDGE_PROMPT_VERSION,
        "open_grading": open_grading if judge is not None else "metric",
        "binary": binary,
        "package_version": _package_version(),
        "updated": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


def _package_version() -> str:
    # Not cat's helper: synth sits below cat and must not import it.
    try:
        return version("cat-llm")
    except PackageNotFoundError:  # running from a source tree without installing
        return "0+unknown"


def run_with(
    plan: RunPlan,
    store: RunStore,
    make_backends: Callable[[], Mapping[str, ChatBackend]],
    progress: OnProgress | None,
    on_runner: Callable[[SynthRunner], None] | None = None,
    judge_attempts: int | None = None,
) -> RunProgress:
    """Run the plan's participants through ``store`` with the backends made (inside the
    event loop that uses them, and closed there); ``on_runner`` sees the runner after
    its run; ``judge_attempts`` caps the judge's refused scores (batch runs)."""

    async def main() -> RunProgress:
        backends = make_backends()
        try:
            runner = SynthRunner(
                plan.questions,
                plan.who,
                store,
                backends,
                plan.settings,
                plan.prices,
                progress,
                judge=plan.judge,
                judge_attempts=judge_attempts,
                prompter=plan.prompter,
            )
            counts = await runner.run()
            if on_runner is not None:
                on_runner(runner)
            return counts
        finally:
            for backend in backends.values():
                close = getattr(backend, "close", None)
                if close is not None:
                    await close()

    return asyncio.run(main())
