"""Intervals for held-out subjects from the training subjects only.

A user assessing a new model has only the references, so ``cat validate`` builds each
held-out subject's 90% interval the way a pool's cross-fit builds it for ``cat assess``:
from the errors of training subjects replayed with the pool calibrated without them
(split-conformal, ``cat.prediction.conformal``), at the same policy, length and
predictor. Coverage measured on the held-out subjects can then fail.

The subjects are cut into blocks. A held-out block's training set is every other
block; each of those is replayed in turn with the pool calibrated on the rest of that
training set (the block and the replayed one left out). One calibration per pair of
blocks serves both when both are held out.

- One split (``--holdout``): the held-out subjects form one block and the training
  subjects K folds, the cross-fit inside the training set of ``cat calibrate
  --cross-fit K``: K more calibrations.
- Many splits (leave-one-out): K + 1 random blocks of every subject, each held-out
  subject's interval from its block's training set in K folds: (K + 1)·K / 2 more
  calibrations however many subjects there are, instead of K per subject. The inner
  calibrations see fewer subjects (K − 1 of K + 1 blocks) than the leave-one-out one,
  so these intervals tend to be slightly wide.

No held-out subject's answers enter its own interval: every calibration and every
error behind it leaves the subject's whole block out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from cat.designs.choice import smallest_error
from cat.designs.flatness import SLOPE_FLAG, slope_flagged, slope_threshold_of
from cat.designs.per_scenario import scenario_truth
from cat.engine.registry import ALL_DESIGN_NAMES, DEFAULT
from cat.errors import CatError
from cat.prediction.conformal import conformal_quantile
from cat.prediction.disagreement import ScaledWidth
from cat.prediction.replay import (
    CHOSEN,
    RAW,
    Key,
    calibrate_split,
    design_key,
    replay_split,
)
from irt.models import ModelKind
from irt.responses import ResponseMatrix
from irt.types import FloatArray, IntArray

#: Fewest subjects an inner calibration may have (ridge needs 3 references).
MIN_TRAINING = 3


@dataclass(frozen=True)
class Blocks:
    """A partition of the subjects; ``held_out[k]`` says whether block k needs intervals."""

    members: list[IntArray]
    held_out: list[bool]

    def pairs(self) -> list[tuple[int, int]]:
        """The pairs of blocks calibrated without: those with a held-out block."""
        m = len(self.members)
        return [
            (a, b)
            for a in range(m)
            for b in range(a + 1, m)
            if self.held_out[a] or self.held_out[b]
        ]

    def block_of(self, n_subjects: int) -> IntArray:
        """The block of each subject."""
        out = np.full(n_subjects, -1, dtype=np.int_)
        for k, rows in enumerate(self.members):
            out[rows] = k
        return out


def interval_blocks(
    n_subjects: int,
    parts: list[tuple[IntArray, IntArray]],
    folds: int,
    rng: np.random.Generator,
) -> Blocks:
    """Blocks for the outer ``parts`` (train rows, held-out rows): one split gives the
    held-out block and ``folds`` folds of the training set; several give ``folds`` + 1
    random blocks of everyone."""
    if folds < 2:
        raise CatError(f"training-only intervals need at least 2 folds, got {folds}")
    if len(parts) == 1:
        train, test = parts[0]
        inner = np.array_split(rng.permutation(train), min(folds, len(train)))
        blocks = Blocks(
            [np.sort(test), *(np.sort(f) for f in inner)], [True] * 1 + [False] * len(inner)
        )
    else:
        everyone = np.array_split(rng.permutation(n_subjects), min(folds + 1, n_subjects))
        blocks = Blocks([np.sort(b) for b in everyone], [True] * len(everyone))
    for a, b in blocks.pairs():
        left = n_subjects - len(blocks.members[a]) - len(blocks.members[b])
        if left < MIN_TRAINING:
            raise CatError(
                f"training-only intervals with {folds} folds leave {left} subjects to "
                f"calibrate on; each needs at least {MIN_TRAINING} (use fewer folds or "
                "a smaller holdout)"
            )
    return blocks


@dataclass
class TrainingOnly:
    """Per block: each key's 90% conformal half-width from the training subjects'
    cross-fitted errors, which predictor "chosen" takes per (policy, length), and which
    design the default takes per length."""

    half_width: list[dict[Key, float]] = field(default_factory=list)
    choice: list[dict[tuple[str, int], str]] = field(default_factory=list)
    design: list[dict[int, str]] = field(default_factory=list)
    # Per design key with scenario codes: each scenario's half-width, (S,) (nan where
    # fewer than two training subjects answer the scenario), as cat assess widens by.
    scenario_half_width: list[dict[Key, FloatArray]] = field(default_factory=list)
    # Per design key (and (default, length, chosen)): the half-width as a function of a
    # held-out subject's disagreement (cat.prediction.disagreement), as cat assess
    # sizes it; absent where too few training subjects define it.
    scaled: list[dict[Key, ScaledWidth]] = field(default_factory=list)
    # Per design key: what cat assess checks a model's answers against, from the
    # training subjects' replays: the slope check's threshold (cat.designs.flatness),
    # the lowest difficulty gain, and the 90% half-width of the fallback prediction's
    # errors (cat.prediction.recalibrated) that a flagged model's interval takes.
    slope_threshold: list[dict[Key, float]] = field(default_factory=list)
    lowest_gain: list[dict[Key, float]] = field(default_factory=list)
    fallback_half_width: list[dict[Key, float]] = field(default_factory=list)

    def falls_back(self, block: int, key: Key, slope: float, gain: float) -> bool:
        """Whether cat assess would set the design's prediction aside for a held-out
        subject of ``block`` at design ``key``: its slope check z below the training
        subjects' threshold (``SLOPE_FLAG`` without enough of them), or its difficulty
        gain below every training subject's."""
        threshold = self.slope_threshold[block].get(key, SLOPE_FLAG)
        lowest = self.lowest_gain[block].get(key)
        return slope_flagged(slope, threshold, key[1]) or bool(
            lowest is not None and np.isfinite(gain) and gain < lowest
        )

    def half_width_of(self, block: int, key: Key, disagreement: FloatArray | None) -> FloatArray:
        """Held-out subjects' half-widths at ``key`` from their ``block``'s training
        subjects: scaled by each one's disagreement where both exist, else constant."""
        scaled = self.scaled[block].get(key)
        if scaled is None or disagreement is None:
            return np.asarray(self.half_width[block][key])
        return scaled.half_width(disagreement)


def training_only(
    responses: ResponseMatrix,
    model: ModelKind,
    blocks: Blocks,
    policies: list[str],
    lengths: list[int],
    rng: np.random.Generator,
    scenario: tuple[int, ...] | None = None,
    step: Callable[..., None] | None = None,
    criterion: str | None = None,
) -> TrainingOnly:
    """Half-widths and choices for every held-out block, from its training subjects'
    absolute errors, each replayed once (one draw of a random policy); a
    multidimensional design picks items by ``criterion``. ``step(what)`` is called as
    each pair of blocks begins and ``step(what, False)`` as each of its phases does."""
    truth = responses.accuracy()
    truth_by_scenario = scenario_truth(responses, scenario)
    everyone = np.arange(responses.n_subjects)
    errors: list[dict[Key, list[FloatArray]]] = [{} for _ in blocks.members]
    parted: list[dict[Key, list[FloatArray]]] = [{} for _ in blocks.members]
    by_scenario: list[dict[Key, list[FloatArray]]] = [{} for _ in blocks.members]
    slopes: list[dict[Key, list[FloatArray]]] = [{} for _ in blocks.members]
    gains: list[dict[Key, list[FloatArray]]] = [{} for _ in blocks.members]
    fallen: list[dict[Key, list[FloatArray]]] = [{} for _ in blocks.members]
    pairs = blocks.pairs()
    # One stream per replay: no block's answers can shift another block's random draws.
    streams = iter(rng.spawn(2 * len(pairs)))
    for n, (a, b) in enumerate(pairs):
        train = np.setdiff1d(everyone, np.concatenate([blocks.members[a], blocks.members[b]]))
        what = f"cross-fitting intervals {n + 1} of {len(pairs)}"
        if step is not None:
            step(f"{what}: calibrating on {len(train):,} subjects")
        calibrated = calibrate_split(responses, model, train, criterion=criterion)
        # Replay b for a's interval and a for b's, each where that block is held out, apart:
        # replays of several subjects share their estimation steps.
        for x, y in ((a, b), (b, a)):
            stream = next(streams)
            if not blocks.held_out[x]:
                continue
            rows = blocks.members[y]
            if step is not None:
                step(f"{what}: replaying {len(rows):,} subjects", False)
            replayed = replay_split(
                responses,
                model,
                train,
                rows,
                policies,
                lengths,
                stream,
                scenario,
                calibrated=calibrated,
            )
            for key, pred in replayed.predicted.items():
                errors[x].setdefault(key, []).append(np.abs(pred[0] - truth[rows]))
            for key, spread in replayed.disagreement.items():
                parted[x].setdefault(key, []).append(spread)
            for key, pred_s in replayed.per_scenario.items():
                by_scenario[x].setdefault(key, []).append(np.abs(pred_s - truth_by_scenario[rows]))
            for key, z in replayed.slope.items():
                slopes[x].setdefault(key, []).append(z)
            for key, gain in replayed.gain.items():
                gains[x].setdefault(key, []).append(gain)
            for key, fell in replayed.fallback.items():
                fallen[x].setdefault(key, []).append(np.abs(fell.value - truth[rows]))
    out = TrainingOnly()
    for k, (per_key, per_scenario, spreads) in enumerate(
        zip(errors, by_scenario, parted, strict=True)
    ):
        abs_errors = {key: np.concatenate(parts) for key, parts in per_key.items()}
        half, choice, design = half_widths(abs_errors)
        out.half_width.append(half)
        out.choice.append(choice)
        out.design.append(design)
        scaled = {
            key: ScaledWidth.fit(abs_errors[key], np.concatenate(parts))
            for key, parts in spreads.items()
        }
        for length, picked in design.items():
            scaled[(DEFAULT, length, CHOSEN)] = scaled.get(design_key(picked, length))
        out.scaled.append({key: fit for key, fit in scaled.items() if fit is not None})
        out.slope_threshold.append(
            {
                key: threshold
                for key, parts in slopes[k].items()
                if (threshold := slope_threshold_of(np.concatenate(parts))) is not None
            }
        )
        out.lowest_gain.append(
            {
                key: float(np.min(finite))
                for key, parts in gains[k].items()
                if (finite := _finite(np.concatenate(parts))).size
            }
        )
        out.fallback_half_width.append(
            {
                key: conformal_quantile(finite)
                for key, parts in fallen[k].items()
                if (finite := _finite(np.concatenate(parts))).size
            }
        )
        out.scenario_half_width.append(
            {key: _column_quantiles(np.vstack(parts)) for key, parts in per_scenario.items()}
        )
    return out


def _finite(values: FloatArray) -> FloatArray:
    values = np.asarray(values, dtype=np.float64)
    return values[np.isfinite(values)]


def _column_quantiles(abs_errors: FloatArray) -> FloatArray:
    """The conformal 90% half-width of each column's finite errors (nan under two)."""
    out = np.full(abs_errors.shape[1], np.nan)
    for k, column in enumerate(abs_errors.T):
        finite = column[np.isfinite(column)]
        if finite.size >= 2:
            out[k] = conformal_quantile(finite)
    return out


def half_widths(
    abs_errors: dict[Key, FloatArray],
) -> tuple[dict[Key, float], dict[tuple[str, int], str], dict[int, str]]:
    """From the training subjects' absolute errors per key: the conformal 90%
    half-width of each; per (policy, length) with several predictors the one of smallest
    mean error, which "chosen" takes with its half-width; and per length, among the
    designs replayed, the one of smallest mean error, which the default takes."""
    pooled = dict(abs_errors)
    choice: dict[tuple[str, int], str] = {}
    candidates: dict[tuple[str, int], list[str]] = {}
    for policy, length, predictor in abs_errors:
        if predictor not in (RAW, CHOSEN):
            candidates.setdefault((policy, length), []).append(predictor)
    for (policy, length), predictors in candidates.items():
        if len(predictors) > 1:
            pick = min(predictors, key=lambda p: float(abs_errors[(policy, length, p)].mean()))
            choice[(policy, length)] = pick
            pooled[(policy, length, CHOSEN)] = abs_errors[(policy, length, pick)]
    design: dict[int, str] = {}
    for length in sorted({length for _, length in candidates}):
        designs = [d for d in ALL_DESIGN_NAMES if design_key(d, length) in abs_errors]
        if designs:
            pick = smallest_error({d: abs_errors[design_key(d, length)] for d in designs})
            design[length] = pick
            pooled[(DEFAULT, length, CHOSEN)] = abs_errors[design_key(pick, length)]
    return {key: conformal_quantile(err) for key, err in pooled.items()}, choice, design
