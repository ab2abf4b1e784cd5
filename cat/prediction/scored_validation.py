"""Replay validation on scores 0..m: what ``cat validate --model graded|gpcm|sequential|nominal``
runs, with the same rows, baselines and honesty as on 0/1 answers
(``cat.prediction.validation``).

Each split calibrates the scored pool on its training subjects and replays the held-out
subjects' recorded scores: under the "default" (what ``cat assess`` runs on a scored
pool: the IRT design, MFI balanced by scenario when given, ML θ), under any other policy
asked for, and always under "random" (``repeats`` draws) scored by the same predictor —
the scores given plus the expected shares of the rest, less the training subjects'
drift (``cat.prediction.scored_cross_fit``) — and "random-raw" (the mean share of the
random items alone). A held-out subject's 90% interval is its prediction ± the
split-conformal half-width of the training subjects' own cross-fitted errors at the same
policy and length; the default's is the θ-only interval widened to it, as ``cat assess``
widens it. No subject's scores enter its own interval, so coverage can fail.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from cat.designs.per_scenario import scenario_accuracy, scenario_masks
from cat.engine.registry import (
    DEFAULT,
    DEFAULT_ESTIMATOR,
    PolicyName,
    default_selection,
    make_graded_estimator,
    make_policy,
)
from cat.engine.simulation import CATDesign, CATResult, replay_cat
from cat.engine.stopping import StoppingRule
from cat.errors import CatError
from cat.prediction.conformal import conformal_quantile
from cat.prediction.intervals import Z90, theta_and_chance, widen
from cat.prediction.predictions import Predictions
from cat.prediction.replay import CHOSEN, PLUG_IN, RANDOM_RAW, RAW, is_random
from cat.prediction.scored_cross_fit import (
    ScoredCalibration,
    calibrate_scored_split,
    mean_shares,
    predicted_shares,
    score_shares,
    scored_cross_fit_errors,
)
from cat.prediction.validation import splits
from irt.polytomous import ItemType
from irt.polytomous_responses import PolytomousResponses
from irt.types import BoolArray, FloatArray, IntArray
from itempool import PredictionErrors

RANDOM = PolicyName.RANDOM.value

#: Called with (what is being done, fraction done).
Progress = Callable[[str, float], None]


def validate_scored(
    responses: PolytomousResponses,
    item_types: Mapping[str, ItemType] | None,
    policies: Sequence[str],
    lengths: Sequence[int],
    rng: np.random.Generator,
    *,
    holdout: float | None = 0.3,
    leave_one_out: bool = False,
    folds: int | None = None,
    scenario: tuple[int, ...] | None = None,
    repeats: int = 5,
    interval_folds: int = 5,
    progress: Progress | None = None,
) -> list[Predictions]:
    """Predictions of every held-out subject for each policy ("default": the IRT design
    of ``cat assess``), "random" (always, ``repeats`` draws) and length, and the
    random-raw baseline; intervals from each split's training subjects only."""
    if not lengths or min(lengths) < 1:
        raise CatError("give test lengths of at least 1 item")
    if repeats < 1:
        raise CatError(f"--repeats must be at least 1, got {repeats}")
    run = list(dict.fromkeys([*policies, RANDOM]))
    for name in run:  # an unknown policy fails before any calibration
        if name != DEFAULT:
            make_policy(name, max(lengths), scenario=scenario)
    lengths = sorted({min(n, responses.n_items) for n in lengths})
    parts = splits(responses.n_subjects, holdout, leave_one_out, rng, folds)
    truth = mean_shares(responses)
    shares = score_shares(responses)
    masks = scenario_masks(scenario) if scenario else None
    names = tuple(str(k) for k in range(int(max(scenario)) + 1)) if scenario else None
    collected: dict[tuple[str, int, str], list[Predictions]] = {}
    for n, (train_rows, test_rows) in enumerate(parts):
        if progress is not None:
            progress(f"split {n + 1} of {len(parts)}", n / len(parts))
        train = responses.subset(subjects=train_rows)
        test = responses.subset(subjects=test_rows)
        calibrated = calibrate_scored_split(train, item_types)
        inner_folds = min(interval_folds, len(train_rows) // 2)
        for name in run:
            selection = default_selection(scenario) if name == DEFAULT else name
            inner = scored_cross_fit_errors(
                train,
                item_types,
                inner_folds,
                lengths,
                int(rng.integers(2**31)),
                scenario,
                names,
                policy=selection,
            )
            for length in lengths:
                half = conformal_quantile(np.abs(np.asarray(inner.errors[str(length)])))
                draws = repeats if is_random(selection) else 1
                results = [
                    _replay(calibrated, test, selection, length, scenario, rng)
                    for _ in range(draws)
                ]
                key = (name, length, CHOSEN if name == DEFAULT else PLUG_IN)
                piece = _predictions(
                    key, calibrated, test, test_rows, results, truth, half, name == DEFAULT
                )
                if name == DEFAULT and masks is not None and inner.scenario_errors:
                    piece = _with_scenarios(
                        piece,
                        calibrated,
                        test,
                        results[0],
                        masks,
                        shares[test_rows],
                        inner,
                        length,
                    )
                collected.setdefault(key, []).append(piece)
        for length in lengths:
            key = (RANDOM_RAW, length, RAW)
            collected.setdefault(key, []).append(
                _random_raw(key, test, test_rows, truth, length, rng, repeats)
            )
    if progress is not None:
        progress("done", 1.0)
    return [Predictions.joined(pieces) for pieces in collected.values()]


def _replay(
    calibrated: ScoredCalibration,
    test: PolytomousResponses,
    selection: str,
    length: int,
    scenario: tuple[int, ...] | None,
    rng: np.random.Generator,
) -> CATResult:
    design = CATDesign(
        make_policy(selection, length, scenario=scenario),
        make_graded_estimator(DEFAULT_ESTIMATOR.value),
        StoppingRule(length),
    )
    return replay_cat(calibrated.params, test, design, rng, calibrated.pool)


def _predictions(
    key: tuple[str, int, str],
    calibrated: ScoredCalibration,
    test: PolytomousResponses,
    rows: IntArray,
    results: list[CATResult],
    truth: FloatArray,
    half: float,
    widen_theta_only: bool,
) -> Predictions:
    """One row's predictions (R draws × E subjects) with their intervals: ± ``half``, or
    (``widen_theta_only``, the default) the θ-only interval widened to it."""
    predicted, low, high, t_low, t_high = [], [], [], [], []
    for result in results:
        value, _, _ = predicted_shares(calibrated, test, result)
        bounds = _theta_only(calibrated, test, result, value)
        predicted.append(value)
        t_low.append(bounds[0])
        t_high.append(bounds[1])
        if widen_theta_only:
            lo, hi = widen(value, bounds[0], bounds[1], half)
        else:
            lo, hi = value - half, value + half
        low.append(lo)
        high.append(hi)
    shape = (len(results), len(rows))
    return Predictions(
        *key,
        rows,
        np.array(predicted),
        truth[rows],
        np.full(shape, half),
        np.array(low),
        np.array(high),
        np.array(t_low),
        np.array(t_high),
    )


def _theta_only(
    calibrated: ScoredCalibration,
    test: PolytomousResponses,
    result: CATResult,
    value: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    """The prediction at the ends of θ̂ ± z·SE, combined with the chance in the scores
    of the answered items not given (their share variance at θ̂), as ``cat assess``."""
    se = np.where(np.isfinite(result.se), result.se, 1e6)
    ends = []
    for theta in (result.theta_hat - Z90 * se, result.theta_hat + Z90 * se):
        moved = CATResult(
            theta, se, result.items, result.right, result.n_items, result.stop_reason, 0.0
        )
        ends.append(predicted_shares(calibrated, test, moved)[0])
    params = calibrated.params
    observed = test.observed
    _, given, _ = predicted_shares(calibrated, test, result)
    rest = observed & ~given
    # Var[X_j | θ̂] on the share scale, (E, J).
    variance = params.variance(result.theta_hat) / params.max_scores.astype(np.float64) ** 2
    spread = Z90 * np.sqrt((variance * rest).sum(axis=1)) / observed.sum(axis=1)
    return theta_and_chance(value, ends[0], ends[1], spread)


def _with_scenarios(
    piece: Predictions,
    calibrated: ScoredCalibration,
    test: PolytomousResponses,
    result: CATResult,
    masks: BoolArray,
    own: FloatArray,
    inner: PredictionErrors,
    length: int,
) -> Predictions:
    """``piece`` with the predicted and true score per scenario and the training
    subjects' per-scenario half-widths (nan where they have none)."""
    _, given, expected = predicted_shares(calibrated, test, result)
    real = scenario_accuracy(masks, test.observed, np.zeros_like(given), own, own)
    guess = scenario_accuracy(masks, test.observed, given, own, expected)
    by_name = (inner.scenario_errors or {}).get(str(length), {})
    half = np.array(
        [
            conformal_quantile(np.abs(np.asarray(by_name[str(s)]))) if str(s) in by_name else np.nan
            for s in range(masks.shape[0])
        ]
    )
    return replace(
        piece,
        scenario_predicted=guess,
        scenario_truth=real,
        scenario_half_width=np.broadcast_to(half, guess.shape).copy(),
    )


def _random_raw(
    key: tuple[str, int, str],
    test: PolytomousResponses,
    rows: IntArray,
    truth: FloatArray,
    length: int,
    rng: np.random.Generator,
    repeats: int,
) -> Predictions:
    """The mean share on ``length`` random answered items, per draw, with its 90%
    sampling interval (finite-population corrected)."""
    observed = test.observed
    shares = score_shares(test)
    n_answered = observed.sum(axis=1)
    k = np.minimum(length, n_answered)
    values = np.empty((repeats, len(rows)))
    spread = np.empty_like(values)
    for r in range(repeats):
        keys = np.where(observed, rng.random(observed.shape), -1.0)
        ranks = np.argsort(np.argsort(-keys, axis=1), axis=1)
        pick = ranks < k[:, None]
        picked = np.where(pick, shares, 0.0)
        mean = picked.sum(axis=1) / np.maximum(k, 1)
        var = (np.where(pick, (shares - mean[:, None]) ** 2, 0.0)).sum(axis=1)
        values[r] = mean
        spread[r] = np.sqrt(var / np.maximum(k - 1, 1) / np.maximum(k, 1))
    fpc = np.sqrt(np.maximum(n_answered - k, 0) / np.maximum(n_answered - 1, 1))
    half = Z90 * spread * fpc
    return Predictions(*key, rows, values, truth[rows], half, values - half, values + half)
