"""How far the predicted accuracy of a reference model lands from its real accuracy when
the model was not in the calibration, under each design: errors stored in a pool, by
which ``cat assess`` chooses its design and sizes its interval.

An interval from θ's uncertainty and the chance in the unseen answers is too narrow for
a model whose profile one θ does not hold (on MMLU-Pro several models sit 5–7 points
off). ``cat calibrate --pool`` (K = 5 folds unless ``--cross-fit K``) replays every
reference model's own answers with the pool and the reference designs' models fitted on
the other K − 1 folds, under each design of ``cat.engine.registry.design_names``, and
stores each design's signed errors (and difficulty gains, ``cat.designs.flatness``)
per test length in ``pool.json``. ``cat assess`` runs the design of smallest mean
absolute error (``choose_design``) and sets its interval to the split-conformal 90%
half-width of its errors (the ⌈(n + 1)·0.9⌉-th smallest absolute error of n references).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from cat.designs.choice import smallest_error
from cat.designs.per_scenario import scenario_truth
from cat.engine.registry import DesignName, default_selection, design_names
from cat.errors import CatError
from cat.prediction.replay import IRT, design_key, replay_split
from cat.prediction.validation import splits
from irt.models import ModelKind
from irt.responses import ResponseMatrix
from irt.types import FloatArray, IntArray
from itempool.prediction_errors import PredictionErrors


def cross_fit_errors(
    responses: ResponseMatrix,
    model: ModelKind | str,
    folds: int,
    lengths: list[int],
    seed: int,
    scenario: tuple[int, ...] | None = None,
    progress: Callable[[str, float], None] | None = None,
    scenario_names: tuple[str, ...] | None = None,
    multidimensional: str | None = None,
    guessing: bool = True,
    criterion: str | None = None,
) -> dict[str, PredictionErrors]:
    """Replay every subject of ``responses`` with the pool (and the reference designs'
    models) fitted on the other folds, under each design of ``design_names``, and return
    each design's signed errors per length: the IRT design (MFI, content-balanced when
    ``scenario`` codes are given, ML θ, the plug-in;
    ``cat.engine.registry.default_selection``), the mixture and the low-rank design.
    ``progress(what, fraction done)`` follows the folds. With ``scenario`` codes and their
    ``scenario_names``, each design's errors per scenario are stored too;
    ``multidimensional`` ("bifactor" or "mirt") adds that model's design (one fit of it
    per fold; a bifactor model with lower asymptotes when ``guessing``), picking items
    by ``criterion`` (the design's default when None)."""
    designs = design_names(multidimensional)
    if multidimensional and not scenario:
        raise CatError(f"the {multidimensional} design's cross-fit needs each item's scenario")
    check_folds(responses.n_subjects, folds)
    lengths = replay_lengths(lengths, responses.n_items)
    rng = np.random.default_rng(seed)
    kind = ModelKind(model)
    parts = fold_splits(responses.n_subjects, folds, rng)
    truth = responses.accuracy()
    signed: dict[tuple[str, int], list[FloatArray]] = {}
    gains: dict[tuple[str, int], list[FloatArray]] = {}
    parted: dict[tuple[str, int], list[FloatArray]] = {}
    slopes: dict[tuple[str, int], list[FloatArray]] = {}
    fallen: dict[tuple[str, int], list[FloatArray]] = {}
    per_scenario: dict[tuple[str, int], list[FloatArray]] = {}
    truth_by_scenario = scenario_truth(responses, scenario) if scenario and scenario_names else None
    for n, (train_rows, test_rows) in enumerate(parts):
        if progress is not None:
            progress(f"calibrating split {n + 1} of {len(parts)}", n / len(parts))
        replayed = replay_split(
            responses,
            kind,
            train_rows,
            test_rows,
            list(designs),
            lengths,
            rng,
            scenario,
            guessing=guessing,
            criterion=criterion,
        )
        for design in designs:
            for length in lengths:
                pred = replayed.predicted[design_key(design, length)][0]
                signed.setdefault((design, length), []).append(pred - truth[test_rows])
                gains.setdefault((design, length), []).append(
                    replayed.gain[design_key(design, length)]
                )
                parted.setdefault((design, length), []).append(
                    replayed.disagreement[design_key(design, length)]
                )
                key = design_key(design, length)
                if key in replayed.slope:
                    slopes.setdefault((design, length), []).append(replayed.slope[key])
                fallen.setdefault((design, length), []).append(
                    replayed.fallback[key].value - truth[test_rows]
                )
                if truth_by_scenario is not None:
                    pred_s = replayed.per_scenario[design_key(design, length)]
                    per_scenario.setdefault((design, length), []).append(
                        pred_s - truth_by_scenario[test_rows]
                    )
    if progress is not None:
        progress("done", 1.0)
    out = {}
    for design in designs:
        errors = {
            str(length): [float(e) for e in np.concatenate(signed[(design, length)])]
            for length in lengths
        }
        gain = {
            str(length): [
                float(g) for g in np.concatenate(gains[(design, length)]) if np.isfinite(g)
            ]
            for length in lengths
        }
        disagreement = {
            str(length): [float(d) for d in np.concatenate(parted[(design, length)])]
            for length in lengths
        }
        slope_z = {
            str(length): [
                float(z) for z in np.concatenate(slopes[(design, length)]) if np.isfinite(z)
            ]
            for length in lengths
            if (design, length) in slopes
        }
        fallback_errors = {
            str(length): [
                float(e) if np.isfinite(e) else float(signed_e)
                for e, signed_e in zip(
                    np.concatenate(fallen[(design, length)]),
                    np.concatenate(signed[(design, length)]),
                    strict=True,
                )
            ]
            for length in lengths
        }
        by_scenario = None
        if truth_by_scenario is not None and scenario_names:
            by_scenario = {
                str(length): errors_by_name(
                    np.vstack(per_scenario[(design, length)]), scenario_names
                )
                for length in lengths
            }
        policy = default_selection(scenario) if design == IRT else design
        predictor = design_key(design, 0)[2]
        out[design] = PredictionErrors(
            folds=folds,
            seed=seed,
            policy=policy,
            predictor=predictor,
            errors=errors,
            difficulty_gain=gain,
            disagreement=disagreement,
            slope_z=slope_z or None,
            fallback_errors=fallback_errors,
            scenario_errors=by_scenario,
        )
    return out


#: The fewest subjects a cross-fit runs on: leaving one out then calibrates on 2, the
#: fewest the reference designs' low-rank model takes.
MIN_CROSS_FIT_SUBJECTS = 3


def check_folds(n_subjects: int, folds: int) -> None:
    """Refuse a cross-fit whose folds would hold fewer than 2 subjects each, unless it
    leaves one subject out at a time (``folds`` = ``n_subjects``); the message names the
    values that would work."""
    if n_subjects < MIN_CROSS_FIT_SUBJECTS:
        raise CatError(
            f"a cross-fit needs at least {MIN_CROSS_FIT_SUBJECTS} subjects (each fold is "
            f"calibrated on the others), the responses have {n_subjects}; use --no-cross-fit"
        )
    if folds == n_subjects or n_subjects >= 2 * folds:
        return
    leave_one_out = f"--cross-fit {n_subjects} (leave-one-out)"
    works = (
        f"use --cross-fit {n_subjects // 2} or fewer, or {leave_one_out}"
        if n_subjects >= 4
        else f"use {leave_one_out}"
    )
    raise CatError(
        f"--cross-fit {folds} needs at least {2 * folds} subjects, "
        f"the responses have {n_subjects}; {works}"
    )


def fold_count(n_subjects: int, folds: int, chosen: bool) -> tuple[int | None, str | None]:
    """The folds a cross-fit of ``n_subjects`` runs (None: none can), and a one-line
    note when they are not ``folds``. Folds the user ``chosen`` are kept, or refused by
    ``check_folds``; the default's give way to leave-one-out (``n_subjects`` folds)
    where too few subjects would fill them, and to no cross-fit below
    ``MIN_CROSS_FIT_SUBJECTS``: a default must work for every pool that can be
    calibrated."""
    if chosen or n_subjects >= 2 * folds:
        check_folds(n_subjects, folds)
        return folds, None
    if n_subjects < MIN_CROSS_FIT_SUBJECTS:
        return None, (
            f"{n_subjects} subjects are too few to cross-fit (it needs "
            f"{MIN_CROSS_FIT_SUBJECTS}): no cross-fitted errors are stored, and cat assess "
            "will give an interval from theta alone"
        )
    return n_subjects, (
        f"{n_subjects} subjects are too few for {folds} cross-fit folds of 2 or more; "
        f"the cross-fit leaves one subject out at a time ({n_subjects} folds)"
    )


def fold_splits(
    n_subjects: int, folds: int, rng: np.random.Generator
) -> list[tuple[IntArray, IntArray]]:
    """(train rows, held-out rows) of each fold: ``folds`` random folds of 2 or more
    subjects, or one subject each when ``folds`` = ``n_subjects`` (leave-one-out)."""
    if folds == n_subjects:
        return splits(n_subjects, None, True, rng)
    return splits(n_subjects, None, False, rng, folds)


def errors_by_name(errors: FloatArray, names: tuple[str, ...]) -> dict[str, list[float]]:
    """Columns of (subjects, S) errors by scenario name, without the undefined ones."""
    return {
        name: [float(e) for e in errors[:, k] if np.isfinite(e)]
        for k, name in enumerate(names)
        if np.isfinite(errors[:, k]).sum() >= 2
    }


def choose_design(errors: dict[str, PredictionErrors], length: int) -> str:
    """The design whose cross-fitted errors are smallest (mean absolute) at the stored
    length nearest to ``length`` (``cat.designs.choice``); the IRT design when the pool
    stores none."""
    if not errors:
        return DesignName.IRT.value
    stored = {name: e.errors[str(e.nearest_length(length))] for name, e in errors.items()}
    return smallest_error({name: np.asarray(v, dtype=np.float64) for name, v in stored.items()})


#: The shortest test a small pool's cross-fit adds below its whole length.
SHORTEST_ADDED_LENGTH = 5


def replay_lengths(lengths: Sequence[int], n_items: int) -> list[int]:
    """The test lengths a cross-fit replays: each of ``lengths`` within the pool, and,
    where every one reaches the whole pool, half the pool too. A test of the whole pool
    knows its accuracy exactly (its errors are near 0); a shorter one on a small pool
    (``cat assess --length``) needs errors of its own, not that 0."""
    kept = {min(length, n_items) for length in lengths}
    if kept == {n_items} and n_items // 2 >= SHORTEST_ADDED_LENGTH:
        kept.add(n_items // 2)
    return sorted(kept)
