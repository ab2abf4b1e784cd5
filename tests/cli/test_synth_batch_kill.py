"""``cat synth --batch`` killed with SIGKILL at random points (10 seeds), then run
again: no custom id is submitted twice (beyond the new asks that an error result
calls for), and every call ends answered or explicitly failed.

The client runs as its own process, so that ``kill -9`` hits it wherever it is:
uploading, creating, polling or importing. The Batch API server lives in the test's
process and outlives the kills; it records every custom id of every batch created."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from synth.local_server import LocalServer
from synth.local_server.batches import BatchFaults
from tests.synth.online_run import MODELS, online_responses
from tests.synth.pools import EN_ITEMS

#: Five runs (two with error lines), up to 15 kills: about a minute.
SEEDS = range(5)
#: Calls of the run: 8 items, 2 singles and 2 pairs, 3 stages (pairs share generation).
CALLS = 48


def _command(pool: Path, url: str, tmp: Path) -> list[str]:
    args = [str(Path(sys.executable).parent / "cat"), "synth", "--pool", str(pool)]
    args += ["--agents", "good,bad", "--limit", "8", "--base-url", url]
    args += ["--store", str(tmp / "run.db"), "--out", str(tmp / "responses.jsonl")]
    return [*args, "--batch", "--poll-seconds", "0.2", "--max-batch-attempts", "10"]


def _state(store: Path) -> str:
    """Where the kill found the run: the steps its batches had reached."""
    if not store.exists():
        return "no store"
    with sqlite3.connect(store) as db:
        # A kill can come before the store has made its tables.
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        if "batches" not in tables:
            return "no batch yet"
        rows = db.execute(
            "SELECT file_id IS NOT NULL, batch_id IS NOT NULL, imported FROM batches"
        ).fetchall()
    steps = Counter(
        "imported" if imported else "created" if batch else "uploaded" if file else "planned"
        for file, batch, imported in rows
    )
    return ", ".join(f"{n} {step}" for step, n in sorted(steps.items())) or "no batch yet"


def _wait_for(store: Path, proc: subprocess.Popen[bytes]) -> None:
    """Until ``store`` exists or the run has ended (at most 60 s)."""
    deadline = time.monotonic() + 60
    while not store.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.mark.slow
def test_kill_9_at_random_points_then_rerun(en_pool: Path, tmp_path: Path) -> None:
    env = {**os.environ, "OPENAI_API_KEY": ""}
    states: list[str] = []
    for seed in SEEDS:
        rng = random.Random(seed)
        tmp = tmp_path / f"seed{seed}"
        tmp.mkdir()
        # Odd seeds also get error lines: each is asked again in a later round.
        faults = BatchFaults(line_error_rate=0.2 if seed % 2 else 0.0)
        with LocalServer(EN_ITEMS, MODELS, batch_faults=faults, seed=seed) as server:
            command = _command(en_pool, server.base_url, tmp)
            startup = 0.0
            for kill in range(3):
                began = time.monotonic()
                proc = subprocess.Popen(
                    command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
                )
                # Kills are timed from the end of start-up (about 2 s, longer on a
                # loaded machine, where kills timed from the start all landed before
                # any batch): the first run's time to make its store.
                if kill == 0:
                    _wait_for(tmp / "run.db", proc)
                    startup = time.monotonic() - began
                else:
                    time.sleep(startup)
                time.sleep(rng.uniform(0.0, 3.0))
                if proc.poll() is not None:
                    break
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
                states.append(_state(tmp / "run.db"))
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stderr
            submitted = Counter(server.batches.submitted)
        with sqlite3.connect(tmp / "run.db") as db:
            errors = dict(db.execute("SELECT key, errors FROM batch_requests").fetchall())
            (answered,) = db.execute("SELECT COUNT(*) FROM calls").fetchone()
            (failed,) = db.execute("SELECT COUNT(*) FROM failures").fetchone()
            open_batches = db.execute("SELECT COUNT(*) FROM batches WHERE imported=0").fetchone()
        # Every request went out once, and once more after each error result only.
        assert set(submitted) == set(errors) and len(errors) == CALLS
        assert all(submitted[key] == 1 + errors[key] for key in errors), seed
        assert (answered, failed, open_batches[0]) == (CALLS, 0, 0)
        assert (tmp / "responses.jsonl").read_text() == online_responses(
            en_pool, tmp / "online", seed
        ).read_text()
    # The kills hit batches in flight (created, not imported), not only the start-up.
    assert any("created" in state for state in states), states
