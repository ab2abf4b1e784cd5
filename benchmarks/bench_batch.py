"""Both batch paths of ``cat synth`` at scale: plan, write, import and export about
100,000 calls.

- files: ``--batch-out`` / ``--batch-in`` rounds, the ``vllm run-batch`` stand-in
  answering the request files in between;
- api: ``--batch`` against the local server's Batch API (``synth.local_server``) through
  the ``openai`` client: uploads, batches polled, results downloaded and imported.

    python benchmarks/bench_batch.py               # both; 2,223 items x 5 models
    python benchmarks/bench_batch.py --path api --items 200   # a quick look

Five models alone and in their 20 ordered pairs make 44 distinct calls an item.
Target (issue 16): planning, writing, importing and exporting 100,000 calls in under
60 s on this 2-core machine. The engine's time (the simulated models answering: the
part vLLM or the Batch API would spend) is reported apart and not counted; on the api
path, the upload and download through HTTP (both ends in this process) are counted.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from itempool import PoolItem, read_questions
from synth.batch_api import run_batch_api
from synth.batch_round import run_batch_round
from synth.job import RunPlan, prepare_run
from synth.local_server import LocalServer
from synth.local_server.run_batch import make_api, run_batch

MODELS = {"m1": 0.9, "m2": 0.75, "m3": 0.6, "m4": 0.45, "m5": 0.3}


def write_pool(folder: Path, n_items: int) -> None:
    """A pool of ``n_items`` four-option questions."""
    folder.mkdir(parents=True)
    (folder / "pool.json").write_text(json.dumps({"name": "batch-bench", "language": "en"}))
    options = {"A": "one", "B": "two", "C": "three", "D": "four"}
    lines = [
        PoolItem(id=f"b{k:05d}", question=f"Batch question {k}?", options=options, answer="B")
        for k in range(n_items)
    ]
    (folder / "items.jsonl").write_text("".join(i.model_dump_json() + "\n" for i in lines))


def plan_for(pool: Path, root: Path, url: str) -> RunPlan:
    return prepare_run(
        pool,
        ",".join(MODELS),
        base_url=url,
        store=root / "run.db",
        out=root / "responses.jsonl",
        concurrency=64,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2223)
    parser.add_argument("--path", choices=("files", "api", "both"), default="both")
    args = parser.parse_args()
    for path in ("files", "api") if args.path == "both" else (args.path,):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            pool = root / "pool"
            write_pool(pool, args.items)
            print(f"--- {path} ---", flush=True)
            (bench_files if path == "files" else bench_api)(pool, root)


def bench_api(pool: Path, root: Path) -> None:
    """``--batch`` against the local server's Batch API, timing the engine apart."""
    engine = [0.0]
    with LocalServer(read_questions(pool).items, MODELS) as server:
        finish = server.batches._finish  # where the simulated models answer a batch

        def timed(batch: dict[str, Any]) -> None:
            t = time.perf_counter()
            finish(batch)
            engine[0] += time.perf_counter() - t

        server.batches._finish = timed  # type: ignore[method-assign]
        t0 = time.perf_counter()
        run = run_batch_api(
            plan_for(pool, root, server.base_url),
            poll_seconds=0,
            on_batches=lambda p: None,
        )
        wall = time.perf_counter() - t0
    print(
        f"{run.rounds} rounds, {run.batches} batches, {run.submitted:,} requests; "
        f"{run.report.n_written} participants written"
    )
    print(
        f"{run.submitted:,} calls planned, uploaded, polled, downloaded, imported and exported "
        f"in {wall - engine[0]:.1f} s (target < 60 s for 100,000); the engine took "
        f"{engine[0]:.1f} s more"
    )


def bench_files(pool: Path, root: Path) -> None:
    """``--batch-out`` / ``--batch-in`` rounds, timing the stand-in engine apart."""
    requests, results = root / "requests", root / "results"
    requests.mkdir()
    results.mkdir()
    api = make_api(pool, MODELS, 0, {})
    ours = engine = 0.0
    batch_in = None
    calls = 0
    for round_no in range(1, 5):
        t0 = time.perf_counter()
        plan = plan_for(pool, root, "http://127.0.0.1:9/v1")
        done = run_batch_round(plan, batch_in=batch_in, batch_out=requests)
        spent = time.perf_counter() - t0
        ours += spent
        calls += done.n_remaining
        what = "export" if done.report is not None else f"{done.n_remaining:,} requests"
        print(f"round {round_no}: imported {done.imported:,}, {what}: {spent:.1f} s")
        if done.report is not None:
            print(f"{done.report.n_written} participants written")
            break
        t1 = time.perf_counter()
        round_results = results / f"round{round_no:02d}"
        round_results.mkdir()
        for path in done.files:
            run_batch(api, path, round_results / path.name)
        engine += time.perf_counter() - t1
        batch_in = round_results
    print(
        f"{calls:,} calls planned, written, imported and exported in {ours:.1f} s "
        f"(target < 60 s for 100,000); the stand-in engine took {engine:.1f} s more"
    )


if __name__ == "__main__":
    main()
