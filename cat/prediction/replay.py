"""One calibration, many replays: calibrate on some subjects, replay others' recorded
answers under each policy and length, and predict their full-pool accuracy with each
predictor. ``cat validate`` calls it for its held-out subjects and for the cross-fit
inside the training subjects that gives their intervals; ``cat calibrate --cross-fit``
for the references' errors a pool stores.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from cat.designs.flatness import difficulty_gain, slope_z
from cat.designs.models import (
    LOW_RANK,
    MIRT,
    MIXTURE,
    REFERENCE_DESIGNS,
    ReferenceModels,
)
from cat.designs.per_scenario import scenario_accuracy, scenario_masks
from cat.engine.answers import Answers
from cat.engine.registry import (
    BALANCED_SUFFIX,
    DEFAULT_ESTIMATOR,
    MULTIDIMENSIONAL_DESIGNS,
    DesignName,
    EstimatorName,
    PolicyName,
    make_estimator,
    make_policy,
)
from cat.engine.selection import PoolInfo
from cat.engine.simulation import CATDesign, CATResult, replay_cat
from cat.engine.stopping import StoppingRule
from cat.errors import CatError
from cat.prediction.intervals import Z90, theta_and_chance
from cat.prediction.predictors import RidgeReferences, reference_offset
from cat.prediction.recalibrated import RecalibratedRows, recalibrated_values
from irt.bifactor import BifactorCalibrator, BifactorPriors
from irt.bifactor_model import group_codes
from irt.em import EMCalibrator
from irt.errors import ConvergenceWarning, IRTError
from irt.exploratory.scenario_factors import fit_scenario_factors
from irt.mirt_model import MirtParams
from irt.models import ItemParams, ModelKind, probability
from irt.responses import ResponseMatrix
from irt.scoring import AbilityMethod, score_abilities
from irt.types import BoolArray, FloatArray, IntArray

PLUG_IN, RIDGE, RAW, CHOSEN = "plug-in", "ridge", "raw", "chosen"
#: The baseline: plain accuracy on random items.
RANDOM_RAW = "random-raw"
#: The IRT design: MFI (content-balanced) with ML θ, scored by the plug-in.
IRT = DesignName.IRT.value
#: (policy, length, predictor): one row of ``cat validate``.
Key = tuple[str, int, str]
#: The bifactor fits of replays stop at this parameter change (the pool's own fit at
#: 1e-4): tens of refits in a validation, and rankings that do not move below it.
REPLAY_TOL = 1e-3


def is_random(policy: str) -> bool:
    """Whether ``policy`` draws items at random (its rows are repeated)."""
    return policy.removesuffix(BALANCED_SUFFIX) == PolicyName.RANDOM.value


def predictors_of(policy: str, multidimensional: str | None = None) -> tuple[str, ...]:
    """The predictors replayed for ``policy``: the default runs what ``cat assess`` runs,
    a reference design its own predictor, any other policy every predictor, the
    ``multidimensional`` design's ("bifactor" or "mirt") too when it is replayed, so
    that its adaptive items face random items scored the same way."""
    if policy == IRT:
        return (PLUG_IN,)
    if policy in REFERENCE_DESIGNS:
        return (policy,)
    every = (PLUG_IN, RIDGE, MIXTURE, LOW_RANK)
    return every if multidimensional is None else (*every, multidimensional)


def design_key(design: str, length: int) -> Key:
    """The row of ``design`` at ``length``: the IRT design is scored by the plug-in, a
    reference design by its own predictor."""
    return (design, length, PLUG_IN if design == IRT else design)


def given_mask(observed: BoolArray, result: CATResult) -> BoolArray:
    """(E, J): the items each replayed subject was given."""
    given = np.zeros_like(observed)
    rows = np.repeat(np.arange(len(result.items)), result.items.shape[1])
    cols = result.items.ravel()
    keep = cols >= 0
    given[rows[keep], cols[keep]] = True
    return given


def plug_in_accuracy(
    params: ItemParams,
    responses: ResponseMatrix,
    result: CATResult,
    offset: float = 0.0,
    theta: FloatArray | None = None,
) -> FloatArray:
    """Observed right answers on the items given plus Σ (P_j(θ̂) − ``offset``) over every
    other item the subject answered, over the number it answered; ``offset`` is the
    references' drift (``cat.prediction.predictors.reference_offset``); ``theta``
    replaces θ̂ when given."""
    observed = responses.observed
    right_given = (result.right * (result.items >= 0)).sum(axis=1)
    return _plug_in(
        params,
        observed,
        given_mask(observed, result),
        right_given,
        result.theta_hat if theta is None else theta,
        offset,
    )


def _plug_in(
    params: ItemParams,
    observed: BoolArray,
    given: BoolArray,
    right_given: FloatArray,
    theta: FloatArray,
    offset: float,
) -> FloatArray:
    """The plug-in of ``plug_in_accuracy`` from the ``given`` mask (E, J), the number
    right on it and θ."""
    prob = probability(theta, params)
    rest = observed & ~given
    n_rest = rest.sum(axis=1)
    expected_rest = np.clip((prob * rest).sum(axis=1) - offset * n_rest, 0.0, n_rest)
    return np.asarray((right_given + expected_rest) / observed.sum(axis=1), dtype=np.float64)


def plug_in_of_given(
    params: ItemParams, observed: BoolArray, given: BoolArray, right: FloatArray, offset: float
) -> FloatArray:
    """The IRT plug-in of answers to items another design chose (``given``, (E, J)): θ by
    the estimator ``cat assess`` runs (ML, MAP while the answers all agree), as a session
    run by a reference design keeps it."""
    order = np.argsort(~given, axis=1, kind="stable")
    n_given = given.sum(axis=1)
    width = max(int(n_given.max(initial=0)), 1)
    items = np.where(np.arange(width) < n_given[:, None], order[:, :width], -1)
    answers = Answers.gather(params, items, np.take_along_axis(right, np.maximum(items, 0), 1))
    theta, _ = make_estimator(DEFAULT_ESTIMATOR.value).estimate(
        answers, np.zeros(len(given), dtype=np.float64)
    )
    right_given = np.where(given, right, 0.0).sum(axis=1)
    return _plug_in(params, observed, given, right_given, theta, offset)


def theta_only_bounds(
    params: ItemParams, responses: ResponseMatrix, result: CATResult, offset: float = 0.0
) -> tuple[FloatArray, FloatArray]:
    """(low, high) of the plug-in's θ-only 90% interval, as ``cat assess`` builds it
    without stored errors: the plug-in at the ends of θ̂ ± z·SE, combined with the
    Bernoulli chance of the answered items not given."""
    value = plug_in_accuracy(params, responses, result, offset)
    se = np.where(np.isfinite(result.se), result.se, 1e6)
    at_low = plug_in_accuracy(params, responses, result, offset, result.theta_hat - Z90 * se)
    at_high = plug_in_accuracy(params, responses, result, offset, result.theta_hat + Z90 * se)
    observed = responses.observed
    rest = observed & ~given_mask(observed, result)
    p = np.clip(probability(result.theta_hat, params) - offset, 0.0, 1.0)
    spread = Z90 * np.sqrt((p * (1 - p) * rest).sum(axis=1)) / observed.sum(axis=1)
    return theta_and_chance(value, at_low, at_high, spread)


def _ridge_predictions(
    ridge: RidgeReferences, test: ResponseMatrix, result: CATResult
) -> FloatArray:
    """Ridge-across-references prediction for each replayed subject of ``test``
    (``cat.prediction.predictors``)."""
    right = test.values == 1
    given = [row[row >= 0] for row in result.items]
    answers = [right[k, items].astype(np.float64) for k, items in enumerate(given)]
    return ridge.accuracies(given, answers, test.observed)


def calibrate_quietly(train: ResponseMatrix, model: ModelKind) -> ItemParams:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return EMCalibrator(model, standard_errors=False).fit(train).params_


def training_offset(params: ItemParams, train: ResponseMatrix) -> float:
    """The plug-in's drift measured on the training subjects at their ML abilities."""
    abilities = score_abilities(train, params, AbilityMethod.ML)
    return reference_offset(params, abilities.theta, train.accuracy(), train.observed)


@dataclass
class Calibrated:
    """A pool calibrated on some subjects (``train``), with the plug-in's offset measured
    on them and, when first asked for, the reference designs' models of them."""

    params: ItemParams
    offset: float
    pool: PoolInfo
    train: ResponseMatrix
    # Whether the bifactor design's model has lower asymptotes (as the pool's).
    guessing: bool = True
    # How the multidimensional design picks items (None: the design's default).
    criterion: str | None = None
    _multidimensional: dict[str, ReferenceModels] = field(default_factory=dict, repr=False)

    @cached_property
    def references(self) -> ReferenceModels:
        return ReferenceModels.fit(self.train)

    @cached_property
    def ridge(self) -> RidgeReferences:
        """The training subjects as the ridge reads them, shared by every replay."""
        return RidgeReferences.of((self.train.values == 1).astype(np.float64), self.train.observed)

    def with_model(self, design: str, scenario: tuple[int, ...]) -> ReferenceModels:
        """The reference models and the training subjects' multidimensional model of
        ``design`` ("bifactor" or "mirt"), one specific or correlated factor per
        ``scenario`` code, fitted on first use."""
        if design not in self._multidimensional:
            names = tuple(str(k) for k in range(max(scenario) + 1))
            if design == MIRT:
                found = fit_scenario_factors(self.params, self.train, scenario, names)
                models = self.references.with_mirt(found.params, found.offset, self.criterion)
            else:
                params = fit_bifactor(self.train, scenario, self.guessing)
                models = self.references.with_mirt(params, criterion=self.criterion)
            self._multidimensional[design] = models
        return self._multidimensional[design]


def fit_bifactor(train: ResponseMatrix, scenario: tuple[int, ...], guessing: bool) -> MirtParams:
    """The bifactor model of a replay's training subjects: the general factor and one
    specific factor per ``scenario`` code, as ``cat calibrate --model bifactor`` fits it
    (its priors; no standard errors, which no replay reads), stopped at ``REPLAY_TOL``.
    Fitted with ``irt`` directly, as the MIRT design's factors are: the pools' calibration
    jobs stand above the predictions."""
    try:
        codes, names = group_codes([str(k) for k in scenario])
    except IRTError as exc:
        raise CatError(f"--model bifactor: {exc}") from exc
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        calibrator = BifactorCalibrator(
            tol=REPLAY_TOL,
            priors=BifactorPriors(),
            guessing=guessing,
            standard_errors=False,
        ).fit(train, codes, names)
    params: MirtParams = calibrator.params_.to_mirt()
    return params


def calibrate_split(
    responses: ResponseMatrix,
    model: ModelKind,
    train_rows: IntArray,
    guessing: bool = True,
    criterion: str | None = None,
) -> Calibrated:
    """Calibrate ``model`` on ``train_rows`` of ``responses``; a multidimensional design
    later fitted on them has lower asymptotes when ``guessing`` and picks items by
    ``criterion``."""
    train = responses.subset(subjects=train_rows)
    params = calibrate_quietly(train, model)
    return Calibrated(
        params,
        training_offset(params, train),
        PoolInfo.build(params),
        train,
        guessing=guessing,
        criterion=criterion,
    )


@dataclass
class Replayed:
    """Predictions of some subjects (``rows``) under one calibration, per key: (R, E)
    arrays, R the repeats of a random policy (else 1); ``theta_low``/``theta_high`` the
    θ-only interval of the plug-in keys."""

    rows: IntArray
    predicted: dict[Key, FloatArray] = field(default_factory=dict)
    # Per design key: each subject's difficulty gain (cat.designs.flatness), (E,),
    # and, with scenario codes, its predicted accuracy per scenario, (E, S).
    gain: dict[Key, FloatArray] = field(default_factory=dict)
    per_scenario: dict[Key, FloatArray] = field(default_factory=dict)
    # Per design key, (E,): |the design's prediction − its companion's from the same
    # answers| (cat.prediction.disagreement).
    disagreement: dict[Key, FloatArray] = field(default_factory=dict)
    # Per design key, (E,): the slope check of the answers against the chances the
    # design chose the items at (cat.designs.flatness.slope_z).
    slope: dict[Key, FloatArray] = field(default_factory=dict)
    # Per design key: the fallback prediction from the answers themselves, with its own
    # interval (cat.prediction.recalibrated), used where the answers do not follow the
    # design.
    fallback: dict[Key, RecalibratedRows] = field(default_factory=dict)
    theta_low: dict[Key, FloatArray] = field(default_factory=dict)
    theta_high: dict[Key, FloatArray] = field(default_factory=dict)


def replay_split(
    responses: ResponseMatrix,
    model: ModelKind,
    train_rows: IntArray,
    test_rows: IntArray,
    policies: list[str],
    lengths: list[int],
    rng: np.random.Generator,
    scenario: tuple[int, ...] | None = None,
    repeats: int = 1,
    calibrated: Calibrated | None = None,
    guessing: bool = True,
    criterion: str | None = None,
    fallback_intervals: bool = False,
) -> Replayed:
    """Calibrate ``model`` on ``train_rows`` (unless ``calibrated`` there already) and
    replay ``test_rows`` under each policy ("default": what ``cat assess`` runs) and
    length, ``repeats`` times for a random policy; predictors per ``predictors_of``, the
    plug-in with the training subjects' offset; a multidimensional design with lower
    asymptotes when ``guessing``, picking items by ``criterion``."""
    if calibrated is None:
        calibrated = calibrate_split(responses, model, train_rows, guessing, criterion)
    params, offset, pool = calibrated.params, calibrated.offset, calibrated.pool
    test = responses.subset(subjects=test_rows)
    can_answer, right = test.observed, (test.values == 1).astype(np.float64)
    masks = scenario_masks(scenario) if scenario else None
    multi = next((p for p in policies if p in MULTIDIMENSIONAL_DESIGNS), None)
    if multi is not None and not scenario:
        raise CatError(f"the {multi} design needs each item's scenario (--scenarios)")
    out = Replayed(test_rows)
    done: dict[tuple[str, str, int], CATResult] = {}  # one replay of a fixed policy
    for name in policies:
        if name in REFERENCE_DESIGNS:
            gains: dict[int, FloatArray] = {}
            slopes: dict[int, FloatArray] = {}
            expected: dict[int, tuple[BoolArray, FloatArray]] = {}
            models = calibrated.references
            if name in MULTIDIMENSIONAL_DESIGNS:
                assert scenario
                models = calibrated.with_model(name, scenario)
            by_length = models.replay(name, can_answer, right, lengths, gains, expected, slopes)
            for length in lengths:
                out.predicted[(name, length, name)] = by_length[length][None, :]
                out.gain[(name, length, name)] = gains[length]
                out.slope[(name, length, name)] = slopes[length]
                given, chances = expected[length]
                out.fallback[(name, length, name)] = recalibrated_values(
                    given, right, chances, can_answer, fallback_intervals
                )
                companion = plug_in_of_given(params, can_answer, expected[length][0], right, offset)
                out.disagreement[(name, length, name)] = np.abs(by_length[length] - companion)
                if masks is not None:
                    given, chances = expected[length]
                    out.per_scenario[(name, length, name)] = scenario_accuracy(
                        masks, can_answer, given, right, chances
                    )
            continue
        irt = name == IRT
        estimator = DEFAULT_ESTIMATOR.value if irt else EstimatorName.MLE.value
        for length in lengths:
            pieces: dict[str, list[FloatArray]] = {}
            for _ in range(repeats if is_random(name) else 1):
                # Keyed by the policy's own name: the IRT design's ("irt") is its
                # selection (default_selection) with audit items, not that policy alone.
                once = (name, estimator, length)
                result = done.get(once) if not is_random(name) else None
                if result is None:
                    policy = make_policy(name, length, scenario=scenario)
                    design = CATDesign(policy, make_estimator(estimator), StoppingRule(length))
                    result = done[once] = replay_cat(params, test, design, rng, pool)
                pieces.setdefault(PLUG_IN, []).append(
                    plug_in_accuracy(params, test, result, offset)
                )
                if irt:
                    prob = probability(result.theta_hat, params)
                    given = given_mask(can_answer, result)
                    out.gain[(name, length, PLUG_IN)] = difficulty_gain(given, right, prob)
                    if result.chances is not None:
                        asked = result.items >= 0
                        out.slope[(name, length, PLUG_IN)] = slope_z(
                            result.right, result.chances, asked
                        )
                    out.fallback[(name, length, PLUG_IN)] = recalibrated_values(
                        given, right, prob, can_answer, fallback_intervals
                    )
                    companion = calibrated.references.mixture(can_answer, given, right)
                    out.disagreement[(name, length, PLUG_IN)] = np.abs(
                        pieces[PLUG_IN][-1] - companion
                    )
                    if masks is not None:
                        chances = np.clip(prob - offset, 0.0, 1.0)
                        out.per_scenario[(name, length, PLUG_IN)] = scenario_accuracy(
                            masks, can_answer, given, right, chances
                        )
                low, high = theta_only_bounds(params, test, result, offset)
                pieces.setdefault("theta_low", []).append(low)
                pieces.setdefault("theta_high", []).append(high)
                predictors = predictors_of(name, multi)
                if RIDGE in predictors:
                    ridge = _ridge_predictions(calibrated.ridge, test, result)
                    pieces.setdefault(RIDGE, []).append(ridge)
                if MIXTURE in predictors:
                    given = given_mask(can_answer, result)
                    models = calibrated.references
                    if multi is not None:
                        assert scenario
                        models = calibrated.with_model(multi, scenario)
                    scored = models.score(can_answer, given, right)
                    for predictor, values in scored.items():
                        pieces.setdefault(predictor, []).append(values)
            for predictor in predictors_of(name, multi):
                out.predicted[(name, length, predictor)] = np.stack(pieces[predictor])
            out.theta_low[(name, length, PLUG_IN)] = np.stack(pieces["theta_low"])
            out.theta_high[(name, length, PLUG_IN)] = np.stack(pieces["theta_high"])
    return out
