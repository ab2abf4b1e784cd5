"""Multidimensional models on MMLU-Pro (``../shared/data/mmlu-pro``: 32 LLMs x 12,032
items, 14 categories), each beside the unidimensional 3PL of the same run.

1. Full-data fit: Kendall τ between each model's expected accuracy (at each LLM's own
   estimate from all its answers) and the observed accuracy; log-likelihood, AIC, BIC,
   seconds. Issue 14's target: τ >= 0.97 (3PL: 0.96).
2. Replay validation, leave-one-out by default (``--folds K`` for K folds): the IRT
   design (3PL, content-balanced MFI, plug-in), the multidimensional design and the
   default (the design of smallest training-only error) at 30/100/250 items: τ, MAE,
   per-category MAE and the per-category 90% intervals' coverage, all on held-out
   models. Targets at 250 items: per-category MAE at least 20% below the IRT design's,
   overall τ >= 0.95, per-category coverage 0.85–0.95.

    python benchmarks/bench_multidimensional.py                 # mirt, leave-one-out
    python benchmarks/bench_multidimensional.py --model bifactor --folds 4
    python benchmarks/bench_multidimensional.py --fit-only
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

from cat.designs.low_rank import LowRankModel, scored_test
from cat.pools.mirt_calibration import fit_multidimensional, information_criteria, n_parameters
from cat.pools.scenarios import read_item_scenarios
from cat.prediction.verdicts import ValidationRow
from cat.validation.report import validate
from irt.em import EMCalibrator
from irt.errors import ConvergenceWarning
from irt.models import ModelKind, probability
from irt.scoring import AbilityMethod, score_abilities
from itempool.formats.responses import read_responses

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
DATA = SHARED / "mmlu-pro"
SEED = 0


def _tau(expected: np.ndarray, observed: np.ndarray) -> float:
    return float(kendalltau(expected, observed)[0])


def full_data(model: str) -> None:
    data = read_responses(DATA / "responses.csv.gz")
    groups = read_item_scenarios(DATA / "items.csv.gz", data.item_ids, "category")
    observed, accuracy = data.observed, data.accuracy()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        uni = EMCalibrator(ModelKind.THREE_PL, standard_errors=False).fit(data)
    uni_seconds = time.perf_counter() - t0
    theta = score_abilities(data, uni.params_, AbilityMethod.ML).theta
    p = probability(theta, uni.params_)
    uni_expected = (p * observed).sum(axis=1) / observed.sum(axis=1)
    k = n_parameters(ModelKind.THREE_PL, data.n_items)
    crit = information_criteria(uni.loglik_, k, data.n_subjects)
    print(f"\nFull-data fit on MMLU-Pro ({data.n_subjects} x {data.n_items:,})")
    print(f"{'model':<24}{'seconds':>9}{'loglik':>14}{'AIC':>13}{'BIC':>13}{'tau':>8}")
    print(
        f"{'3PL':<24}{uni_seconds:>9.1f}{uni.loglik_:>14.1f}{crit['aic']:>13.1f}"
        f"{crit['bic']:>13.1f}{_tau(uni_expected, accuracy):>8.3f}"
    )
    t0 = time.perf_counter()
    fit = fit_multidimensional(data, model, groups, unidimensional=uni.params_)
    seconds = time.perf_counter() - t0
    right = ((data.values == 1) & observed).astype(float)
    state = scored_test(LowRankModel.from_mirt(fit.params), observed, observed, right)
    expected = (fit.params.probability(state.u) * observed).sum(axis=1) / observed.sum(axis=1)
    crit = fit.criteria(data.n_subjects)
    label = f"{model} ({len(fit.params.factors)} factors)"
    print(
        f"{label:<24}{seconds:>9.1f}{fit.loglik:>14.1f}{crit['aic']:>13.1f}"
        f"{crit['bic']:>13.1f}{_tau(expected, accuracy):>8.3f}"
    )
    print("(tau: expected accuracy at each model's MAP / ML estimate from all its answers)")


def replay(model: str, folds: int | None, lengths: list[int]) -> None:
    t0 = time.perf_counter()
    report = validate(
        DATA / "responses.csv.gz",
        lengths=lengths,
        policies=("default", "irt", model),
        model=model,
        leave_one_out=folds is None,
        folds=folds,
        seed=SEED,
        scenarios=DATA / "items.csv.gz",
        scenario_column="category",
        repeats=1,
    )
    split = "leave-one-out" if folds is None else f"{folds} folds"
    print(f"\nReplay validation, MMLU-Pro, {split} ({time.perf_counter() - t0:.0f} s)")
    print(
        f"{'policy':<10}{'length':>7}{'tau':>8}{'MAE':>9}{'coverage':>10}"
        f"{'per-category MAE':>18}{'coverage mean/min':>19}"
    )
    rows: dict[tuple[str, int], ValidationRow] = {}
    for r in report.results:
        if r.policy in ("default", "irt", model):
            rows[(r.policy, r.length)] = r
    for (policy, length), r in sorted(rows.items(), key=lambda x: (x[0][1], x[0][0])):
        per = "" if r.scenario_mae_mean is None else f"{r.scenario_mae_mean:.4f}"
        cov = (
            ""
            if r.scenario_coverage_mean is None
            else f"{r.scenario_coverage_mean:.2f}/{r.scenario_coverage_min or 0:.2f}"
        )
        print(
            f"{policy:<10}{length:>7}{r.kendall_tau:>8.3f}{r.mae:>9.4f}{r.coverage:>10.2f}"
            f"{per:>18}{cov:>19}"
        )
    for length in lengths:
        base, multi = rows.get(("irt", length)), rows.get((model, length))
        if base is None or multi is None or not base.scenario_mae_mean:
            continue
        cut = 1 - (multi.scenario_mae_mean or 0) / base.scenario_mae_mean
        print(f"{length} items: {model} per-category MAE {cut:.1%} below irt's")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=("mirt", "bifactor"), default="mirt")
    parser.add_argument("--folds", type=int, default=None, help="K folds (default: LOO)")
    parser.add_argument("--lengths", default="30,100,250")
    parser.add_argument("--fit-only", action="store_true")
    args = parser.parse_args()
    if not DATA.is_dir():
        raise SystemExit(f"MMLU-Pro data not found at {DATA}")
    full_data(args.model)
    if not args.fit_only:
        replay(args.model, args.folds, [int(x) for x in args.lengths.split(",")])


if __name__ == "__main__":
    main()
