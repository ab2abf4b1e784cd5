"""Replay validation on real LLM data against the issue's targets.

    python benchmarks/bench_validate.py          # MMLU-Pro leave-one-out (~3.5 min) + ARC

- ``../shared/data/mmlu-pro``: 32 LLMs x 12,032 items, leave-one-out, 3PL, lengths
  30/100/250, MFI plain and content-balanced over the 14 categories ("mfi+cb", shares
  of the pool). Target at 250 items: Kendall τ >= 0.94, MAE <= 0.018.
- ``../shared/data/oll-arc``: 320 LLMs x 735 items, 30% held out, 3PL, 100 items.
  Target: MFI beats random-raw on both τ and MAE.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from cat.pools.scenarios import read_item_scenarios
from cat.prediction.validation import validate
from irt.readers import read_responses

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
SEED = 0


def _table(name: str, results: list[dict[str, object]], seconds: float) -> None:
    print(f"\n{name}  ({seconds:.0f} s)")
    print(
        f"{'policy':<12}{'predictor':<10}{'length':>7}{'tau':>8}{'MAE':>8}{'RMSE':>8}{'coverage':>10}"
    )
    for r in sorted(results, key=lambda r: (r["length"], str(r["policy"]), str(r["predictor"]))):
        print(
            f"{r['policy']!s:<12}{r['predictor']!s:<10}{r['length']:>7}"
            f"{r['kendall_tau']:>8.3f}{r['mae']:>8.4f}{r['rmse']:>8.4f}{r['coverage']:>10.2f}"
        )


def main() -> None:
    if not SHARED.is_dir():
        raise SystemExit(f"shared data not found at {SHARED}")
    runs = [
        (
            "MMLU-Pro, leave-one-out",
            "mmlu-pro",
            dict(holdout=None, leave_one_out=True),
            [30, 100, 250],
            ["mfi", "mfi+cb"],
        ),
        (
            "Open LLM Leaderboard ARC, 30% held out",
            "oll-arc",
            dict(holdout=0.3),
            [30, 100],
            ["mfi", "random"],
        ),
    ]
    for title, folder, split, lengths, policies in runs:
        data = read_responses(SHARED / folder / "responses.csv.gz")
        items = SHARED / folder / "items.csv.gz"
        scenario = (
            read_item_scenarios(items, data.item_ids, "category").codes if items.exists() else None
        )
        t0 = time.perf_counter()
        predictions = validate(
            data,
            "3pl",
            policies,
            lengths,
            np.random.default_rng(SEED),
            scenario=scenario,
            **split,  # type: ignore[arg-type]
        )
        _table(title, [p.metrics() for p in predictions], time.perf_counter() - t0)


if __name__ == "__main__":
    main()
