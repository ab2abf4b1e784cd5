"""``cat.comparison.interval``: the difference's half-width from the pool's errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cat.comparison.interval import (
    conformal_half_width,
    detectable_difference,
    pair_half_width,
    paired_mean,
    posterior_half_width,
    scaled_pair_half_width,
    single_half_width,
    stored_length,
)
from cat.comparison.plugin import Terms, decide, difference
from itempool import PredictionErrors

ERRORS = PredictionErrors(
    folds=5,
    seed=0,
    policy="mfi+cb",
    errors={
        "100": [0.04, -0.03, 0.01, 0.0, -0.05, 0.02],
        "250": [0.02, -0.02, 0.01, 0.0, -0.03, 0.01],
    },
)


def test_the_stored_length_is_the_longest_at_or_below_and_scaled_below_all() -> None:
    assert stored_length(ERRORS, 250) == (250, 1.0)
    assert stored_length(ERRORS, 249) == (100, 1.0)  # errors shrink with length: wide
    assert stored_length(ERRORS, 400) == (250, 1.0)
    stored, scale = stored_length(ERRORS, 25)
    assert stored == 100 and scale == pytest.approx(2.0)


def test_the_pair_half_width_is_the_conformal_quantile_of_error_differences() -> None:
    e = np.array(ERRORS.errors["250"])
    diffs = [abs(e[i] - e[k]) for i in range(6) for k in range(6) if i != k]
    width = pair_half_width(ERRORS, 250, 250, level=0.9)
    # ⌈31 · 0.9⌉ = 28th smallest of the 30 ordered pairs.
    assert width.half_width == pytest.approx(sorted(diffs)[27])
    assert width.pairs == 30 and width.references == 6 and width.lengths == (250, 250)
    below = pair_half_width(ERRORS, 25, 25, level=0.9)
    e100 = np.array(ERRORS.errors["100"])
    diffs100 = [abs(e100[i] - e100[k]) for i in range(6) for k in range(6) if i != k]
    assert below.half_width == pytest.approx(2.0 * sorted(diffs100)[27])
    # Two lengths: A's errors at one, B's at the other.
    mixed = pair_half_width(ERRORS, 100, 250, level=0.9)
    assert mixed.lengths == (100, 250)


def test_one_models_half_width_and_the_quantile_rank() -> None:
    assert conformal_half_width(np.arange(1.0, 11.0), 0.9) == 10.0  # rank ⌈11·0.9⌉ = 10
    assert conformal_half_width(np.arange(1.0, 11.0), 0.5) == 6.0
    width = single_half_width(ERRORS, 250, 0.9)
    assert width.half_width == pytest.approx(0.03)


def test_the_interval_is_the_wider_of_the_stored_and_the_posterior_one() -> None:
    terms = (Terms(0.70, 0.2, 1e-6), Terms(0.66, 0.2, 1e-6))
    posterior_only = difference(terms, (0.05, 0.05), (250, 250), None, 0.95)
    assert posterior_only.stored is None
    assert posterior_only.half_width == pytest.approx(
        posterior_half_width(((0.2 * 0.05) ** 2 + 1e-6, (0.2 * 0.05) ** 2 + 1e-6), 0.95)
    )
    widened = difference(terms, (0.05, 0.05), (250, 250), ERRORS, 0.95)
    assert widened.stored is not None and widened.stored.half_width > posterior_only.half_width
    assert widened.half_width == widened.stored.half_width
    assert widened.low == pytest.approx(0.04 - widened.half_width)
    # A precise enough pair: the stored errors no longer decide the width.
    vague = difference(terms, (1.0, 1.0), (250, 250), ERRORS, 0.95)
    assert vague.half_width == vague.posterior > vague.stored.half_width  # type: ignore[union-attr]


def test_decisions() -> None:
    terms = (Terms(0.70, 0.2, 0.0), Terms(0.60, 0.2, 0.0))
    d = difference(terms, (0.05, 0.05), (100, 100), None, 0.95)
    assert decide(d, 0.01) == "A better"
    flipped = difference((terms[1], terms[0]), (0.05, 0.05), (100, 100), None, 0.95)
    assert decide(flipped, 0.01) == "B better"
    same = difference((terms[0], terms[0]), (0.01, 0.01), (100, 100), None, 0.95)
    assert decide(same, 0.01) == "equivalent"
    assert decide(same, 0.001) is None  # neither excludes 0 nor fits inside ±0.001


def test_detectable_difference_and_the_plain_paired_interval() -> None:
    z = 1.959964
    assert detectable_difference(z * 0.01) == pytest.approx((z + 0.841621) * 0.01, rel=1e-5)
    mean, low, high = paired_mean(np.zeros(50))
    assert mean == 0.0 and low < 0 < high  # all answers alike: not a zero-width interval
    d = np.array([1.0] * 30 + [0.0] * 60 + [-1.0] * 10)
    mean, low, high = paired_mean(d)
    assert mean == pytest.approx(0.2) and low > 0
    _, low_fpc, high_fpc = paired_mean(d, population=120)
    assert high_fpc - low_fpc < high - low
    assert math.isnan(paired_mean(np.array([]))[0])


SPREAD = ERRORS.model_copy(
    update={
        "disagreement": {
            "100": [0.03, 0.01, 0.01, 0.0, 0.04, 0.01],
            "250": [0.02, 0.01, 0.01, 0.0, 0.02, 0.01],
        }
    }
)


def test_the_pair_width_scales_with_the_two_models_disagreements() -> None:
    e = np.array(SPREAD.errors["250"])
    s = np.array(SPREAD.disagreement["250"])  # type: ignore[index]
    offset = float(np.median(np.concatenate([s, s])))
    ratios = [
        abs(e[i] - e[k]) / math.hypot(s[i] + offset, s[k] + offset)
        for i in range(6)
        for k in range(6)
        if i != k
    ]
    q = sorted(ratios)[27]  # ⌈31 · 0.9⌉ = 28th of the 30 ordered pairs
    like = scaled_pair_half_width(SPREAD, 250, 250, (0.0, 0.0), level=0.9)
    unlike = scaled_pair_half_width(SPREAD, 250, 250, (0.08, 0.0), level=0.9)
    assert like is not None and unlike is not None and like.scaled
    assert like.half_width == pytest.approx(q * math.hypot(offset, offset))
    assert unlike.half_width == pytest.approx(q * math.hypot(0.08 + offset, offset))
    assert unlike.half_width > 2 * like.half_width
    # A pool calibrated before disagreements were stored keeps one width.
    assert scaled_pair_half_width(ERRORS, 250, 250, (0.08, 0.0)) is None
    terms = (Terms(0.6, 0.1, 1e-6), Terms(0.5, 0.1, 1e-6))
    one = difference(terms, (0.1, 0.1), (250, 250), ERRORS, 0.9, disagreements=(0.08, 0.0))
    assert one.stored is not None and not one.stored.scaled and one.disagreements is None
    two = difference(terms, (0.1, 0.1), (250, 250), SPREAD, 0.9, disagreements=(0.08, 0.0))
    assert two.stored is not None and two.stored.scaled and two.disagreements == (0.08, 0.0)
    assert two.half_width == pytest.approx(unlike.half_width)
    # Never narrower than the one width: two models that seem typical keep it.
    plain = pair_half_width(SPREAD, 250, 250, level=0.9)
    assert like.half_width < plain.half_width
    typical = difference(terms, (0.1, 0.1), (250, 250), SPREAD, 0.9, disagreements=(0.0, 0.0))
    assert typical.stored is not None and not typical.stored.scaled
    assert typical.half_width == pytest.approx(plain.half_width)
    assert typical.disagreements == (0.0, 0.0)
    # Widened only for a pair with a model unlike the references (its disagreement past
    # their 90% conformal quantile, 0.02 here), unless asked for every pair.
    assert like.unlike == (False, False) and unlike.unlike == (True, False)
    edge = scaled_pair_half_width(SPREAD, 250, 250, (0.02, 0.02), level=0.9)
    assert edge is not None and edge.unlike == (False, False)
    assert edge.half_width > plain.half_width
    kept = difference(terms, (0.1, 0.1), (250, 250), SPREAD, 0.9, disagreements=(0.02, 0.02))
    every = difference(
        terms, (0.1, 0.1), (250, 250), SPREAD, 0.9, disagreements=(0.02, 0.02), scale_for="every"
    )
    assert kept.half_width == pytest.approx(plain.half_width)
    assert every.half_width == pytest.approx(edge.half_width)


def test_a_decision_needs_the_shared_answers_to_agree() -> None:
    # The predictions say A by 10 points, sure of it; the answers on the 200 shared
    # items favour B (20 items only B got right, 8 only A).
    terms = (Terms(0.60, 0.1, 1e-6), Terms(0.50, 0.1, 1e-6))
    answers = np.array([1.0] * 8 + [-1.0] * 20 + [0.0] * 172)
    alone = difference(terms, (0.05, 0.05), (200, 200), ERRORS, 0.95)
    assert decide(alone, 0.01) == "A better" and alone.paired is None
    joined = difference(terms, (0.05, 0.05), (200, 200), ERRORS, 0.95, shared=answers)
    mean, low, high = paired_mean(answers, 0.95)
    assert mean == pytest.approx(-12 / 200)
    assert joined.paired == (pytest.approx(low), pytest.approx(high))
    assert joined.low == pytest.approx(low) and joined.high == alone.high
    assert decide(joined, 0.01) is None
    # Answers that agree leave the decision (and the model's interval) as it was.
    agreeing = difference(terms, (0.05, 0.05), (200, 200), ERRORS, 0.95, shared=-answers)
    assert decide(agreeing, 0.01) == "A better"
