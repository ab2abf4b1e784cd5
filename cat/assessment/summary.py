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

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from cat.assessment.result import (
    Accuracy,
    AccuracyInterval,
    AssessmentSummary,
    Neighbour,
    PersonFit,
    Rank,
    ScenarioAccuracy,
    ThetaInterval,
)
from cat.engine.session import AssessmentSession
from cat.prediction.conformal import describe_widening
from cat.prediction.intervals import Z90 as _Z90
from cat.prediction.intervals import theta_and_chance, widen
from cat.prediction.predictors import reference_offset
from irt.models import probability
from irt.person_fit import LZ_FLAG, lz
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
    """Per pool item: the answer where one was given, else P_j(θ) − ``offset``."""
    expected = probability([theta], session.params)[0] - offset
    scores = np.clip(np.asarray(expected, dtype=np.float64), 0.0, 1.0)
    scores[given] = session.responses
    return scores


def summarize(
    session: AssessmentSession,
    references: list[Reference] | None = None,
    scenario_names: list[str] | None = None,
    prediction_errors: PredictionErrors | None = None,
) -> AssessmentSummary:
    """θ, SE and its 90% interval, predicted accuracy (overall and per scenario) with an
    interval from θ's uncertainty and the chance in the answers not yet seen, and the
    rank among ``references`` with the probability of being above each.

    References with an observed accuracy also calibrate the prediction: the model's
    drift at their abilities (``cat.prediction.predictors.reference_offset``) is taken off the
    expected score of every item not given. With the pool's cross-fitted
    ``prediction_errors`` the overall interval is widened, where narrower, to their
    conformal half-width around the prediction (``accuracy_interval`` says which)."""
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

    def accuracy(items: np.ndarray) -> Accuracy:
        value, low, high = (float(scores[k][items].mean()) for k in ("value", "low", "high"))
        # The items not given are answered right or wrong, not by their probability: their
        # Bernoulli spread (around P at θ̂) widens the interval beside θ's uncertainty.
        p = scores["value"][items][~given[items]]
        spread = _Z90 * float(np.sqrt(np.sum(p * (1.0 - p)))) / max(len(items), 1)
        bounds = theta_and_chance(value, low, high, spread)
        return Accuracy(value=value, low=float(bounds[0]), high=float(bounds[1]))

    overall = accuracy(everything)
    interval = AccuracyInterval(method="theta and the unseen answers' chance")
    if prediction_errors is not None:
        interval = AccuracyInterval(**describe_widening(prediction_errors, len(session.given)))
        half = float(interval.half_width or 0.0)
        low, high = widen(overall.value, overall.low, overall.high, half)
        overall = Accuracy(value=overall.value, low=float(low), high=float(high))
    scenarios = None
    if session.scenario is not None:
        codes = np.asarray(session.scenario)
        names = scenario_names or [str(k) for k in range(int(codes.max()) + 1)]
        scenarios = {
            names[k]: ScenarioAccuracy(
                **accuracy(np.flatnonzero(codes == k)).model_dump(),
                n_given=int(np.sum(codes[positions] == k)),
            )
            for k in range(len(names))
            if (codes == k).any()
        }
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
        rank=_rank(theta, se, references) if references else None,
    )


def _person_fit(session: AssessmentSession, positions: IntArray) -> PersonFit:
    """lz on the items given, at the final θ (``irt.person_fit``)."""
    if not session.given:
        return PersonFit(lz=None, flagged=False, threshold=LZ_FLAG)
    value = lz(np.array(session.responses, float), session.theta, session.params.subset(positions))
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
    p_above = norm.cdf((theta - thetas) / np.maximum(spread, 1e-12))
    ranked = sorted(zip(references, p_above, strict=True), key=lambda x: -x[0].theta)
    return Rank(
        position=current_rank(theta, thetas),
        of=len(references) + 1,
        above=[
            Neighbour(subject_id=r.subject_id, theta=r.theta, se=r.se, p_above=float(p))
            for r, p in ranked
        ],
    )
