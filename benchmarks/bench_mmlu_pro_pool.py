"""The shipped MMLU-Pro pool's promise, model by model: leave each of the 32 reference
models out, build the pool without it exactly as ``item_pools/build_mmlu_pro.py`` builds
the shipped one (the same items; 3PL by EM under the default priors on the other 31;
the cross-fit, K = 5 folds at 100 and 250 items, among those 31 only, so that the
held-out model is in neither the calibration nor the errors its interval comes from),
then assess it with its own recorded answers through the library (``cat.assess`` with a
``cat.ReplayExaminee``, the default design and length) and compare with the truth: its
accuracy on every item it answered, and its rank by accuracy among the 31.

    python benchmarks/bench_mmlu_pro_pool.py                       # all 32 models
    python benchmarks/bench_mmlu_pro_pool.py --models Yi-34B,gemma-7b --jobs 2

Prints per model: true accuracy, predicted with its 90% interval, whether the interval
holds the truth, true rank, rank, items used, design; then the summary: coverage, rank
errors (largest, share within ±2), MAE. Each model costs a calibration with its
cross-fit (about 6 minutes on two shared cores); ``--jobs`` runs models in parallel
processes. ``--out FILE.json`` keeps the rows. Issue 28's target: the truth inside the
interval, the rank within ±2, at most 250 items (``tests/cli/test_mmlu_pro_target.py``
checks that the command line through a replaying endpoint gives the library's figures).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data" / "mmlu-pro"
SHIPPED = REPO / "item_pools" / "mmlu-pro"
if str(REPO) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO))


def build_without(model: str, work: Path, folds: int) -> tuple[Path, float, dict[str, float]]:
    """The pool built in ``work`` without ``model`` (as the shipped one is built, the
    cross-fit among the others only); ``model``'s accuracy and the others'."""
    from cat.pools.calibration_job import calibrate
    from itempool import ITEMS_GZ
    from itempool.formats.responses import read_responses, write_jsonl

    responses = SHARED / "responses.csv.gz"
    matrix = read_responses(responses)
    accuracy = dict(zip(matrix.subject_ids, matrix.accuracy().tolist(), strict=True))
    truth = accuracy.pop(model)
    shipped = json.loads((SHIPPED / "pool.json").read_text(encoding="utf-8"))
    others = [k for k, name in enumerate(matrix.subject_ids) if name != model]
    write_jsonl(matrix.subset(subjects=others), work / "others.jsonl")
    pool = work / "pool"
    pool.mkdir()
    keep = ("name", "version", "language", "scenarios", "seed", "protocol")
    (pool / "pool.json").write_text(json.dumps({k: shipped[k] for k in keep if k in shipped}))
    shutil.copy(SHIPPED / ITEMS_GZ, pool / ITEMS_GZ)
    if (SHIPPED / "protocol").is_dir():
        shutil.copytree(SHIPPED / "protocol", pool / "protocol")
    calibrate(
        work / "others.jsonl",
        model=shipped["calibration"]["model"],
        pool=pool,
        cross_fit=folds,
        cross_fit_lengths=(100, 250),
        seed=shipped["calibration"]["seed"],
    )
    return pool, truth, accuracy


def leave_out(model: str, folds: int, length: int, seed: int) -> dict[str, Any]:
    """Build the pool without ``model``, assess ``model`` on it; the row of figures."""
    import cat

    start = time.perf_counter()
    responses = SHARED / "responses.csv.gz"
    with tempfile.TemporaryDirectory(prefix="bench-mmlu-pro-") as tmp:
        pool, truth, accuracy = build_without(model, Path(tmp), folds)
        calibrated = time.perf_counter() - start
        result = cat.assess(pool, cat.ReplayExaminee(responses, model), length=length, seed=seed)
    acc = result.predicted_accuracy
    return {
        "model": model,
        "truth": truth,
        "predicted": acc.value,
        "low": acc.low,
        "high": acc.high,
        "inside": bool(acc.low <= truth <= acc.high),
        "true_rank": 1 + sum(a > truth for a in accuracy.values()),
        "rank": result.rank.position if result.rank is not None else None,
        "items": result.n_items,
        "design": result.settings.design.value,
        "seconds_calibration": round(calibrated, 1),
        "seconds": round(time.perf_counter() - start, 1),
    }


def _line(row: dict[str, Any]) -> str:
    return (
        f"{row['model']:<30}{row['truth']:>7.4f}{row['predicted']:>11.4f}"
        f"  [{row['low']:.4f}, {row['high']:.4f}]{'yes' if row['inside'] else 'NO':>5}"
        f"{row['true_rank']:>6}{row['rank']:>6}{row['items']:>6}  {row['design']:<9}"
        f"{row['seconds']:>6.0f}"
    )


def summary(rows: list[dict[str, Any]]) -> list[str]:
    """Coverage, rank errors and MAE over ``rows``."""
    n = len(rows)
    errors = [abs(r["rank"] - r["true_rank"]) for r in rows]
    mae = sum(abs(r["predicted"] - r["truth"]) for r in rows) / n
    return [
        f"models: {n}; items used: {min(r['items'] for r in rows)}-{max(r['items'] for r in rows)}",
        f"coverage of the 90% interval: {sum(r['inside'] for r in rows) / n:.2f} "
        f"({sum(r['inside'] for r in rows)} of {n})",
        f"rank error: largest {max(errors)}, within ±2 for {sum(e <= 2 for e in errors) / n:.2f} "
        f"({sum(e <= 2 for e in errors)} of {n}), mean {sum(errors) / n:.2f}",
        f"MAE of the predicted accuracy: {mae:.4f}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=None, help="a,b,...: these models only")
    parser.add_argument("--folds", type=int, default=5, help="cross-fit folds (shipped: 5)")
    parser.add_argument("--length", type=int, default=250, help="test length (default 250)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the assessment")
    parser.add_argument("--jobs", type=int, default=1, help="models in parallel processes")
    parser.add_argument("--out", type=Path, default=None, help="write the rows here (JSON)")
    args = parser.parse_args()
    if not (SHARED / "responses.csv.gz").is_file() or not SHIPPED.is_dir():
        raise SystemExit(f"needs {SHARED} and {SHIPPED}")
    with (SHARED / "models.csv").open(encoding="utf-8") as fh:
        every = [line.split(",")[0] for line in fh.read().splitlines()[1:] if line]
    models = every if args.models is None else [m.strip() for m in args.models.split(",")]
    unknown = [m for m in models if m not in every]
    if unknown:
        raise SystemExit(f"no such model: {', '.join(unknown)} (models: {', '.join(every)})")
    print(
        f"MMLU-Pro leave-one-out, {len(models)} model(s), {args.folds}-fold cross-fit, "
        f"length {args.length}, {args.jobs} job(s)"
    )
    print(
        f"{'model':<30}{'truth':>7}{'predicted':>11}  {'90% interval':<18}{'in':>3}"
        f"{'rank*':>6}{'rank':>6}{'items':>6}  {'design':<9}{'s':>6}"
    )
    start = time.perf_counter()
    rows: list[dict[str, Any]] = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(leave_out, m, args.folds, args.length, args.seed) for m in models]
        for future in as_completed(futures):
            row = future.result()
            rows.append(row)
            print(_line(row), flush=True)
    print("(rank*: true rank by accuracy among the 31 others, 1 = best; s: seconds)")
    for line in summary(rows):
        print(line)
    print(f"{(time.perf_counter() - start) / 60:.1f} min")
    if args.out is not None:
        args.out.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
