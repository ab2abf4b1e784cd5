"""Replay validation on real LLM data: the default (what ``cat assess`` runs: per pool,
the design of smallest cross-fitted error on the training subjects among the IRT design,
the reference mixture and the low-rank model; ``cat.designs``) and the IRT design alone
against the best random row of the same run (random items scored by plug-in, ridge,
mixture, low-rank or chosen, and random-raw), with intervals from the training subjects
only.

    python benchmarks/bench_validate.py                    # both sets, 30/100/250 items
    python benchmarks/bench_validate.py --data oll-arc --lengths 30,100

- ``../shared/data/mmlu-pro``: 32 LLMs x 12,032 items, leave-one-out, 3PL; the IRT
  design is content-balanced over the 14 categories ("mfi+cb", shares of the pool).
- ``../shared/data/oll-arc``: 320 LLMs x 735 items, 30% held out, 3PL.
- ``simulated``: 1,526 subjects x 1,351 items drawn from a 3PL (``irt.simulate``, fixed
  seed), the size of the leaderboard of issue 30; 30% held out, the default policies
  only (what ``cat validate`` runs with no --policies), and the seconds it took. Issue
  30's target: under 5 minutes on a 2-core machine. ``--subjects N`` draws fewer.

    python benchmarks/bench_validate.py --data simulated
    python benchmarks/bench_validate.py --data simulated --subjects 400
    python benchmarks/bench_validate.py --data simulated --train-size 30 --splits 5

Issue 13's targets: the default beats the best random row on both τ and MAE at every
length; at 250 items τ >= 0.95 and MAE <= 0.012 (MMLU-Pro), <= 0.004 (ARC); coverage of
the default's 90% interval 0.85–0.95, per scenario too on MMLU-Pro (rows that predict per
scenario print each scenario's coverage, mean and lowest, and MAE). Information-proportional
selection ("proportional", content-balanced where items have scenarios) is replayed
beside the default, scored by every predictor.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

from cat.engine.registry import BALANCED_SUFFIX, DEFAULT, DesignName, PolicyName
from cat.pools.scenarios import read_item_scenarios
from cat.prediction.replay import CHOSEN, PLUG_IN
from cat.prediction.validation import validate
from cat.prediction.verdicts import ValidationRow, verdicts
from cat.validation.report import validate as validate_report
from irt.responses import ResponseMatrix
from irt.simulate import random_params, simulate_responses
from itempool.formats.responses import read_responses

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
SEED = 0
SIMULATED_SUBJECTS, SIMULATED_ITEMS = 1526, 1351
RUNS: dict[str, tuple[str, dict[str, Any]]] = {
    "mmlu-pro": ("MMLU-Pro, leave-one-out", dict(holdout=None, leave_one_out=True)),
    "oll-arc": ("Open LLM Leaderboard ARC, 30% held out", dict(holdout=0.3)),
}


def _sd(x: float | None) -> str:
    return "" if x is None else f"±{x:.3f}"


def _table(name: str, rows: list[ValidationRow], seconds: float, extra: list[str]) -> None:
    print(f"\n{name}  ({seconds:.0f} s)")
    print(
        f"{'policy':<18}{'predictor':<10}{'length':>7}{'tau':>14}{'MAE':>15}"
        f"{'coverage':>10}{'θ-only':>8}{'per scenario: coverage mean/min, MAE':>38}"
    )
    for r in sorted(rows, key=lambda r: (r.length, r.policy, r.predictor)):
        theta = "" if r.coverage_theta_only is None else f"{r.coverage_theta_only:.2f}"
        print(
            f"{r.policy:<18}{r.predictor:<10}{r.length:>7}"
            f"{r.kendall_tau:>8.3f}{_sd(r.kendall_tau_sd):>6}{r.mae:>9.4f}{_sd(r.mae_sd):>6}"
            f"{r.coverage:>10.2f}{theta:>8}{_per_scenario(r):>38}"
        )
    print("\nthe default, the IRT design and proportional selection against the best random")
    print("row of the same run:")
    by_key = {(r.policy, r.length, r.predictor): r for r in rows}
    compared = [
        *verdicts(rows),
        *verdicts(rows, DesignName.IRT.value, PLUG_IN),  # the IRT design alone
        *(v for p in extra for v in verdicts(rows, p, PLUG_IN)),
    ]
    for verdict in sorted(compared, key=lambda v: v.length):
        predictor = CHOSEN if verdict.policy == DEFAULT else PLUG_IN
        row = by_key[(verdict.policy, verdict.length, predictor)]
        print(f"  {verdict.line()}; coverage {row.coverage:.2f}{_scenario_note(row)}")


def _per_scenario(row: ValidationRow) -> str:
    if row.scenario_coverage_mean is None or row.scenario_mae_mean is None:
        return ""
    return (
        f"{row.scenario_coverage_mean:.2f}/{row.scenario_coverage_min or 0:.2f}, "
        f"{row.scenario_mae_mean:.4f}"
    )


def _scenario_note(row: ValidationRow) -> str:
    if row.scenario_coverage_mean is None:
        return ""
    return (
        f", per scenario {row.scenario_coverage_mean:.2f} "
        f"(lowest {row.scenario_coverage_min or 0:.2f})"
    )


def simulated(n_subjects: int) -> ResponseMatrix:
    """A leaderboard-sized matrix from a 3PL: 1,351 items, abilities N(0, 1), seed fixed."""
    rng = np.random.default_rng(20240530)
    params = random_params(SIMULATED_ITEMS, rng, "3pl")
    return simulate_responses(params, rng.normal(0.0, 1.0, n_subjects), rng)


def run_simulated(args: argparse.Namespace, lengths: list[int]) -> None:
    """``cat validate`` on the simulated leaderboard, as the command runs it (the default
    policies), timed."""
    data = simulated(args.subjects)
    split: dict[str, Any] = (
        dict(holdout=0.3)
        if args.train_size is None
        else dict(train_size=args.train_size, splits=args.splits)
    )
    t0 = time.perf_counter()
    report = validate_report(
        data, lengths=lengths, policies=[DEFAULT], seed=SEED, repeats=args.repeats, **split
    )
    seconds = time.perf_counter() - t0
    how = ", ".join(f"{k} {v}" for k, v in split.items())
    _table(
        f"simulated 3PL, {data.n_subjects:,} x {data.n_items:,}, {how}", report.results, seconds, []
    )
    print(f"\nseconds: {seconds:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=[*sorted(RUNS), "simulated"], action="append")
    parser.add_argument("--lengths", default="30,100,250")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--subjects", type=int, default=SIMULATED_SUBJECTS)
    parser.add_argument("--train-size", type=int, default=None)
    parser.add_argument("--splits", type=int, default=1)
    args = parser.parse_args()
    lengths = [int(x) for x in args.lengths.split(",")]
    if "simulated" in (args.data or []):
        run_simulated(args, lengths)
    real = [d for d in args.data or list(RUNS) if d != "simulated"]
    if real and not SHARED.is_dir():
        raise SystemExit(f"shared data not found at {SHARED}")
    for folder in real:
        title, split = RUNS[folder]
        data = read_responses(SHARED / folder / "responses.csv.gz")
        items = SHARED / folder / "items.csv.gz"
        scenario = (
            read_item_scenarios(items, data.item_ids, "category").codes if items.exists() else None
        )
        t0 = time.perf_counter()
        # Information-proportional selection scored by every predictor, beside the default.
        proportional = PolicyName.PROPORTIONAL.value + (BALANCED_SUFFIX if scenario else "")
        predictions = validate(
            data,
            "3pl",
            [DEFAULT, proportional],
            lengths,
            np.random.default_rng(SEED),
            scenario=scenario,
            repeats=args.repeats,
            **split,
        )
        rows = [ValidationRow.model_validate(p.metrics()) for p in predictions]
        _table(title, rows, time.perf_counter() - t0, [proportional])


if __name__ == "__main__":
    main()
