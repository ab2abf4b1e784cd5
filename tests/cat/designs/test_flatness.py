import numpy as np
import pytest

from cat.assessment.result import DifficultyCheck
from cat.assessment.session import AssessmentSession, SessionConfig
from cat.assessment.summary import _difficulty_check, _slope_check, slope_threshold
from cat.designs.flatness import SLOPE_FLAG, difficulty_gain, slope_z
from irt.simulate import random_params
from itempool import PredictionErrors


def test_answers_that_follow_the_chances_gain_and_flat_ones_do_not() -> None:
    rng = np.random.default_rng(0)
    prob = rng.uniform(0.05, 0.95, size=(1, 2000))
    given = np.ones_like(prob, dtype=bool)
    following = (rng.random(prob.shape) < prob).astype(float)
    flat = (rng.random(prob.shape) < 0.5).astype(float)
    # Expected: ln 2 − E[H(p)] ≈ 0.148 for p ~ U(0.05, 0.95); a flat half: ≈ −0.19.
    assert difficulty_gain(given, following, prob)[0] > 0.1
    assert difficulty_gain(given, flat, prob)[0] < -0.1
    # Only the given items count; none given is undefined.
    half = given.copy()
    half[0, 1000:] = False
    assert difficulty_gain(half, following, prob)[0] == pytest.approx(
        difficulty_gain(given[:, :1000], following[:, :1000], prob[:, :1000])[0]
    )
    assert np.isnan(difficulty_gain(np.zeros_like(given), following, prob)[0])


def _session(flat: bool) -> AssessmentSession:
    params = random_params(300, np.random.default_rng(1), "2pl")
    session = AssessmentSession(params, SessionConfig(max_items=150))
    rng = np.random.default_rng(2)
    index = {item: j for j, item in enumerate(params.item_ids)}
    while not session.done:
        for item in session.next_items():
            j = index[item]
            p = 0.5 if flat else 1 / (1 + np.exp(-params.a[j] * (1.0 - params.b[j])))
            session.record(item, int(rng.random() < p))
    return session


def test_a_model_below_every_reference_is_flagged_with_the_reason() -> None:
    errors = PredictionErrors(
        folds=5,
        seed=0,
        policy="mfi",
        errors={"150": [0.01, -0.02, 0.03]},
        difficulty_gain={"150": [0.02, 0.05, 0.08]},
    )
    flat, typical = _session(flat=True), _session(flat=False)
    for session in (flat, typical):
        positions = np.array([session.params.item_ids.index(i) for i in session.given])
        check = _difficulty_check(session, positions, errors, None)
        assert isinstance(check, DifficultyCheck) and check.references == 3 and check.length == 150
        assert check.lowest_reference == 0.02
        assert check.flagged == (check.gain < 0.02)
        if check.flagged:
            assert check.reason is not None and "hardly depend on item difficulty" in check.reason
    flat_check = _difficulty_check(
        flat, np.array([flat.params.item_ids.index(i) for i in flat.given]), errors, None
    )
    assert isinstance(flat_check, DifficultyCheck) and flat_check.gain < 0.02 and flat_check.flagged
    # Without stored gains there is no check, only the reason why.
    bare = errors.model_copy(update={"difficulty_gain": None})
    reason = _difficulty_check(flat, np.arange(3), bare, None)
    assert isinstance(reason, str) and "no difficulty gains" in reason


def test_the_slope_check_is_standard_normal_under_the_model_and_far_below_for_flat() -> None:
    rng = np.random.default_rng(3)
    # 2,000 examinees, 60 items each, chances spread as audits spread them.
    chances = rng.uniform(0.1, 0.95, size=(2000, 60))
    asked = np.ones_like(chances, dtype=bool)
    following = (rng.random(chances.shape) < chances).astype(float)
    z = slope_z(following, chances, asked)
    assert abs(float(np.mean(z))) < 0.1 and abs(float(np.std(z)) - 1.0) < 0.1
    assert float(np.mean(z < SLOPE_FLAG)) < 0.02  # one-sided 1%, with margin
    flat = (rng.random(chances.shape) < 0.5).astype(float)
    assert float(np.median(slope_z(flat, chances, asked))) < -4.0
    # Only the asked items count; one asked item (or one chance) says nothing.
    part = asked.copy()
    part[:, 30:] = False
    assert slope_z(following, chances, part)[0] == pytest.approx(
        slope_z(following[:, :30], chances[:, :30], asked[:, :30])[0]
    )
    one = np.zeros_like(asked)
    one[:, 0] = True
    assert np.isnan(slope_z(following, chances, one)).all()
    assert np.isnan(slope_z(following, np.full_like(chances, 0.6), asked)).all()


def test_sessions_keep_each_items_chance_and_the_flat_one_is_flagged() -> None:
    flat, typical = _session(flat=True), _session(flat=False)
    for session in (flat, typical):
        assert len(session.chances) == len(session.given) == 150
        assert all(0 < c < 1 for c in session.chances)
    # No reference z stored: the design's own one-sided 1% point.
    flat_check, typical_check = _slope_check(flat, None), _slope_check(typical, None)
    assert flat_check is not None and typical_check is not None
    assert flat_check.threshold == SLOPE_FLAG and flat_check.references is None
    assert flat_check.flagged and flat_check.z < -4.0 and flat_check.reason is not None
    assert not typical_check.flagged and typical_check.reason is None
    assert flat_check.items == 150 and flat_check.audit_every == 10


def test_the_threshold_is_the_5_percent_point_of_the_references_fitted_normal() -> None:
    zs = [float(z) for z in np.linspace(-3.0, 3.0, 39)]
    errors = PredictionErrors(
        folds=5, seed=0, policy="mfi", errors={"150": [0.01] * 39}, slope_z={"150": zs}
    )
    spread = float(np.std(zs, ddof=1))
    assert slope_threshold(errors, 120) == (pytest.approx(-1.6449 * spread, abs=1e-3), 39)
    # One reference far out moves the threshold by its share, not to itself.
    outlier = errors.model_copy(update={"slope_z": {"150": [-9.0, *zs[1:]]}})
    threshold, _ = slope_threshold(outlier, 150)
    assert -6.0 < threshold < -1.6449 * spread
    few = errors.model_copy(update={"slope_z": {"150": zs[:9]}, "errors": {"150": [0.0] * 9}})
    assert slope_threshold(few, 150) == (SLOPE_FLAG, None)
    assert slope_threshold(None, 150) == (SLOPE_FLAG, None)
