"""The runner against the local OpenAI-compatible server, through the real openai client."""

from __future__ import annotations

import asyncio
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from itempool import QuestionSet, read_questions
from synth.backend import OpenAIBackend, RetryPolicy
from synth.local_server import FaultPlan, LocalServer
from synth.participants import make_participants, parse_agents
from synth.runner import RunProgress, RunSettings, SynthRunner
from synth.store import RunStore
from tests.synth.pools import EN_ITEMS, ZH_ITEMS

FAST_RETRY = RetryPolicy(max_attempts=10, base_delay=0.01, max_delay=0.05)


def _run(
    pool: QuestionSet,
    server: LocalServer,
    store_path: Path,
    agents: str = "good,bad",
    kinds: tuple[str, ...] = ("singles", "pairs"),
    concurrency: int = 8,
    timeout: float = 5.0,
) -> RunProgress:
    who = make_participants(parse_agents(agents, server.base_url), kinds)
    backend = OpenAIBackend(server.base_url, timeout=timeout, retry=FAST_RETRY)

    async def go() -> RunProgress:
        with RunStore(store_path) as store:
            runner = SynthRunner(
                pool, who, store, {server.base_url: backend}, RunSettings(concurrency=concurrency)
            )
            try:
                return await runner.run()
            finally:
                await backend.close()

    return asyncio.run(go())


def _no_repeats(server: LocalServer) -> None:
    counts = Counter(server.completed_keys())
    assert counts and max(counts.values()) == 1


def test_singles_and_pairs_answer_every_item_and_share_generations(
    en_pool: Path, tmp_path: Path
) -> None:
    pool = read_questions(en_pool)
    with LocalServer(EN_ITEMS, {"good": 0.9, "bad": 0.3}) as server:
        progress = _run(pool, server, tmp_path / "run.db")
        # singles 2 x 30; pairs 2 x 30 x (debate + reflection); generations are shared
        assert progress.new_calls == 180 == len(server.completed_keys())
        assert progress.done == progress.total == (2 + 2 * 3) * 30
        _no_repeats(server)
        with RunStore(tmp_path / "run.db") as store:
            results = store.results()
        assert len(results) == 4 * 30 and {r.status for r in results} <= {"ok", "unparsed"}
        acc = {
            name: sum(r.correct for r in results if r.participant == name) / 30
            for name in ("good", "bad")
        }
        assert acc["good"] > 0.7 and acc["bad"] < 0.55
        pair = next(r for r in results if r.participant == "good>bad")
        assert [s["role"] for s in pair.stages] == ["generation", "debate", "reflection"]

        again = _run(pool, server, tmp_path / "run.db")  # a rerun pays for nothing
        assert again.new_calls == 0 and len(server.completed_keys()) == 180


def test_chinese_pool_is_asked_and_graded_in_chinese(zh_pool: Path, tmp_path: Path) -> None:
    pool = read_questions(zh_pool)
    with LocalServer(ZH_ITEMS, {"m": 1.0}) as server:
        _run(pool, server, tmp_path / "run.db", agents="m", kinds=("singles",))
    with RunStore(tmp_path / "run.db") as store:
        results = store.results()
    assert len(results) == 10 and all(r.correct for r in results)


def test_1000_calls_with_20_percent_faults_end_answered_or_failed(tmp_path: Path) -> None:
    items = [
        item.model_copy(update={"id": f"{item.id}-{k}", "question": f"{item.question} [{k}]"})
        for k in range(34)
        for item in EN_ITEMS
    ][:1000]
    pool = QuestionSet(name="faults", language="en", items=tuple(items))
    faults = FaultPlan(
        rate_429=0.04,
        rate_500=0.04,
        rate_slow=0.04,
        rate_malformed=0.04,
        rate_drop=0.04,
        retry_after=0.01,
        slow_seconds=0.6,
    )
    with LocalServer(items, {"m": 0.7}, faults=faults, seed=3) as server:
        progress = _run(
            pool,
            server,
            tmp_path / "run.db",
            agents="m",
            kinds=("singles",),
            concurrency=32,
            timeout=0.3,
        )
        outcomes = Counter(r.outcome for r in server.records)
        _no_repeats(server)
    assert sum(outcomes[k] for k in ("429", "500", "slow", "malformed", "drop")) > 120
    with RunStore(tmp_path / "run.db") as store:
        results = store.results()
        totals = store.totals()
    assert len(results) == 1000 and len({r.item_id for r in results}) == 1000
    answered = sum(r.status != "failed" for r in results)
    assert answered + progress.failed_calls == 1000 and answered >= 990
    assert totals["calls"] == answered == progress.new_calls


def test_a_bad_model_name_fails_its_calls_without_retrying(en_pool: Path, tmp_path: Path) -> None:
    pool = read_questions(en_pool)
    with LocalServer(EN_ITEMS, {"good": 0.9}) as server:
        progress = _run(pool, server, tmp_path / "run.db", agents="nosuch", kinds=("singles",))
        assert progress.failed_calls == 30
        assert len(server.records) == 30  # 404 is final: one request per call
    with RunStore(tmp_path / "run.db") as store:
        assert all(r.status == "failed" for r in store.results())
    with sqlite3.connect(tmp_path / "run.db") as db:
        errors = {error for (error,) in db.execute("SELECT error FROM failures")}
    assert errors == {f"the endpoint {server.base_url} has no model 'nosuch'; it has: good"}


@pytest.mark.parametrize("concurrency", [1, 16])
def test_progress_counts_reach_the_total(en_pool: Path, tmp_path: Path, concurrency: int) -> None:
    pool = read_questions(en_pool)
    with LocalServer(EN_ITEMS, {"a": 0.5, "b": 0.5}) as server:
        progress = _run(pool, server, tmp_path / "run.db", "a,b", concurrency=concurrency)
    assert progress.done == progress.total and progress.tokens > 0
