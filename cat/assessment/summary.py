"""The end of an assessment: θ with its interval, predicted full-pool accuracy, rank.

The accuracy interval here combines θ's uncertainty with the Bernoulli chance in the
answers not yet seen; it holds no term for model misfit, which the prototype in DESIGN.md
found to dominate on long tests over big pools.
A pool that stores its references' cross-fitted errors lets ``cat assess`` widen this
interval to their conformal half-width (``cat.prediction.intervals``, which ``cat
validate`` applies to held-out subjects with errors cross-fitted inside the training
subjects, and reports the coverage of both).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from cat.assessment.result import (
    Accuracy,
    AccuracyInterval,
    AssessmentSummary,
    DifficultyCheck,
    Fallback,
    Neighbour,
    PersonFit,
    Rank,
    ScenarioAccuracy,
    SlopeCheck,
    ThetaInterval,
    UnlikeReferences,
)
from cat.assessment.session import AssessmentSession
from cat.designs.flatness import (
    SLOPE_FLAG,
    difficulty_gain,
    slope_flagged,
    slope_threshold_of,
    slope_z,
)
from cat.designs.models import MIXTURE
from cat.prediction.conformal import conformal_quantile, describe_widening
from cat.prediction.disagreement import ScaledWidth, describe_scaled, scaled_width
from cat.prediction.intervals import Z90 as _Z90
from cat.prediction.intervals import theta_and_chance, widen
from cat.prediction.predictors import reference_offset
from cat.prediction.recalibrated import recalibrated_accuracy
from cat.prediction.shares import expected_share, observed_share, share_variance
from irt.fit.persons import LZ_FLAG
from irt.types import FloatArray, IntArray
from itempool.prediction_errors import PredictionErrors


@dataclass(frozen=True)
class Reference:
    """A calibration subject new models are ranked against."""

    subject_id: str
    theta: float
    se: float
    accuracy: float | None = None


def _given_positions(session: AssessmentSession) -> IntArray:
    """Pool positions of the items given, in the order given."""
    index = {item: j for j, item in enumerate(session.params.item_ids)}
    return np.array([index[i] for i in session.given], dtype=np.int_)


def _item_scores(
    session: AssessmentSession, theta: float, offset: float, given: IntArray
) -> FloatArray:
    """Per pool item: the answer where one was given, else P_j(θ) − ``offset`` (on a
    pool of scored items, the share of the top score: ``cat.prediction.shares``)."""
    expected = expected_share(session.params, [theta])[0] - offset
    scores = np.clip(np.asarray(expected, dtype=np.float64), 0.0, 1.0)
    scores[given] = observed_share(session.params, given, session.responses)
    return scores


def summarize(
    session: AssessmentSession,
    references: list[Reference] | None = None,
    scenario_names: list[str] | None = None,
    prediction_errors: PredictionErrors | None = None,
    design_errors: Mapping[str, PredictionErrors] | None = None,
) -> AssessmentSummary:
    """θ, SE and its 90% interval, predicted accuracy (overall and per scenario) with an
    interval from θ's uncertainty and the chance in the answers not yet seen, and the
    rank among ``references`` with the probability of being above each.

    References with an observed accuracy also calibrate the prediction: the model's
    drift at their abilities (``cat.prediction.predictors.reference_offset``) is taken off the
    expected score of every item not given. With the pool's cross-fitted
    ``prediction_errors`` the overall interval is widened, where narrower, to their
    conformal half-width around the prediction (``accuracy_interval`` says which).

    A session run by a reference design (``cat.designs``) predicts the overall accuracy
    by that design, its interval ± the conformal half-width of the design's own
    cross-fitted errors in ``design_errors`` (without them, ± its own spread); θ, the
    rank and the per-scenario figures stay the IRT model's."""
    theta, se = session.theta, session.se
    with_accuracy = [r for r in references or [] if r.accuracy is not None]
    offset = (
        reference_offset(
            session.params,
            np.array([r.theta for r in with_accuracy]),
            np.array([r.accuracy for r in with_accuracy], dtype=float),
        )
        if with_accuracy
        else 0.0
    )
    lo, hi = theta - _Z90 * se, theta + _Z90 * se
    everything = np.arange(session.params.n_items)
    positions = _given_positions(session)

    # Expected accuracy is increasing in θ, so θ's interval maps to the accuracy's.
    scores = {
        key: _item_scores(session, t, offset, positions)
        for key, t in (("value", theta), ("low", lo), ("high", hi))
    }

    given = np.zeros(session.params.n_items, dtype=bool)
    given[positions] = True
    if session.scored:
        unseen_variance = share_variance(session.params, theta)
    else:
        unseen_variance = scores["value"] * (1.0 - scores["value"])

    def accuracy(items: IntArray) -> Accuracy:
        value, low, high = (float(scores[k][items].mean()) for k in ("value", "low", "high"))
        # The items not given are answered right or wrong, not by their probability: their
        # Bernoulli spread (around P at θ̂; a scored item's score variance) widens the
        # interval beside θ's uncertainty.
        unseen = unseen_variance[items][~given[items]]
        spread = _Z90 * float(np.sqrt(np.sum(unseen))) / max(len(items), 1)
        bounds = theta_and_chance(value, low, high, spread)
        return Accuracy(value=value, low=float(bounds[0]), high=float(bounds[1]))

    overall = accuracy(everything)
    interval = AccuracyInterval(method="theta and the unseen answers' chance")
    # The IRT plug-in of these answers: a reference design's companion prediction.
    plug_in = overall.value
    if session.design is not None:
        overall, interval = _design_accuracy(session, design_errors)
    companion = _companion(session, positions, plug_in)
    run_errors = _run_errors(session, prediction_errors, design_errors)
    unlike = None
    if run_errors is not None and companion is not None:
        stored, scaled = scaled_width(run_errors, len(session.given))
        if scaled is not None:
            unlike = _unlike(overall.value, companion, scaled, stored)
            interval = AccuracyInterval(
                **describe_scaled(run_errors, len(session.given), scaled, unlike.disagreement)
            )
            if session.design is not None:
                # The design's own prediction ± the scaled half-width, as cross-fitted.
                half = float(interval.half_width or 0.0)
                low, high = max(0.0, overall.value - half), min(1.0, overall.value + half)
                overall = Accuracy(value=overall.value, low=low, high=high)
    if session.design is None and run_errors is not None:
        if unlike is None:
            interval = AccuracyInterval(**describe_widening(run_errors, len(session.given)))
        half = float(interval.half_width or 0.0)
        bounds = widen(overall.value, overall.low, overall.high, half)
        overall = Accuracy(value=overall.value, low=float(bounds[0]), high=float(bounds[1]))
    scenarios = None
    scenario_method = None
    if session.scenario is not None:
        codes = np.asarray(session.scenario)
        names = scenario_names or [str(k) for k in range(int(codes.max()) + 1)]
        per_scenario: Callable[[IntArray], Accuracy] = accuracy
        scenario_method = IRT_SCENARIO_INTERVAL
        if session.design is not None:
            per_scenario = _design_scenario(session)
            scenario_method = DESIGN_SCENARIO_INTERVAL.format(session.config.design.value)
        scenarios = {
            names[k]: ScenarioAccuracy(
                **per_scenario(np.flatnonzero(codes == k)).model_dump(),
                n_given=int(np.sum(codes[positions] == k)),
            )
            for k in range(len(names))
            if (codes == k).any()
        }
        run_errors = _run_errors(session, prediction_errors, design_errors)
        widened = _widen_scenarios(scenarios, run_errors, len(session.given))
        if widened is not None:
            scenarios, scenario_method = widened
    check = _difficulty_check(session, positions, prediction_errors, design_errors)
    run_errors = _run_errors(session, prediction_errors, design_errors)
    slope = _slope_check(session, run_errors)
    fallback = None
    difficulty_flagged = isinstance(check, DifficultyCheck) and check.flagged
    if (slope is not None and slope.flagged) or difficulty_flagged:
        why = slope.reason if slope is not None and slope.flagged else None
        if why is None and isinstance(check, DifficultyCheck):
            why = check.reason
        overall, interval, fallback = _fall_back(session, positions, overall, str(why), run_errors)
    return AssessmentSummary(
        theta=theta,
        se=se,
        theta_interval=ThetaInterval(low=lo, high=hi, level=0.9),
        n_items=len(session.given),
        n_skipped=len(session.skipped),
        stop_reason=session.stop_reason,
        predicted_accuracy=overall,
        accuracy_interval=interval,
        reference_offset=offset,
        person_fit=_person_fit(session, positions),
        scenarios=scenarios,
        scenario_interval=scenario_method,
        difficulty_check=check if isinstance(check, DifficultyCheck) else None,
        difficulty_check_skipped=check if isinstance(check, str) else None,
        unlike_references=unlike,
        slope_check=slope,
        fallback=fallback,
        rank=_rank(theta, se, references) if references else None,
    )


#: How the IRT design's per-scenario intervals are made: labelled, not cross-fitted.
IRT_SCENARIO_INTERVAL = (
    "theta's uncertainty and the unseen answers' chance (model-based, not cross-fitted: "
    "too narrow where one theta does not hold the model)"
)
#: How a reference design's per-scenario intervals are made: labelled, not cross-fitted.
DESIGN_SCENARIO_INTERVAL = (
    "the {} design's own spread on the scenario's unasked items (model-based, not "
    "cross-fitted: may be too narrow)"
)


def _design_scenario(session: AssessmentSession) -> Callable[[IntArray], Accuracy]:
    """Per-scenario accuracy from the session's reference design, ± its own spread."""
    assert session.design is not None
    design = session.design

    def accuracy(items: IntArray) -> Accuracy:
        mask = np.zeros(session.params.n_items, dtype=bool)
        mask[items] = True
        value, sd = design.predicted(mask)
        half = _Z90 * sd
        return Accuracy(value=value, low=max(0.0, value - half), high=min(1.0, value + half))

    return accuracy


def _run_errors(
    session: AssessmentSession,
    prediction_errors: PredictionErrors | None,
    design_errors: Mapping[str, PredictionErrors] | None,
) -> PredictionErrors | None:
    """The stored cross-fitted errors of the design the session ran."""
    errors = (design_errors or {}).get(session.config.design.value)
    if errors is None and session.design is None:
        errors = prediction_errors
    return errors


def _widen_scenarios(
    scenarios: dict[str, ScenarioAccuracy],
    errors: PredictionErrors | None,
    length: int,
) -> tuple[dict[str, ScenarioAccuracy], str] | None:
    """Each scenario's interval widened, where narrower, to the 90% conformal half-width
    of the references' cross-fitted errors on that scenario; None without them."""
    if errors is None or not errors.scenario_errors:
        return None
    stored = errors.nearest_length(length)
    by_name = errors.scenario_errors.get(str(stored), {})
    if not by_name:
        return None
    out = {}
    for name, entry in scenarios.items():
        if name in by_name:
            half = conformal_quantile(np.abs(np.asarray(by_name[name], dtype=np.float64)))
            low, high = widen(entry.value, entry.low, entry.high, half)
            entry = entry.model_copy(update={"low": float(low), "high": float(high)})
        out[name] = entry
    covered = sum(name in by_name for name in scenarios)
    method = (
        f"widened per scenario to the references' cross-fitted errors ({errors.method}, "
        f"{stored} items; {covered} of {len(scenarios)} scenarios)"
    )
    return out, method


def _difficulty_check(
    session: AssessmentSession,
    positions: IntArray,
    prediction_errors: PredictionErrors | None,
    design_errors: Mapping[str, PredictionErrors] | None,
) -> DifficultyCheck | str:
    """The answers' difficulty gain against the references' cross-fitted gains under the
    same design (``cat.designs.flatness``), or why it cannot be made (RESULT.json's
    ``difficulty_check_skipped``)."""
    errors = _run_errors(session, prediction_errors, design_errors)
    if session.scored:
        return "the check compares 0/1 answers; this pool's items are scored"
    if not session.given:
        return "no item was answered"
    if errors is None:
        return (
            "the pool stores no cross-fitted errors of its reference models for the "
            f"{session.config.design.value} design (cat calibrate --pool stores them)"
        )
    stored = errors.nearest_length(len(session.given))
    references = (errors.difficulty_gain or {}).get(str(stored), [])
    if not references:
        return (
            "the pool's cross-fitted errors hold no difficulty gains of its reference "
            "models (calibrated by an earlier version: cat calibrate --pool again)"
        )
    given = np.zeros((1, session.params.n_items), dtype=bool)
    given[0, positions] = True
    right = np.zeros((1, session.params.n_items))
    right[0, positions] = session.responses
    prob = _final_chances(session)[None, :]
    gain = float(difficulty_gain(given, right, prob)[0])
    lowest = float(min(references))
    flagged = bool(gain < lowest)
    reason = None
    if flagged:
        reason = (
            f"the answers hardly depend on item difficulty (gain {gain:.3f} per item, below "
            f"every one of {len(references)} reference models, lowest {lowest:.3f}); the "
            "predicted accuracy assumes they do"
        )
    return DifficultyCheck(
        gain=gain,
        lowest_reference=lowest,
        references=len(references),
        length=stored,
        flagged=flagged,
        reason=reason,
    )


def _final_chances(session: AssessmentSession) -> FloatArray:
    """(J,) each item's chance of a right answer under the run's design at its end."""
    if session.design is not None:
        return np.asarray(session.design.test.answer_chances()[0], dtype=np.float64)
    return np.asarray(expected_share(session.params, [session.theta])[0], dtype=np.float64)


def _slope_check(session: AssessmentSession, errors: PredictionErrors | None) -> SlopeCheck | None:
    """The answers against the chances each item was chosen at (``slope_z``), flagged
    below ``slope_threshold`` (the references' cross-fitted z in ``errors``, or the
    design's own one-sided 1% point); None on a pool of scored items or where fewer than
    two items carry a chance."""
    if session.scored or len(session.chances) != len(session.given):
        return None
    chances = np.asarray(session.chances, dtype=np.float64)
    kept = np.isfinite(chances)
    right = np.asarray(session.responses, dtype=np.float64)[None, kept]
    z = float(slope_z(right, chances[None, kept], np.ones_like(right, dtype=bool))[0])
    if not np.isfinite(z):
        return None
    threshold, references = slope_threshold(errors, len(session.given))
    flagged = slope_flagged(z, threshold, len(session.given))
    reason = None
    if flagged:
        reason = (
            f"the answers do not follow item difficulty (slope check z {z:+.2f}, below "
            f"{threshold:+.2f}: worse than predicted on easy items, better on hard ones)"
        )
    return SlopeCheck(
        z=z,
        threshold=threshold,
        references=references,
        items=int(kept.sum()),
        audit_every=session.config.audit_every or None,
        flagged=flagged,
        reason=reason,
    )


def slope_threshold(errors: PredictionErrors | None, length: int) -> tuple[float, int | None]:
    """The z below which the slope check flags a model at ``length`` items, and how many
    references' z set it (``slope_threshold_of`` of the references' cross-fitted z
    stored in ``errors``); without enough of them, the one-sided 1% point of the
    design's own model."""
    stored = (errors.slope_z or {}).get(str(errors.nearest_length(length))) if errors else None
    threshold = slope_threshold_of(None if stored is None else np.asarray(stored))
    if threshold is None or stored is None:
        return SLOPE_FLAG, None
    return threshold, len(stored)


def _fall_back(
    session: AssessmentSession,
    positions: IntArray,
    replaced: Accuracy,
    reason: str,
    errors: PredictionErrors | None,
) -> tuple[Accuracy, AccuracyInterval, Fallback]:
    """The answers' own accuracy, recalibrated on the design's order of difficulty
    (``cat.prediction.recalibrated``), in place of ``replaced``; its interval widened,
    where narrower, to the references' cross-fitted errors of the same fallback."""
    n = session.params.n_items
    asked = np.zeros(n, dtype=bool)
    asked[positions] = True
    right = np.zeros(n)
    right[positions] = session.responses
    if session.design is not None:  # as the cross-fit replays it
        chances = np.asarray(session.design.test.item_expectations()[0], dtype=np.float64)
    else:
        chances = _final_chances(session)
    fit = recalibrated_accuracy(asked, right, chances)
    low, high = fit.low, fit.high
    method = (
        "the answers' own accuracy, recalibrated on the items' order of difficulty (the "
        "design's prediction set aside: the answers do not follow it)"
    )
    stored = errors.nearest_length(len(session.given)) if errors is not None else None
    fallen = (errors.fallback_errors or {}).get(str(stored)) if errors is not None else None
    half = None
    if fallen:
        half = conformal_quantile(np.abs(np.asarray(fallen, dtype=np.float64)))
        low, high = (float(b) for b in widen(fit.value, low, high, half))
        method += f", widened to the references' cross-fitted errors of it ({len(fallen)})"
    accuracy = Accuracy(value=fit.value, low=low, high=high)
    interval = AccuracyInterval(
        method=method,
        references=len(fallen) if fallen else None,
        length=stored if fallen else None,
        half_width=half,
        level=0.9,
    )
    fallback = Fallback(intercept=fit.intercept, slope=fit.slope, replaced=replaced, reason=reason)
    return accuracy, interval, fallback


def _companion(
    session: AssessmentSession, positions: IntArray, plug_in: float
) -> tuple[str, float] | None:
    """The companion prediction of the run's answers (``cat.prediction.disagreement``):
    the IRT plug-in for a reference design, the mixture for the IRT design (None without
    the references' answers, or on a pool of scored items)."""
    if session.design is not None:
        return IRT_COMPANION, plug_in
    models = session.reference_models
    if models is None or session.scored or not session.given:
        return None
    n = session.params.n_items
    given = np.zeros((1, n), dtype=bool)
    given[0, positions] = True
    right = np.zeros((1, n))
    right[0, positions] = session.responses
    value = models.mixture(np.ones((1, n), dtype=bool), given, right)
    return MIXTURE, float(value[0])


def _unlike(
    value: float, companion: tuple[str, float], scaled: ScaledWidth, stored: int
) -> UnlikeReferences:
    """The disagreement of ``value`` with the ``companion``'s, against the references'."""
    name, other = companion
    disagreement = abs(value - other)
    flagged = scaled.unlike(disagreement)
    reason = None
    if flagged:
        reason = (
            f"the prediction lies {100 * disagreement:.1f} points from the {name} "
            f"prediction of the same answers, more than for 9 in 10 of the {scaled.references} "
            f"reference models ({100 * scaled.threshold:.1f}): the model is unlike them, "
            "and the interval is widened for it"
        )
    return UnlikeReferences(
        companion=name,
        companion_accuracy=other,
        disagreement=disagreement,
        threshold=scaled.threshold,
        references=scaled.references,
        length=stored,
        flagged=flagged,
        reason=reason,
    )


#: The name of a reference design's companion prediction: the IRT plug-in.
IRT_COMPANION = "irt"


def _design_accuracy(
    session: AssessmentSession, design_errors: Mapping[str, PredictionErrors] | None
) -> tuple[Accuracy, AccuracyInterval]:
    """The reference design's prediction, ± its cross-fitted half-width (or its spread)."""
    assert session.design is not None
    name = session.config.design.value
    value, sd = session.design.predicted()
    errors = _run_errors(session, None, design_errors)
    if errors is not None:
        described = describe_widening(errors, len(session.given))
        described["method"] = f"the {name} design's cross-fitted errors ({errors.method})"
        interval = AccuracyInterval(**described)
        half = float(interval.half_width or 0.0)
    else:
        interval = AccuracyInterval(
            method=f"the {name} design's own spread (the pool has no cross-fitted errors)"
        )
        half = _Z90 * sd
    low, high = max(0.0, value - half), min(1.0, value + half)
    return Accuracy(value=value, low=low, high=high), interval


def _person_fit(session: AssessmentSession, positions: IntArray) -> PersonFit:
    """lz on the items given, at the final θ (``irt.fit.persons``)."""
    if not session.given:
        return PersonFit(lz=None, flagged=False, threshold=LZ_FLAG)
    answers = np.array(session.responses, float)
    # lz is defined for discrete scores: a mixed pool's continuous answers leave it (NaN
    # when only those were given).
    value = session.params.person_fit(session.theta, positions, answers)
    finite = bool(np.isfinite(value))
    return PersonFit(
        lz=float(value) if finite else None,
        flagged=finite and bool(value < LZ_FLAG),
        threshold=LZ_FLAG,
    )


def current_rank(theta: float, reference_thetas: Iterable[float]) -> int:
    """1 + the number of references above ``theta``: the model's place among them."""
    return 1 + sum(1 for t in reference_thetas if t > theta)


def _rank(theta: float, se: float, references: list[Reference]) -> Rank:
    thetas = np.array([r.theta for r in references])
    spread = np.sqrt(se**2 + np.array([r.se for r in references]) ** 2)
    from scipy.special import ndtr  # 0.4 s to import: after the run's first request

    p_above = ndtr((theta - thetas) / np.maximum(spread, 1e-12))
    ranked = sorted(zip(references, p_above, strict=True), key=lambda x: -x[0].theta)
    return Rank(
        position=current_rank(theta, thetas),
        of=len(references) + 1,
        above=[
            Neighbour(subject_id=r.subject_id, theta=r.theta, se=r.se, p_above=float(p))
            for r, p in ranked
        ],
    )
