"""Replay validation: calibrate on some subjects, replay the others' recorded answers
through the adaptive test, and compare the predicted full-pool accuracy with the truth.

Intervals are cross-conformal: each held-out subject's 90% interval is its prediction
± the 90% quantile of the absolute errors of the *other* held-out subjects at the same
policy and length (the jackknife form of split conformal prediction), so no subject's
own answers enter its interval and no extra calibration is needed.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.stats import kendalltau, spearmanr

from cat.engine.estimators import MLEstimator
from cat.engine.registry import make_policy
from cat.engine.selection import PoolInfo
from cat.engine.simulation import CATDesign, CATResult, replay_cat
from cat.engine.stopping import StoppingRule
from cat.errors import CatError
from cat.prediction.conformal import conformal_quantile
from cat.prediction.predictors import reference_offset, ridge_accuracy
from irt.em import EMCalibrator
from irt.errors import ConvergenceWarning
from irt.models import ItemParams, ModelKind, probability
from irt.responses import ResponseMatrix
from irt.scoring import AbilityMethod, score_abilities
from irt.types import FloatArray, IntArray

RANDOM_RAW = "random-raw"
PLUG_IN, RIDGE, RAW, CHOSEN = "plug-in", "ridge", "raw", "chosen"
_Z90 = 1.6448536269514722

#: Called with (what is being done, fraction done).
Progress = Callable[[str, float], None]


@dataclass(frozen=True)
class Predictions:
    """Held-out subjects' predicted and true full-pool accuracy for one policy and length."""

    policy: str
    length: int
    predictor: str  # "plug-in", "ridge", "chosen" (the better of the two) or "raw"
    subject: IntArray  # rows of the response matrix
    predicted: FloatArray  # (R, E): R repeats (random-raw) or 1
    truth: FloatArray  # (E,)
    half_width: FloatArray  # (R, E), of the 90% interval

    def metrics(self) -> dict[str, float | str | int]:
        """Each figure averaged over the repeats."""
        rows = []
        for pred, half in zip(self.predicted, self.half_width, strict=True):
            err = pred - self.truth
            enough = len(err) > 2
            rows.append(
                (
                    kendalltau(self.truth, pred)[0] if enough else np.nan,
                    spearmanr(self.truth, pred)[0] if enough else np.nan,
                    np.mean(np.abs(err)),
                    np.sqrt(np.mean(err**2)),
                    np.mean(np.abs(err) <= half),
                    2 * np.mean(half),
                )
            )
        tau, rho, mae, rmse, coverage, width = np.nanmean(np.array(rows, dtype=float), axis=0)
        return {
            "policy": self.policy,
            "length": self.length,
            "predictor": self.predictor,
            "n_subjects": len(self.truth),
            "kendall_tau": float(tau),
            "spearman": float(rho),
            "mae": float(mae),
            "rmse": float(rmse),
            "coverage": float(coverage),
            "mean_interval_width": float(width),
        }


def plug_in_accuracy(
    params: ItemParams, responses: ResponseMatrix, result: CATResult, offset: float = 0.0
) -> FloatArray:
    """Observed right answers on the items given plus Σ (P_j(θ̂) − ``offset``) over every
    other item the subject answered, over the number it answered; ``offset`` is the
    references' drift (``cat.prediction.predictors.reference_offset``)."""
    observed = responses.observed
    prob = probability(result.theta_hat, params)
    given = np.zeros_like(observed)
    rows = np.repeat(np.arange(len(result.items)), result.items.shape[1])
    cols = result.items.ravel()
    keep = cols >= 0
    given[rows[keep], cols[keep]] = True
    rest = observed & ~given
    right_given = (result.right * (result.items >= 0)).sum(axis=1)
    n_rest = rest.sum(axis=1)
    expected_rest = np.clip((prob * rest).sum(axis=1) - offset * n_rest, 0.0, n_rest)
    return np.asarray((right_given + expected_rest) / observed.sum(axis=1), dtype=np.float64)


def random_raw(
    responses: ResponseMatrix, length: int, rng: np.random.Generator, repeats: int = 20
) -> tuple[FloatArray, FloatArray]:
    """Plain accuracy on ``length`` random answered items, per repeat (R, E), and the
    half-width of its 90% normal interval (with the finite-population correction)."""
    observed = responses.observed
    right = responses.values == 1
    n_answered = observed.sum(axis=1)
    k = np.minimum(length, n_answered)
    acc = np.empty((repeats, responses.n_subjects))
    for r in range(repeats):
        keys = np.where(observed, rng.random(observed.shape), -1.0)
        top = np.argsort(-keys, axis=1)
        ranks = np.empty_like(top)
        np.put_along_axis(ranks, top, np.arange(observed.shape[1])[None, :], axis=1)
        pick = ranks < k[:, None]
        acc[r] = (right & pick).sum(axis=1) / np.maximum(k, 1)
    fpc = np.sqrt(np.maximum(n_answered - k, 0) / np.maximum(n_answered - 1, 1))
    half = _Z90 * np.sqrt(np.clip(acc * (1 - acc), 1e-12, None) / np.maximum(k, 1)) * fpc
    return acc, half


def _ridge_predictions(
    responses: ResponseMatrix, train_rows: IntArray, test_rows: IntArray, result: CATResult
) -> FloatArray:
    """Ridge-across-references prediction for each replayed subject
    (``cat.prediction.predictors``)."""
    ref_values = (responses.values[train_rows] == 1).astype(np.float64)
    ref_observed = responses.observed[train_rows]
    out = np.empty(len(test_rows))
    for k, row in enumerate(test_rows):
        given = result.items[k][result.items[k] >= 0]
        answers = (responses.values[row, given] == 1).astype(np.float64)
        answered = np.flatnonzero(responses.observed[row])
        out[k] = ridge_accuracy(ref_values, ref_observed, given, answers, answered)
    return out


def conformal_half_width(abs_err: FloatArray) -> FloatArray:
    """For each subject, the 90% quantile of the other subjects' absolute errors (with
    the finite-sample correction ⌈(n + 1)·0.9⌉ / n of split conformal prediction)."""
    n = len(abs_err)
    if n < 2:
        return np.full(n, np.inf)
    return np.array([conformal_quantile(np.delete(abs_err, i)) for i in range(n)])


def _chosen(predictions: list[Predictions]) -> list[Predictions]:
    """Per policy and length, each subject gets the predictor (plug-in or ridge) with the
    smaller mean absolute error over the *other* held-out subjects, and the conformal
    interval of that predictor's errors on them: which predictor suits a data set
    (few references favour the plug-in, hundreds the ridge) is learned without the
    subject's own answers."""
    by_key = {(p.policy, p.length, p.predictor): p for p in predictions}
    out = []
    for (policy, length, predictor), plug in by_key.items():
        ridge = by_key.get((policy, length, RIDGE))
        if predictor != PLUG_IN or ridge is None:
            continue
        errors = np.abs(np.stack([plug.predicted[0], ridge.predicted[0]]) - plug.truth)  # (2, E)
        n = errors.shape[1]
        others_mae = (errors.sum(axis=1, keepdims=True) - errors) / max(n - 1, 1)
        pick = others_mae.argmin(axis=0)  # 0 plug-in, 1 ridge
        columns = np.arange(n)
        predicted = np.stack([plug.predicted[0], ridge.predicted[0]])[pick, columns]
        half = np.stack([plug.half_width[0], ridge.half_width[0]])[pick, columns]
        out.append(
            Predictions(
                policy, length, CHOSEN, plug.subject, predicted[None, :], plug.truth, half[None, :]
            )
        )
    return out


def calibrate_quietly(train: ResponseMatrix, model: ModelKind) -> ItemParams:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return EMCalibrator(model, standard_errors=False).fit(train).params_


def training_offset(params: ItemParams, train: ResponseMatrix) -> float:
    """The plug-in's drift measured on the training subjects at their ML abilities."""
    abilities = score_abilities(train, params, AbilityMethod.ML)
    return reference_offset(params, abilities.theta, train.accuracy(), train.observed)


def splits(
    n_subjects: int,
    holdout: float | None,
    leave_one_out: bool,
    rng: np.random.Generator,
    folds: int | None = None,
) -> list[tuple[IntArray, IntArray]]:
    """(train rows, held-out rows) pairs: one random split, one per subject, or ``folds``
    random folds of about equal size, each held out once."""
    everyone = np.arange(n_subjects)
    if leave_one_out:
        return [(np.delete(everyone, i), np.array([i])) for i in everyone]
    if folds is not None:
        if not 2 <= folds <= n_subjects // 2:
            raise CatError(
                f"{folds} folds of {n_subjects} subjects: use 2 to {n_subjects // 2} folds"
            )
        parts = np.array_split(rng.permutation(n_subjects), folds)
        return [(np.sort(np.setdiff1d(everyone, part)), np.sort(part)) for part in parts]
    if holdout is None or not 0 < holdout < 1:
        raise CatError(f"--holdout must be a share between 0 and 1, got {holdout}")
    n_test = round(holdout * n_subjects)
    if n_test < 3 or n_subjects - n_test < 3:
        raise CatError(
            f"a holdout of {holdout} leaves {n_test} test and {n_subjects - n_test} training "
            "subjects; each side needs at least 3 (try --leave-one-out)"
        )
    perm = rng.permutation(n_subjects)
    return [(np.sort(perm[n_test:]), np.sort(perm[:n_test]))]


def validate(
    responses: ResponseMatrix,
    model: ModelKind | str,
    policies: list[str],
    lengths: list[int],
    rng: np.random.Generator,
    holdout: float | None = 0.3,
    leave_one_out: bool = False,
    progress: Progress | None = None,
    scenario: tuple[int, ...] | None = None,
    folds: int | None = None,
) -> list[Predictions]:
    """Predictions of every held-out subject for each policy and length, plus the
    random-raw baseline; intervals from the other held-out subjects' errors.
    ``scenario`` (a code per item) lets policies named "...+cb" balance content."""
    kind = ModelKind(model)
    if not lengths or min(lengths) < 1:
        raise CatError("give test lengths of at least 1 item")
    for name in policies:  # unknown names fail before any calibration
        make_policy(name, max(lengths), scenario=scenario)
    parts = splits(responses.n_subjects, holdout, leave_one_out, rng, folds)
    truth_all = responses.accuracy()
    # (policy, length, predictor) -> [(rows, predictions (R, E), half-widths (R, E) or None)]
    collected: dict[tuple[str, int, str], list[tuple[IntArray, FloatArray, FloatArray | None]]] = {}
    for n, (train_rows, test_rows) in enumerate(parts):
        if progress is not None:
            progress(f"calibrating split {n + 1} of {len(parts)}", n / len(parts))
        train = responses.subset(subjects=train_rows)
        params = calibrate_quietly(train, kind)
        offset = training_offset(params, train)
        pool = PoolInfo.build(params)
        test = responses.subset(subjects=test_rows)
        for name in policies:
            for length in lengths:
                policy = make_policy(name, length, scenario=scenario)
                design = CATDesign(policy, MLEstimator(), StoppingRule(length))
                result = replay_cat(params, test, design, rng, pool)
                pred = plug_in_accuracy(params, test, result, offset)
                collected.setdefault((name, length, PLUG_IN), []).append(
                    (test_rows, pred[None, :], None)
                )
                ridge = _ridge_predictions(responses, train_rows, test_rows, result)
                collected.setdefault((name, length, RIDGE), []).append(
                    (test_rows, ridge[None, :], None)
                )
        for length in lengths:
            acc, half = random_raw(test, length, rng)
            collected.setdefault((RANDOM_RAW, length, RAW), []).append((test_rows, acc, half))
    out: list[Predictions] = []
    for (name, length, predictor), pieces in collected.items():
        rows = np.concatenate([r for r, _, _ in pieces])
        pred = np.concatenate([p for _, p, _ in pieces], axis=1)
        truth = truth_all[rows]
        if name == RANDOM_RAW:
            # The baseline's interval is its own sampling interval, as a user would use it.
            half = np.concatenate([h for _, _, h in pieces if h is not None], axis=1)
        else:
            half = conformal_half_width(np.abs(pred[0] - truth))[None, :]
        out.append(Predictions(name, length, predictor, rows, pred, truth, half))
    out.extend(_chosen(out))
    if progress is not None:
        progress("done", 1.0)
    return out
