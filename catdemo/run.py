"""The offline demo: synthesis, calibration and assessment end to end on this machine.

A local OpenAI-compatible server plays simulated models whose right-answer probability
follows a 3PL model with *true* item parameters (``true_item_params``, derived from each
demo item's difficulty level). Five of them answer part of the demo pool by generation →
debate → reflection through ``synth`` (5 singles + 20 ordered pairs), the answers are
calibrated, and three further models are assessed through the same HTTP endpoint; their
predicted accuracy and rank are set beside the truth.
"""

from __future__ import annotations

import asyncio
import shutil
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cat.assess import build_result, run_assessment
from cat.examinees import EndpointExaminee
from cat.pool_calibration import record_calibration, reference_rows
from cat.report import Reference
from cat.scenarios import scenarios_of
from cat.session import AssessmentSession, SessionConfig
from irt.em import EMCalibrator
from irt.errors import ConvergenceWarning
from irt.models import ItemParams
from irt.readers import read_responses
from irt.scoring import AbilityMethod, score_abilities
from synth.backend import OpenAIBackend, RetryPolicy
from synth.export import write_responses
from synth.items import Pool, PoolItem, read_pool
from synth.local_server import LocalServer
from synth.participants import make_participants, parse_agents
from synth.runner import RunSettings, SynthRunner
from synth.store import RunStore

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


def subset(pool: Pool, n_items: int, seed: int) -> Pool:
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
    return Pool(name=f"{pool.name}-demo-{len(chosen)}", language=pool.language, items=tuple(chosen))


@dataclass(frozen=True)
class AssessedRow:
    """One assessed model beside its truth."""

    model: str
    true_theta: float
    true_accuracy: float
    true_rank: int
    result: dict[str, Any]


def run_demo(
    pool_dir: Path,
    work: Path,
    n_items: int = 240,
    length: int = 60,
    seed: int = 0,
    say: Callable[[str], None] = print,
) -> list[AssessedRow]:
    """Everything the ``cat demo`` command does; files go into ``work``."""
    pool = subset(read_pool(pool_dir), n_items, seed)
    truth = true_item_params(pool.items, seed)
    models = {**REFERENCE_MODELS, **ASSESSED_MODELS}
    work.mkdir(parents=True, exist_ok=True)
    with LocalServer(pool.items, models, irt=truth, seed=seed) as server:
        say(f"local OpenAI-compatible server at {server.base_url}, {len(models)} simulated models")
        responses = _synthesise(pool, server, work, seed, say)
        params, references = _calibrate(pool, responses, work, pool_dir, seed, say)
        rows = _assess(pool, server, params, references, work, length, seed, say)
    return rows


def _synthesise(
    pool: Pool, server: LocalServer, work: Path, seed: int, say: Callable[[str], None]
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

    async def go() -> None:
        with RunStore(store_path) as store:
            runner = SynthRunner(
                pool, who, store, {server.base_url: backend}, RunSettings(concurrency=32, seed=seed)
            )
            try:
                await runner.run()
            finally:
                await backend.close()
            write_responses(store.results(), [p.name for p in who], [i.id for i in pool.items], out)

    asyncio.run(go())
    return out


def _calibrate(
    pool: Pool, responses: Path, work: Path, pool_dir: Path, seed: int, say: Callable[[str], None]
) -> tuple[ItemParams, list[Reference]]:
    matrix = read_responses(responses)
    say(f"calibration: 3PL by EM on {matrix.n_subjects} participants x {matrix.n_items} items")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = EMCalibrator("3pl").fit(matrix)
    params = fit.params_
    abilities = score_abilities(matrix, params, AbilityMethod.EAP)
    rows = reference_rows(matrix, abilities)
    target = work / "pool"
    target.mkdir(exist_ok=True)
    shutil.copy(pool_dir / "pool.json", target / "pool.json")
    (target / "items.jsonl").write_text(
        "".join(item.model_dump_json() + "\n" for item in pool.items), encoding="utf-8"
    )
    record_calibration(
        target, params, rows, {"method": "em", "seed": seed, "source": str(responses)}
    )
    references = [Reference(r["subject_id"], r["theta"], r["se"], r["accuracy"]) for r in rows]
    return params, references


def _assess(
    pool: Pool,
    server: LocalServer,
    params: ItemParams,
    references: list[Reference],
    work: Path,
    length: int,
    seed: int,
    say: Callable[[str], None],
) -> list[AssessedRow]:
    by_id = {item.id: item for item in pool.items}
    codes = scenarios_of(pool.items, params.item_ids)
    scenario, scenario_names = codes.codes, list(codes.names)
    scenario_of = {i: item.scenario for i, item in by_id.items()}
    rows = []
    say(f"assessment: {len(ASSESSED_MODELS)} new models, {length} adaptive items each, over HTTP")
    with RunStore(work / "assess.db") as store:
        for name, theta in ASSESSED_MODELS.items():
            backend = OpenAIBackend(server.base_url, timeout=30.0)
            examinee = EndpointExaminee(name, backend, store, by_id, pool.language, seed=seed)
            config = SessionConfig(max_items=length, content_balancing=True, seed=seed)
            session = AssessmentSession(params, config, scenario)
            try:
                log = run_assessment(session, examinee, 1, scenario_of=scenario_of)
            finally:
                examinee.close()
            result = build_result(
                session,
                log,
                references,
                scenario_names,
                {"model": name, "pool": {"name": pool.name, "n_items": params.n_items}},
            )
            true_acc = float(np.mean([server.p_right(name, i) for i in params.item_ids]))
            ref_acc = [r.accuracy for r in references if r.accuracy is not None]
            true_rank = 1 + sum(a > true_acc for a in ref_acc)
            rows.append(AssessedRow(name, theta, true_acc, true_rank, result))
    return rows
