"""The offline demo: synthesis, calibration and assessment end to end on this machine.

A local OpenAI-compatible server plays simulated models whose right-answer probability
follows a 3PL model with *true* item parameters (``true_item_params``, derived from each
demo item's difficulty level). Five of them answer part of the demo pool by generation →
debate → reflection through ``synth`` (5 singles + 20 ordered pairs), the answers are
calibrated, and three further models are assessed through the same HTTP endpoint; their
predicted accuracy and rank are set beside the truth.

A pool with open items (``item_pools/demo-open``, the default of ``cat demo``) is
answered in free text where an item asks for it: right (a reference answer), partly
right (a reference cut short) or wrong, by the same probability
(``synth.local_server.open_answers``). The replies are graded to scores 0..max_score,
the scores calibrate a graded response model (3PL for the single-choice items), and the
truth is each new model's expected share of the items' top scores.
"""

from __future__ import annotations

import asyncio
import shutil
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict

from cat.assessment.assess import assess
from cat.assessment.examinees import EndpointExaminee
from cat.assessment.result import AssessmentResult
from cat.assessment.session import AssessmentSession
from cat.pools.calibration import record_calibration, reference_rows
from cat.pools.calibration_job import calibrate
from cat.pools.graded_report import GradedCalibrationReport
from cat.pools.loading import load_pool, read_pool_questions
from cat.results import ResultModel
from irt.em import EMCalibrator
from irt.errors import ConvergenceWarning
from irt.scoring import AbilityMethod, score_abilities
from itempool import LoadedPool, PoolItem, QuestionSet
from itempool.formats.responses import read_responses
from synth.backend import OpenAIBackend, RetryPolicy
from synth.export import graded_answers, write_responses
from synth.local_server.open_answers import expected_share
from synth.local_server.process import ServerProcess
from synth.participants import make_participants, parse_agents
from synth.runner import RunProgress, RunSettings, SynthRunner
from synth.store import RunStore

#: Called with what is being done and the fraction of it done.
Progress = Callable[[str, float], None]

#: The five calibration models and the three assessed ones, by true ability θ.
REFERENCE_MODELS = {
    "sim-alpha": 1.4,
    "sim-beta": 0.7,
    "sim-gamma": 0.0,
    "sim-delta": -0.7,
    "sim-epsilon": -1.4,
}
ASSESSED_MODELS = {"new-strong": 1.0, "new-middle": 0.2, "new-weak": -1.0}

#: Where each difficulty level puts an item's b on the θ scale.
_LEVEL_B = {1: -1.2, 2: 0.0, 3: 1.2}


def true_item_params(
    items: Sequence[PoolItem], seed: int = 0
) -> dict[str, tuple[float, float, float]]:
    """(a, b, c) per item: b from the item's difficulty level plus noise, a ~ LogNormal
    (0, 0.3), c = a little below chance for its number of options."""
    rng = np.random.default_rng(seed)
    out: dict[str, tuple[float, float, float]] = {}
    for item in items:
        level = int(item.meta.get("difficulty", 2))
        b = _LEVEL_B.get(level, 0.0) + rng.normal(0.0, 0.6)
        a = float(np.exp(rng.normal(0.0, 0.3)))
        c = 0.8 / max(len(item.options), 2) if item.type.value == "single" else 0.02
        out[item.id] = (a, float(b), c)
    return out


def subset(pool: QuestionSet, n_items: int, seed: int) -> QuestionSet:
    """``n_items`` of the pool, spread over its scenarios in proportion."""
    rng = np.random.default_rng(seed)
    by_scenario: dict[str, list[PoolItem]] = {}
    for item in pool.items:
        by_scenario.setdefault(item.scenario, []).append(item)
    chosen: list[PoolItem] = []
    for name in sorted(by_scenario):
        group = by_scenario[name]
        k = max(1, round(n_items * len(group) / len(pool.items)))
        picks = rng.choice(len(group), size=min(k, len(group)), replace=False)
        chosen.extend(group[i] for i in sorted(picks))
    return QuestionSet(
        name=f"{pool.name}-demo-{len(chosen)}", language=pool.language, items=tuple(chosen)
    )


class AssessedModel(BaseModel):
    """One assessed model beside its truth."""

    model_config = ConfigDict(extra="forbid")

    model: str
    true_theta: float
    true_accuracy: float
    true_rank: int
    result: AssessmentResult


class DemoResult(ResultModel):
    """``demo.json``: the settings, the run time and every assessed model."""

    seed: int
    items: int
    items_requested: int
    length: int
    seconds: float
    pool: str
    assessed: list[AssessedModel]


def run_demo(
    pool_dir: Path,
    work: Path,
    n_items: int = 240,
    length: int = 60,
    seed: int = 0,
    say: Callable[[str], None] = print,
    progress: Progress | None = None,
) -> DemoResult:
    """Everything the ``cat demo`` command does; files go into ``work`` (the calibrated
    pool into ``work/pool``). ``say`` gets a line as each stage starts, ``progress(what,
    fraction done)`` follows the synthesis calls and the adaptive items."""
    started = time.perf_counter()
    # cat's reader: a bad --pool is a CatError, one line under cat demo.
    pool = subset(read_pool_questions(pool_dir), n_items, seed)
    truth = true_item_params(pool.items, seed)
    models = {**REFERENCE_MODELS, **ASSESSED_MODELS}
    work.mkdir(parents=True, exist_ok=True)
    scored = any(item.max_score > 1 for item in pool.items)
    # In a process of its own: the server and the client each get a processor.
    with ServerProcess(pool.items, models, irt=truth, seed=seed) as server:
        say(f"local OpenAI-compatible server at {server.base_url}, {len(models)} simulated models")
        responses = _synthesise(pool, server, work, seed, say, progress, scored)
        target = _pool_folder(pool, work, pool_dir)
        if scored:
            calibrated = _calibrate_scores(responses, target, seed, say)
        else:
            calibrated = _calibrate(responses, target, seed, say)
        rows = _assess(calibrated, server, work, length, seed, say, progress)
    return DemoResult(
        seed=seed,
        items=len(pool.items),
        items_requested=n_items,
        length=length,
        seconds=time.perf_counter() - started,
        pool=str(work / "pool"),
        assessed=rows,
    )


def _synthesise(
    pool: QuestionSet,
    server: ServerProcess,
    work: Path,
    seed: int,
    say: Callable[[str], None],
    progress: Progress | None,
    scored: bool,
) -> Path:
    agents = parse_agents(",".join(REFERENCE_MODELS), server.base_url)
    who = make_participants(agents)
    backend = OpenAIBackend(server.base_url, timeout=30.0, retry=RetryPolicy(base_delay=0.05))
    store_path = work / "synth.db"
    out = work / "responses.jsonl"
    calls = sum(p.n_stages for p in who) * len(pool.items)
    say(
        f"synthesis: {len(who)} participants (5 singles, 20 ordered pairs by generation -> "
        f"debate -> reflection) x {len(pool.items)} items = {calls:,} stage calls"
    )

    def show(p: RunProgress) -> None:
        assert progress is not None
        progress(f"synthesis: {p.done:,} of {p.total:,} calls", p.done / max(p.total, 1))

    async def go() -> None:
        with RunStore(store_path) as store:
            runner = SynthRunner(
                pool,
                who,
                store,
                {server.base_url: backend},
                RunSettings(concurrency=32, seed=seed),
                on_progress=None if progress is None else show,
            )
            try:
                await runner.run()
            finally:
                await backend.close()
            results = store.results()
            values = None
            if scored:  # each answer's points 0..max_score, as cat synth writes them
                graded = graded_answers(results, {i.id: i for i in pool.items})
                values = {key: g.points for key, g in graded.items()}
            write_responses(results, [p.name for p in who], [i.id for i in pool.items], out, values)

    asyncio.run(go())
    return out


def _pool_folder(pool: QuestionSet, work: Path, pool_dir: Path) -> Path:
    """``work/pool``: the demo's items with the source pool's manifest."""
    target = work / "pool"
    target.mkdir(exist_ok=True)
    shutil.copy(pool_dir / "pool.json", target / "pool.json")
    (target / "items.jsonl").write_text(
        "".join(item.model_dump_json() + "\n" for item in pool.items), encoding="utf-8"
    )
    return target


def _calibrate(responses: Path, target: Path, seed: int, say: Callable[[str], None]) -> LoadedPool:
    matrix = read_responses(responses)
    say(f"calibration: 3PL by EM on {matrix.n_subjects} participants x {matrix.n_items} items")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = EMCalibrator("3pl").fit(matrix)
    params = fit.params_
    abilities = score_abilities(matrix, params, AbilityMethod.EAP)
    record_calibration(
        target,
        params,
        reference_rows(matrix, abilities),
        {"method": "em", "seed": seed, "source": str(responses)},
    )
    return load_pool(target)


def _calibrate_scores(
    responses: Path, target: Path, seed: int, say: Callable[[str], None]
) -> LoadedPool:
    """The graded model (3PL for single-choice items) fitted to the scores, as ``cat
    calibrate --model graded --pool`` fits it, without the cross-fit."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        outcome = calibrate(
            responses, model="graded", pool=target, standard_errors="none", seed=seed
        )
    report = outcome.report
    assert isinstance(report, GradedCalibrationReport)  # what --model graded reports
    kinds = ", ".join(f"{n} {kind}" for kind, n in report.item_types.items())
    say(
        f"calibration: graded response model by EM on {report.n_subjects} participants x "
        f"{report.n_items} items ({kinds})"
    )
    return load_pool(target)


def _assess(
    pool: LoadedPool,
    server: ServerProcess,
    work: Path,
    length: int,
    seed: int,
    say: Callable[[str], None],
    progress: Progress | None,
) -> list[AssessedModel]:
    assert pool.params is not None  # just calibrated
    item_ids = pool.params.item_ids
    items = {item.id: item for item in pool.items}
    chinese = pool.manifest.language == "zh"
    ref_acc = [r.accuracy for r in pool.references if r.accuracy is not None]
    rows = []
    say(f"assessment: {len(ASSESSED_MODELS)} new models, {length} adaptive items each, over HTTP")
    with RunStore(work / "assess.db") as store:
        for name, theta in ASSESSED_MODELS.items():
            backend = OpenAIBackend(server.base_url, timeout=30.0)
            examinee = EndpointExaminee(name, backend=backend, store=store)

            def show(session: AssessmentSession, _: object, name: str = name) -> None:
                if progress is not None:
                    given = len(session.given)
                    progress(f"assessing {name}: {given} of {length} items", given / length)

            result = assess(pool, examinee, length=length, seed=seed, on_step=show)
            true_acc = float(
                np.mean(
                    [expected_share(items[i], server.p_right(name, i), chinese) for i in item_ids]
                )
            )
            true_rank = 1 + sum(a > true_acc for a in ref_acc)
            rows.append(
                AssessedModel(
                    model=name,
                    true_theta=theta,
                    true_accuracy=true_acc,
                    true_rank=true_rank,
                    result=result,
                )
            )
    return rows
