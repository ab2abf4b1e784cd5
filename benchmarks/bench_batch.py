"""The offline batch path of ``cat synth`` at scale: plan, write, import and export
about 100,000 calls (``--batch-out`` / ``--batch-in`` rounds), with the ``vllm run-batch``
stand-in answering the request files in between.

    python benchmarks/bench_batch.py               # 2,223 items x 5 models: 100,035 calls
    python benchmarks/bench_batch.py --items 200   # a quick look

Five models alone and in their 20 ordered pairs make 45 calls an item (5 generations,
20 debates, 20 reflections). Target (issue 16): planning, writing, importing and
exporting 100,000 calls in under 60 s on this 2-core machine; the stand-in engine's
time (the part vLLM or the Batch API would spend) is reported apart and not counted.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from itempool import PoolItem
from synth.batch_round import run_batch_round
from synth.job import prepare_run
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2223)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        pool = root / "pool"
        write_pool(pool, args.items)
        requests, results = root / "requests", root / "results"
        requests.mkdir()
        results.mkdir()
        api = make_api(pool, MODELS, 0, {})
        ours = engine = 0.0
        batch_in = None
        calls = 0
        for round_no in range(1, 5):
            t0 = time.perf_counter()
            plan = prepare_run(
                pool,
                ",".join(MODELS),
                base_url="http://127.0.0.1:9/v1",
                store=root / "run.db",
                out=root / "responses.jsonl",
                concurrency=64,
            )
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
