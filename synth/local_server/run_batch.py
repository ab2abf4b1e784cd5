"""``python -m synth.local_server.run_batch -i FILE -o OUT``: a stand-in for ``vllm
run-batch`` that answers a batch request file with the local server's simulated models
and writes the result file, line for line in the format vLLM and OpenAI's Batch API
write. The same request gets the same reply as over HTTP, so a batch run and an online
run against the same simulated models give the same answers.

``--error-rate`` turns a share of the lines into error results, and ``--drop-rate``
leaves a share out (as an expired or cut batch would): the two ways a real batch comes
back incomplete.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from itempool import PoolFormatError, read_questions
from synth.errors import SynthError
from synth.local_server.batches import answer_line, error_line, line_fate
from synth.local_server.faults import FaultPlan
from synth.local_server.protocol import ChatCompletions
from synth.local_server.records import RequestLog
from synth.local_server.server import parse_judges, parse_models
from synth.local_server.simulator import Simulator

__all__ = ["main", "run_batch"]


def run_batch(
    api: ChatCompletions,
    input_path: Path,
    output_path: Path,
    *,
    error_rate: float = 0.0,
    drop_rate: float = 0.0,
    seed: int = 0,
) -> tuple[int, int, int]:
    """Answer every request line of ``input_path`` into ``output_path`` (its folder is
    made if missing); returns the lines answered, turned into errors, and left out."""
    rng = random.Random(f"run-batch {seed} {input_path.name}")
    answered = errors = dropped = 0
    lines = []
    with input_path.open(encoding="utf-8") as fh:
        for n, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            request = json.loads(raw)
            line_id = f"{input_path.stem}_{n}"
            fate = line_fate(rng.random(), drop_rate, error_rate)
            if fate == "dropped":
                dropped += 1
                continue
            if fate == "error":
                lines.append(error_line(request, line_id))
                errors += 1
            else:
                lines.append(answer_line(api, request, line_id))
                answered += 1
    # A round's results usually go to a folder of their own, not made beforehand.
    output_path.parent.mkdir(parents=True, exist_ok=True)
    output_path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return answered, errors, dropped


def make_api(
    pool_dir: Path, models: Mapping[str, float], seed: int, judges: Mapping[str, str]
) -> ChatCompletions:
    """The simulated models of ``python -m synth.local_server`` with the same options,
    without faults."""
    pool = read_questions(pool_dir)
    simulator = Simulator(pool.items, models, seed, None, judges)
    return ChatCompletions(simulator, FaultPlan(), RequestLog())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m synth.local_server.run_batch",
        description="Answer a batch request file with simulated models (vllm run-batch).",
    )
    parser.add_argument("-i", "--input-file", type=Path, required=True)
    parser.add_argument("-o", "--output-file", type=Path, required=True)
    parser.add_argument("--pool", type=Path, required=True, help="pool folder")
    parser.add_argument("--models", type=parse_models, required=True, help="NAME=P,...")
    parser.add_argument("--judges", type=parse_judges, default={})
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--error-rate", type=float, default=0.0)
    parser.add_argument("--drop-rate", type=float, default=0.0)
    args = parser.parse_args(argv)
    try:
        api = make_api(args.pool, args.models, args.seed, args.judges)
        answered, errors, dropped = run_batch(
            api,
            args.input_file,
            args.output_file,
            error_rate=args.error_rate,
            drop_rate=args.drop_rate,
            seed=args.seed,
        )
    except (SynthError, PoolFormatError, OSError, json.JSONDecodeError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{answered} answered, {errors} errors, {dropped} left out: {args.output_file}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
