"""The LLM judge in batch runs: its calls go to batches like the answers' (through the
Batch API and through batch files), its judgements match an online run's, and a judge
whose scores are always refused stops after the attempts allowed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from synth.batch_api import run_batch_api
from synth.batch_round import BatchRound, run_batch_round
from synth.job import RunPlan, prepare_run, run_synthesis
from synth.local_server import LocalServer
from synth.local_server.run_batch import make_api, run_batch
from synth.store import RunStore
from tests.synth.pools import OPEN_ITEMS, write_pool

MODELS = {"perfect": 1.0, "hopeless": 0.0}
JUDGES = {"noisy": "noisy", "wild": "out-of-range"}
AGENTS = "perfect,hopeless"


@pytest.fixture
def pool(tmp_path: Path) -> Path:
    return write_pool(tmp_path / "open-pool", OPEN_ITEMS)


def _plan(pool: Path, tmp: Path, url: str | None, judge: str) -> RunPlan:
    """The plan of a run at ``url``; without one, of a run through batch files."""
    return prepare_run(
        pool,
        AGENTS,
        base_url=url,
        store=tmp / "batch.db",
        out=tmp / "batch.jsonl",
        judge_model=judge,
        open_grading="judge",
        offline=url is None,
    )


def _online(pool: Path, tmp: Path, judge: str) -> str:
    folder = tmp / "online"
    folder.mkdir()
    with LocalServer(OPEN_ITEMS, MODELS, judges=JUDGES) as server:
        run_synthesis(
            pool,
            AGENTS,
            base_url=server.base_url,
            store=folder / "run.db",
            out=folder / "r.jsonl",
            judge_model=judge,
            open_grading="judge",
        )
    return (folder / "r.jsonl").read_text()


def _calls(store: Path) -> set[tuple[str, str, str]]:
    """Each stored call's key, model and prompt version (the judge's are its own)."""
    with sqlite3.connect(store) as db:
        return set(db.execute("SELECT key, model, prompt_version FROM calls").fetchall())


def test_the_judge_goes_through_the_batch_api(pool: Path, tmp_path: Path) -> None:
    with LocalServer(OPEN_ITEMS, MODELS, judges=JUDGES) as server:
        run = run_batch_api(_plan(pool, tmp_path, server.base_url, "noisy"), poll_seconds=0)
        submitted = server.batches.submitted
    judge = run.report.judge
    assert judge is not None and judge.open_answers == judge.judged == 16 and judge.failed == 0
    assert len(submitted) == len(set(submitted))
    # Every call, the judge's too, was answered by a batch.
    with RunStore(tmp_path / "batch.db") as store:
        stages = store.batch_stages(run.rounds)
        assert run.report.batch is not None
        assert run.report.batch.calls == store.totals()["calls"]
    assert set(stages) == {"judge"}  # the last round: the pairs' answers judged
    # The noisy judge's points are the matrix's, as online.
    assert (tmp_path / "batch.jsonl").read_text() == _online(pool, tmp_path, "noisy")
    assert _calls(tmp_path / "batch.db") == _calls(tmp_path / "online" / "run.db")


def test_the_judge_goes_through_batch_files(pool: Path, tmp_path: Path) -> None:
    out, results = tmp_path / "requests", tmp_path / "results"
    out.mkdir()
    results.mkdir()
    api = make_api(pool, MODELS, 0, JUDGES)
    plan = _plan(pool, tmp_path, None, "noisy")  # files need no endpoint, nor the judge
    done: list[BatchRound] = [run_batch_round(plan, batch_in=None, batch_out=out)]
    while done[-1].report is None and len(done) < 10:
        for path in done[-1].files:
            run_batch(api, path, results / path.name)
        done.append(run_batch_round(plan, batch_in=results, batch_out=out))
    assert any(r.remaining["judge"] for r in done)
    assert any(path.name.startswith(f"round0{r.round}-noisy") for r in done for path in r.files)
    assert (tmp_path / "batch.jsonl").read_text() == _online(pool, tmp_path, "noisy")
    assert _calls(tmp_path / "batch.db") == _calls(tmp_path / "online" / "run.db")


def test_a_judge_always_refused_stops_after_the_attempts(pool: Path, tmp_path: Path) -> None:
    with LocalServer(OPEN_ITEMS, MODELS, judges=JUDGES) as server:
        plan = _plan(pool, tmp_path, server.base_url, "wild")
        run = run_batch_api(plan, poll_seconds=0, max_batch_attempts=2)
    judge = run.report.judge
    # Every open answer's score refused twice (two judge rounds), then given up.
    assert judge is not None and judge.judged == 0 and judge.failed == 16
    assert run.report.n_written == 4
