"""Replay validation: calibrate on some subjects, replay the others' recorded answers
through the adaptive test, and compare the predicted full-pool accuracy with the truth.

Every policy is compared with random items scored by the same predictors ("random" is
always run, ``repeats`` times, beside "random-raw"); the policy "default" is what ``cat
assess`` runs with no options on a cross-fitted pool: the designs of
``cat.engine.registry.DESIGN_NAMES`` are all replayed, and each held-out block takes the
one of smallest error in the cross-fit inside its training subjects. Intervals come from
the training subjects only (``cat.prediction.training_only``): a held-out subject's 90%
interval is its prediction ± the conformal half-width of training subjects' cross-fitted
errors at the same policy, length and predictor, so coverage can fail. The IRT design's
interval is the θ-only one widened to that half-width, as ``cat assess`` widens it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from cat.designs.per_scenario import scenario_truth
from cat.engine.registry import DEFAULT, PolicyName, design_names, make_policy
from cat.errors import CatError
from cat.prediction.intervals import Z90 as _Z90
from cat.prediction.intervals import widen
from cat.prediction.predictions import Predictions
from cat.prediction.replay import (
    CHOSEN,
    IRT,
    PLUG_IN,
    RANDOM_RAW,
    RAW,
    RIDGE,
    Key,
    Replayed,
    calibrate_quietly,
    design_key,
    plug_in_accuracy,
    replay_split,
    training_offset,
)
from cat.prediction.training_only import TrainingOnly, interval_blocks, training_only
from irt.models import ModelKind
from irt.responses import ResponseMatrix
from irt.types import FloatArray, IntArray

__all__ = [
    "CHOSEN",
    "MIN_TRAIN_SIZE",
    "PLUG_IN",
    "RANDOM_RAW",
    "RAW",
    "RIDGE",
    "Predictions",
    "Progress",
    "calibrate_quietly",
    "check_train_size",
    "plug_in_accuracy",
    "random_raw",
    "splits",
    "training_offset",
    "validate",
]

RANDOM = PolicyName.RANDOM.value

#: Called with (what is being done, fraction done).
Progress = Callable[[str, float], None]
#: Fewest training subjects ``--train-size`` takes: each of the 5 folds of the intervals'
#: cross-fit is calibrated on the other 4/5 of them.
MIN_TRAIN_SIZE = 10


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


def splits(
    n_subjects: int,
    holdout: float | None,
    leave_one_out: bool,
    rng: np.random.Generator,
    folds: int | None = None,
    train_size: int | None = None,
) -> list[tuple[IntArray, IntArray]]:
    """(train rows, held-out rows) pairs: one random split (``train_size`` training
    subjects, or a share ``holdout`` held out), one per subject, or ``folds`` random
    folds of about equal size, each held out once."""
    everyone = np.arange(n_subjects)
    if train_size is not None:
        check_train_size(train_size, n_subjects)
        # As a holdout of the same number of subjects draws it: the same split.
        perm = rng.permutation(n_subjects)
        return [
            (np.sort(perm[n_subjects - train_size :]), np.sort(perm[: n_subjects - train_size]))
        ]
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


def check_train_size(train_size: int, n_subjects: int) -> None:
    """``CatError`` unless ``train_size`` training subjects leave at least 3 held out and
    are at least ``MIN_TRAIN_SIZE``."""
    if train_size < MIN_TRAIN_SIZE:
        raise CatError(
            f"--train-size must be at least {MIN_TRAIN_SIZE}, got {train_size}: the "
            "intervals come from a cross-fit inside the training subjects, each fold "
            "calibrated on the others"
        )
    if train_size > n_subjects - 3:
        raise CatError(
            f"--train-size {train_size} of {n_subjects} subjects leaves "
            f"{n_subjects - train_size} held out; at most {n_subjects - 3} "
            "(3 held out at least, to rank them)"
        )


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
    *,
    repeats: int = 5,
    interval_folds: int = 5,
    held_out_shift: float = 0.0,
    multidimensional: str | None = None,
    criterion: str | None = None,
    train_size: int | None = None,
) -> list[Predictions]:
    """Predictions of every held-out subject for each policy ("default": what ``cat
    assess`` runs), "random" (always, ``repeats`` times) and length, plus the random-raw
    baseline (``repeats`` draws). Intervals from the training subjects' errors,
    cross-fitted in ``interval_folds`` folds (``cat.prediction.training_only``).
    ``scenario`` (a code per item) lets policies named "...+cb" balance content.
    ``held_out_shift`` is added to every held-out prediction before its interval is
    built, as a deliberately biased predictor would be off (0 but in tests).
    ``multidimensional`` ("bifactor" or "mirt") adds that model's design (``scenario``
    codes its factors) to the designs the default chooses among, as on a pool
    calibrated with ``cat calibrate --model bifactor|mirt``, picking items by
    ``criterion`` (``cat.engine.registry.CriterionName``; the design's default when
    None). ``train_size`` K holds out all but K random subjects (instead of
    ``holdout``; ``cat.prediction.draws`` repeats that over several draws)."""
    kind = ModelKind(model)
    if not lengths or min(lengths) < 1:
        raise CatError("give test lengths of at least 1 item")
    if repeats < 1:
        raise CatError(f"--repeats must be at least 1, got {repeats}")
    # The default is whichever design the training subjects' errors favour: all are run.
    designs = design_names(multidimensional)
    if multidimensional and not scenario:
        raise CatError(f"the {multidimensional} design needs each item's scenario (--scenarios)")
    if criterion is not None and not multidimensional:
        raise CatError(
            f"a selection criterion ({criterion}) is for a multidimensional design: "
            "--model bifactor or mirt"
        )
    expanded = [d for p in policies for d in (designs if p == DEFAULT else (p,))]
    run = list(dict.fromkeys([*expanded, RANDOM]))
    for name in run:  # unknown names fail before any calibration
        if name not in designs:
            make_policy(name, max(lengths), scenario=scenario)
    parts = splits(responses.n_subjects, holdout, leave_one_out, rng, folds, train_size)
    blocks = interval_blocks(responses.n_subjects, parts, interval_folds, rng)
    # Separate streams: the held-out replays cannot move the training-only intervals.
    outer_rng, inner_rng = rng.spawn(2)
    total, done = len(parts) + len(blocks.pairs()), [0]

    def step(what: str, advance: bool = True) -> None:
        # advance=False: a new phase within the current unit of work (said, not counted).
        if progress is not None:
            progress(what, done[0] / total)
        if advance:
            done[0] += 1

    block = blocks.block_of(responses.n_subjects)
    truth_all = responses.accuracy()
    truth_by_scenario = scenario_truth(responses, scenario)
    collected: dict[Key, list[Predictions]] = {}

    def keep(
        key: Key,
        rows: IntArray,
        pred: FloatArray,
        half: FloatArray,
        bounds: tuple[FloatArray, FloatArray] | None = None,
        theta: tuple[FloatArray, FloatArray] | None = None,
        by_scenario: tuple[FloatArray, FloatArray] | None = None,
    ) -> None:
        half = np.broadcast_to(half, pred.shape)
        low, high = bounds if bounds is not None else (pred - half, pred + half)
        t_low, t_high = theta if theta is not None else (None, None)
        s_pred, s_half = by_scenario if by_scenario is not None else (None, None)
        s_truth = truth_by_scenario[rows] if by_scenario is not None else None
        piece = Predictions(
            *key,
            rows,
            pred,
            truth_all[rows],
            half,
            low,
            high,
            t_low,
            t_high,
            s_pred,
            s_truth,
            s_half,
        )
        collected.setdefault(key, []).append(piece)

    outer = []
    for n, (train_rows, test_rows) in enumerate(parts):
        step(
            f"split {n + 1} of {len(parts)}: calibrating on {len(train_rows):,} subjects, "
            f"replaying {len(test_rows):,}"
        )
        outer.append(
            replay_split(
                responses,
                kind,
                train_rows,
                test_rows,
                run,
                lengths,
                outer_rng,
                scenario,
                repeats,
                criterion=criterion,
                fallback_intervals=True,  # a held-out subject may take the fallback's
            )
        )
    inner = training_only(
        responses, kind, blocks, run, lengths, inner_rng, scenario, step, criterion
    )
    for replayed in outer:
        test_rows = replayed.rows
        own = block[test_rows]
        for key, pred in replayed.predicted.items():
            pred = pred + held_out_shift
            spread = replayed.disagreement.get(key)
            half = np.array(
                [
                    inner.half_width_of(b, key, None if spread is None else spread[k])
                    for k, b in enumerate(own)
                ]
            )
            theta = None
            if key in replayed.theta_low:
                theta = (
                    replayed.theta_low[key] + held_out_shift,
                    replayed.theta_high[key] + held_out_shift,
                )
            bounds = None
            if key[0] == IRT and theta is not None:
                bounds = widen(pred, theta[0], theta[1], half)  # as cat assess widens
            by_scenario = None
            if key in replayed.per_scenario:
                by_scenario = (
                    replayed.per_scenario[key] + held_out_shift,
                    np.stack([inner.scenario_half_width[b][key] for b in own]),
                )
            keep(key, test_rows, pred, half, bounds, theta, by_scenario)
        for policy, length in {(p, n) for p, n, _ in replayed.predicted}:
            if not any((policy, length) in c for c in inner.choice):
                continue
            picks = [inner.choice[b][(policy, length)] for b in own]
            pred = _per_subject(replayed.predicted, [(policy, length, p) for p in picks])
            half = np.array([inner.half_width[b][(policy, length, CHOSEN)] for b in own])
            keep((policy, length, CHOSEN), test_rows, pred + held_out_shift, half)
        if DEFAULT in policies:
            for length in lengths:
                keys = [design_key(inner.design[b][length], length) for b in own]
                pred = _per_subject(replayed.predicted, keys) + held_out_shift
                half = np.array(
                    [
                        inner.half_width_of(
                            b, (DEFAULT, length, CHOSEN), replayed.disagreement[key][k]
                        )
                        for k, (b, key) in enumerate(zip(own, keys, strict=True))
                    ]
                )
                low, high = pred - half, pred + half
                for k, key in enumerate(keys):
                    if key[0] == IRT:  # as cat assess widens the θ-only interval
                        t_low = replayed.theta_low[key][:, k] + held_out_shift
                        t_high = replayed.theta_high[key][:, k] + held_out_shift
                        low[:, k], high[:, k] = widen(pred[:, k], t_low, t_high, half[k])
                _fall_back(inner, replayed, own, keys, held_out_shift, pred, half, low, high)
                by_scenario = None
                if all(key in replayed.per_scenario for key in keys):
                    by_scenario = (
                        np.stack([replayed.per_scenario[key][k] for k, key in enumerate(keys)])
                        + held_out_shift,
                        np.stack(
                            [
                                inner.scenario_half_width[b][key]
                                for b, key in zip(own, keys, strict=True)
                            ]
                        ),
                    )
                keep(
                    (DEFAULT, length, CHOSEN), test_rows, pred, half, (low, high), None, by_scenario
                )
        for length in lengths:
            # The baseline's interval is its own sampling interval, as a user would use it.
            acc, raw_half = random_raw(
                responses.subset(subjects=test_rows), length, outer_rng, repeats
            )
            keep((RANDOM_RAW, length, RAW), test_rows, acc, raw_half)
    out = [Predictions.joined(pieces) for pieces in collected.values()]
    if progress is not None:
        progress("done", 1.0)
    return out


def _fall_back(
    inner: TrainingOnly,
    replayed: Replayed,
    own: IntArray,
    keys: list[Key],
    shift: float,
    pred: FloatArray,
    half: FloatArray,
    low: FloatArray,
    high: FloatArray,
) -> None:
    """As ``cat assess`` does: where a held-out subject's answers do not follow its
    design (``TrainingOnly.falls_back``), its prediction becomes the fallback's
    (``cat.prediction.recalibrated``) and its interval the fallback's own, widened where
    narrower to the training subjects' 90% half-width of the fallback's errors;
    ``pred``, ``half``, ``low`` and ``high`` ((R, E) and (E,)) are changed in place."""
    for k, (block, key) in enumerate(zip(own, keys, strict=True)):
        if key not in replayed.fallback:
            continue
        slope = float(replayed.slope[key][k]) if key in replayed.slope else np.nan
        gain = float(replayed.gain[key][k]) if key in replayed.gain else np.nan
        width = inner.fallback_half_width[block].get(key)
        fell = replayed.fallback[key]
        value = float(fell.value[k])
        if width is None or not np.isfinite(value):
            continue
        if inner.falls_back(int(block), key, slope, gain):
            pred[:, k] = value + shift
            half[k] = width
            bounds = widen(value, float(fell.low[k]), float(fell.high[k]), width)
            low[:, k], high[:, k] = (float(b) + shift for b in bounds)


def _per_subject(predicted: dict[Key, FloatArray], keys: list[Key]) -> FloatArray:
    """(R, E): subject k's predictions (every repeat) from ``keys[k]``'s row."""
    return np.stack([predicted[key][:, k] for k, key in enumerate(keys)], axis=1)
