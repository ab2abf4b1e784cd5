"""The multidimensional designs' selection criteria on MMLU-Pro
(``../shared/data/mmlu-pro``: 32 LLMs x 12,032 items, 14 categories), each beside random
items scored by the same multidimensional predictor in the same run.

Per fold (K folds of the models, seed 0): the 3PL and the multidimensional model are
fitted on the training models only; every held-out model is then replayed under each
criterion (``cat assess --criterion``) and under random items (``--repeats`` draws),
all scored by that model's predictor. Printed per criterion and length: Kendall τ and
MAE of the predicted full-pool accuracy, the per-category MAE, and the share of held-out
models whose absolute error is below random's (mean over draws).

    python benchmarks/bench_criteria.py                       # mirt, 8 folds
    python benchmarks/bench_criteria.py --model bifactor --folds 4
"""

from __future__ import annotations

import argparse
import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

from cat.designs.low_rank import scored_test
from cat.designs.models import ReferenceModels
from cat.designs.per_scenario import scenario_accuracy, scenario_masks, scenario_truth
from cat.engine.registry import CriterionName
from cat.pools.scenarios import read_item_scenarios
from cat.prediction.replay import calibrate_split
from cat.prediction.validation import splits
from irt.errors import ConvergenceWarning
from irt.models import ModelKind
from itempool.formats.responses import read_responses

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "mmlu-pro"
SEED = 0
RANDOM = "random"


def _criteria(model: str) -> list[str]:
    names = [c.value for c in CriterionName]
    return names if model == "bifactor" else [c for c in names if c != CriterionName.GENERAL]


def _random_items(can_answer: np.ndarray, length: int, rng: np.random.Generator) -> np.ndarray:
    given = np.zeros_like(can_answer)
    for e in range(len(can_answer)):
        cols = np.flatnonzero(can_answer[e])
        given[e, rng.choice(cols, size=min(length, cols.size), replace=False)] = True
    return given


def run(model: str, folds: int, lengths: list[int], repeats: int) -> None:
    data = read_responses(DATA / "responses.csv.gz")
    groups = read_item_scenarios(DATA / "items.csv.gz", data.item_ids, "category")
    scenario = groups.codes
    masks = scenario_masks(scenario)
    truth = data.accuracy()
    truth_s = scenario_truth(data, scenario)
    criteria = _criteria(model)
    rng = np.random.default_rng(SEED)
    parts = splits(data.n_subjects, None, False, rng, folds)
    # (policy, length) -> per held-out model: prediction (E,), per-category (E, S);
    # random: (R, E) and (R, E, S).
    pred: dict[tuple[str, int], list[np.ndarray]] = {}
    pred_s: dict[tuple[str, int], list[np.ndarray]] = {}
    rows: list[np.ndarray] = []
    t0 = time.perf_counter()
    for n, (train_rows, test_rows) in enumerate(parts):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            calibrated = calibrate_split(data, ModelKind.THREE_PL, train_rows)
            models: ReferenceModels = calibrated.with_model(model, scenario)
        test = data.subset(subjects=test_rows)
        can, right = test.observed, (test.values == 1).astype(np.float64)
        rows.append(test_rows)
        for criterion in criteria:
            chosen = replace(models, criterion=CriterionName(criterion))
            expected: dict[int, tuple[np.ndarray, np.ndarray]] = {}
            by_length = chosen.replay(model, can, right, lengths, expectations=expected)
            for length in lengths:
                given, chances = expected[length]
                pred.setdefault((criterion, length), []).append(by_length[length])
                pred_s.setdefault((criterion, length), []).append(
                    scenario_accuracy(masks, can, given, right, chances)
                )
        assert models.mirt is not None
        for length in lengths:
            draws, draws_s = [], []
            for _ in range(repeats):
                given = _random_items(can, length, rng)
                state = scored_test(models.mirt, can, given, right)
                draws.append(state.predicted_accuracy())
                draws_s.append(
                    scenario_accuracy(masks, can, given, right, state.item_expectations())
                )
            pred.setdefault((RANDOM, length), []).append(np.stack(draws))
            pred_s.setdefault((RANDOM, length), []).append(np.stack(draws_s))
        print(f"fold {n + 1}/{len(parts)} done ({time.perf_counter() - t0:.0f} s)", flush=True)
    order = np.concatenate(rows)
    print(
        f"\nCriteria of the {model} design, MMLU-Pro, {folds} folds, random items scored by "
        f"the same {model} predictor ({repeats} draws); {time.perf_counter() - t0:.0f} s"
    )
    print(
        f"{'criterion':<11}{'length':>7}{'tau':>8}{'MAE':>9}{'per-cat MAE':>13}{'beats random':>14}"
    )
    for length in lengths:
        random_err = np.abs(np.concatenate(pred[(RANDOM, length)], axis=1) - truth[order])
        for policy in [*criteria, RANDOM]:
            if policy == RANDOM:
                values = np.concatenate(pred[(policy, length)], axis=1)  # (R, E)
                per = np.concatenate(pred_s[(policy, length)], axis=1)  # (R, E, S)
                tau = float(np.mean([kendalltau(v, truth[order])[0] for v in values]))
                mae = float(np.abs(values - truth[order]).mean())
                cat_mae = float(np.nanmean(np.abs(per - truth_s[order])))
                beats = ""
            else:
                value = np.concatenate(pred[(policy, length)])
                per_c = np.concatenate(pred_s[(policy, length)])
                tau = float(kendalltau(value, truth[order])[0])
                err = np.abs(value - truth[order])
                mae = float(err.mean())
                cat_mae = float(np.nanmean(np.abs(per_c - truth_s[order])))
                beats = f"{float(np.mean(err[None, :] < random_err)):.2f}"
            print(f"{policy:<11}{length:>7}{tau:>8.3f}{mae:>9.4f}{cat_mae:>13.4f}{beats:>14}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=("mirt", "bifactor"), default="mirt")
    parser.add_argument("--folds", type=int, default=8)
    parser.add_argument("--lengths", default="30,100,250")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if not DATA.is_dir():
        raise SystemExit(f"MMLU-Pro data not found at {DATA}")
    run(args.model, args.folds, [int(x) for x in args.lengths.split(",")], args.repeats)


if __name__ == "__main__":
    main()
