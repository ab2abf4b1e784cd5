"""Client-side throughput of ``cat synth``'s runner against the local OpenAI-compatible
server, which runs in its own process (as a real endpoint would).

    python benchmarks/bench_synth.py              # 3,000 calls at concurrency 64

Target (issue 4): at least 300 calls/s on this 2-core machine, so that the tool is never
the bottleneck of a run. Every call goes through the real ``openai`` client, the retry
loop and the SQLite run store (one committed row per call).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from itempool import PoolItem, read_questions
from synth.backend import OpenAIBackend
from synth.participants import make_participants, parse_agents
from synth.runner import RunSettings, SynthRunner
from synth.store import RunStore


def _write_pool(folder: Path, n_items: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pool.json").write_text(json.dumps({"name": "bench", "language": "en"}))
    with (folder / "items.jsonl").open("w", encoding="utf-8") as fh:
        for k in range(n_items):
            item = PoolItem(
                id=f"q{k:05d}",
                question=f"Benchmark question number {k}: which option is right?",
                options={"A": "first", "B": "second", "C": "third", "D": "fourth"},
                answer="ABCD"[k % 4],
            )
            fh.write(item.model_dump_json() + "\n")


async def _run(pool_dir: Path, base_url: str, store_path: Path, concurrency: int) -> float:
    pool = read_questions(pool_dir)
    agents = parse_agents("bench-model", base_url)
    who = make_participants(agents, ["singles"])
    backend = OpenAIBackend(base_url, timeout=30.0)
    with RunStore(store_path) as store:
        runner = SynthRunner(
            pool, who, store, {base_url: backend}, RunSettings(concurrency=concurrency)
        )
        t0 = time.perf_counter()
        progress = await runner.run()
        seconds = time.perf_counter() - t0
    await backend.close()
    if progress.new_calls != len(pool.items):
        raise SystemExit(f"expected {len(pool.items)} new calls, made {progress.new_calls}")
    return progress.new_calls / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _write_pool(folder / "pool", args.calls)
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "synth.local_server",
                "--pool",
                str(folder / "pool"),
                "--models",
                "bench-model=0.7",
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            line = server.stdout.readline().strip()
            if not line.startswith("READY "):
                raise SystemExit(f"the local server did not start: {line!r}")
            base_url = line.split(" ", 1)[1]
            rate = asyncio.run(_run(folder / "pool", base_url, folder / "run.db", args.concurrency))
        finally:
            server.terminate()
            server.wait(timeout=10)
    print(
        f"{args.calls:,} calls, concurrency {args.concurrency}: {rate:,.0f} calls/s "
        "(target >= 300; server in its own process, openai client + retries + SQLite store)"
    )


if __name__ == "__main__":
    main()
