"""The cross-fitted errors of a pool of scored items (graded, partial-credit, sequential
and binary items mixed), as ``cat.prediction.cross_fit`` measures them on a pool of 0/1
items: every reference is replayed with the pool calibrated on the other folds, and
the predicted full-pool score of its adaptive test is compared with its real one.

A score here is the mean over the items a subject answered of its share of each item's
top score (``cat.prediction.shares``); the prediction is the shares of the items given
plus the expected shares at θ̂, less the training references' drift, of the others.
The IRT design is the only one on such pools: the reference designs model 0/1 answers.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np

from cat.designs.per_scenario import scenario_accuracy, scenario_masks
from cat.engine.graded_estimators import GradedAnswers
from cat.engine.registry import (
    DEFAULT_ESTIMATOR,
    default_selection,
    make_graded_estimator,
    make_policy,
)
from cat.engine.selection import PoolInfo
from cat.engine.simulation import CATDesign, CATResult, replay_cat
from cat.engine.stopping import StoppingRule
from cat.prediction.cross_fit import check_folds, errors_by_name, fold_splits, replay_lengths
from cat.prediction.predictors import reference_offset
from cat.prediction.replay import given_mask
from cat.prediction.shares import expected_share
from irt.continuous import ContinuousType
from irt.continuous_priors import ContinuousPriors
from irt.errors import ConvergenceWarning
from irt.mixed import MixedParams, MixedResponses
from irt.mixed_em import MixedCalibrator
from irt.polytomous import ItemType, PolytomousParams
from irt.polytomous_em import PolytomousCalibrator
from irt.polytomous_priors import PolytomousPriors
from irt.polytomous_responses import PolytomousResponses
from irt.polytomous_start import resolve_item_types
from irt.types import BoolArray, FloatArray
from itempool.prediction_errors import PredictionErrors

#: The plug-in on shares: what the IRT design predicts a scored pool with.
PREDICTOR = "plug-in"


#: The answers of a scored pool: scores 0..m, or with continuous scores beside them.
ScoredResponses = PolytomousResponses | MixedResponses


def score_shares(responses: ScoredResponses) -> FloatArray:
    """Each answer as a share of its item's top score (a continuous score as it is),
    (N, J); 0 where not answered."""
    if isinstance(responses, MixedResponses):
        parts = [] if responses.discrete is None else [score_shares(responses.discrete)]
        if responses.continuous is not None:
            parts.append(np.nan_to_num(responses.continuous.values, nan=0.0))
        return np.hstack(parts)
    top = np.asarray(responses.n_categories, dtype=np.float64) - 1.0
    values = np.where(responses.observed, responses.values, 0).astype(np.float64)
    return np.asarray(values / top[None, :])


def _scores(responses: ScoredResponses) -> FloatArray:
    """The answers on their own scales, (N, J) float; 0 where not answered."""
    if isinstance(responses, MixedResponses):
        return np.nan_to_num(responses.as_float(), nan=0.0)
    return np.where(responses.observed, responses.values, 0).astype(np.float64)


def mean_shares(responses: ScoredResponses) -> FloatArray:
    """Each subject's full-pool score: its mean share over the items it answered."""
    observed = responses.observed
    return np.asarray(score_shares(responses).sum(axis=1) / np.maximum(observed.sum(axis=1), 1))


def scored_abilities(
    params: PolytomousParams | MixedParams, responses: ScoredResponses, estimator: str = "mle"
) -> tuple[FloatArray, FloatArray]:
    """θ and SE of every subject from all its answers, by the adaptive test's own
    estimator (``cat.engine.graded_estimators``), in blocks of subjects."""
    pool = PoolInfo.build(params)
    assert pool.scores is not None
    chosen = make_graded_estimator(estimator)
    theta = np.empty(responses.n_subjects)
    se = np.empty(responses.n_subjects)
    width = int(responses.observed.sum(axis=1).max())
    values = _scores(responses)
    for lo in range(0, responses.n_subjects, 64):
        rows = slice(lo, min(lo + 64, responses.n_subjects))
        observed = responses.observed[rows]
        # Each subject's answered items first, then −1 padding.
        order = np.argsort(~observed, axis=1, kind="stable")[:, :width]
        taken = np.take_along_axis(observed, order, axis=1)
        items = np.where(taken, order, -1)
        scores = np.take_along_axis(values[rows], order, axis=1)
        answers = GradedAnswers(pool.scores, items, np.where(taken, scores, 0.0))
        theta[rows], se[rows] = chosen.estimate(answers, np.zeros(items.shape[0]))
    return theta, se


@dataclass(frozen=True)
class ScoredCalibration:
    """A scored pool calibrated on some subjects, with the plug-in's drift on them."""

    params: PolytomousParams | MixedParams
    offset: float
    pool: PoolInfo


def calibrate_scored_split(
    train: ScoredResponses, item_types: Mapping[str, ItemType | ContinuousType] | None
) -> ScoredCalibration:
    """The pool fitted to ``train`` (types of ``item_types``, mirt's defaults for the
    rest; a continuous item needs its type) under weakly informative priors (a few
    references leave scores unused), and the drift of its expected shares from the
    subjects' real scores."""
    params: PolytomousParams | MixedParams
    if isinstance(train, MixedResponses):
        params = _mixed_split(train, item_types or {})
    else:
        discrete = cast("Mapping[str, ItemType] | None", item_types)
        priors = PolytomousPriors.weakly_informative(resolve_item_types(discrete, train))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fit = PolytomousCalibrator(discrete, priors=priors, standard_errors=None).fit(train)
        params = fit.params_
    theta, _ = scored_abilities(params, train, DEFAULT_ESTIMATOR.value)
    offset = reference_offset(params, theta, mean_shares(train), train.observed)
    return ScoredCalibration(params, offset, PoolInfo.build(params))


def _mixed_split(
    train: MixedResponses, item_types: Mapping[str, ItemType | ContinuousType]
) -> MixedParams:
    discrete = {i: item_types[i] for i in train.discrete_ids if i in item_types}
    continuous = {i: item_types[i] for i in train.continuous_ids}
    priors = None
    if train.discrete is not None:
        types = resolve_item_types(cast("Mapping[str, ItemType]", discrete), train.discrete)
        priors = PolytomousPriors.weakly_informative(types)
    calibrator = MixedCalibrator(
        discrete or None,
        continuous or None,
        discrete_priors=priors,
        continuous_priors=ContinuousPriors.weakly_informative(),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return calibrator.fit(train).params_


def predicted_shares(
    calibrated: ScoredCalibration, test: ScoredResponses, result: CATResult
) -> tuple[FloatArray, BoolArray, FloatArray]:
    """Each replayed subject's predicted score, the items it was given (E, J) and the
    clipped expected shares at θ̂ less the drift (E, J)."""
    observed = test.observed
    given = given_mask(observed, result)
    expected = np.clip(
        expected_share(calibrated.params, result.theta_hat) - calibrated.offset, 0.0, 1.0
    )
    shares = np.where(given, score_shares(test), expected) * observed
    return np.asarray(shares.sum(axis=1) / observed.sum(axis=1)), given, expected


def scored_cross_fit_errors(
    responses: ScoredResponses,
    item_types: Mapping[str, ItemType | ContinuousType] | None,
    folds: int,
    lengths: Sequence[int],
    seed: int,
    scenario: tuple[int, ...] | None = None,
    scenario_names: tuple[str, ...] | None = None,
    progress: Callable[[str, float], None] | None = None,
    policy: str | None = None,
) -> PredictionErrors:
    """Replay every subject with the pool fitted on the other folds (MFI, balanced by
    ``scenario`` when given, ML θ: what ``cat assess`` runs; or ``policy``) and return
    the signed errors of its predicted score per length, and per scenario with
    ``scenario_names``."""
    check_folds(responses.n_subjects, folds)
    lengths = replay_lengths(lengths, responses.n_items)
    rng = np.random.default_rng(seed)
    truth = mean_shares(responses)
    masks = scenario_masks(scenario) if scenario and scenario_names else None
    shares = score_shares(responses)
    signed: dict[int, list[FloatArray]] = {length: [] for length in lengths}
    by_scenario: dict[int, list[FloatArray]] = {length: [] for length in lengths}
    parts = fold_splits(responses.n_subjects, folds, rng)
    policy = policy or default_selection(scenario)
    for n, (train_rows, test_rows) in enumerate(parts):
        if progress is not None:
            progress(f"calibrating split {n + 1} of {len(parts)}", n / len(parts))
        calibrated = calibrate_scored_split(responses.subset(subjects=train_rows), item_types)
        test = responses.subset(subjects=test_rows)
        for length in lengths:
            design = CATDesign(
                make_policy(policy, length, scenario=scenario),
                make_graded_estimator(DEFAULT_ESTIMATOR.value),
                StoppingRule(length),
            )
            result = replay_cat(calibrated.params, test, design, rng, calibrated.pool)
            predicted, given, expected = predicted_shares(calibrated, test, result)
            signed[length].append(predicted - truth[test_rows])
            if masks is not None:
                own = shares[test_rows]
                none = np.zeros_like(given)
                real = scenario_accuracy(masks, test.observed, none, own, own)
                guess = scenario_accuracy(masks, test.observed, given, own, expected)
                by_scenario[length].append(guess - real)
    if progress is not None:
        progress("done", 1.0)
    scenario_errors = None
    if masks is not None and scenario_names:
        scenario_errors = {
            str(length): errors_by_name(np.vstack(by_scenario[length]), scenario_names)
            for length in lengths
        }
    return PredictionErrors(
        folds=folds,
        seed=seed,
        policy=policy,
        predictor=PREDICTOR,
        errors={
            str(length): [float(e) for e in np.concatenate(signed[length])] for length in lengths
        },
        scenario_errors=scenario_errors,
    )
