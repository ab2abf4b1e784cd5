import numpy as np
import pytest

from cat.designs.mixture import MixtureSettings, MixtureTest, mixture_accuracy
from cat.designs.references import reference_answers
from cat.designs.replay import replay_reference_test
from cat.errors import CatError


def _refs(rng: np.random.Generator, n: int = 12, j: int = 40) -> np.ndarray:
    skill = rng.normal(size=n)
    ease = rng.normal(size=j)
    return (rng.random((n, j)) < 1 / (1 + np.exp(-(skill[:, None] + ease[None, :])))).astype(float)


def _brute_expected_variance(test: MixtureTest, row: int) -> np.ndarray:
    """E over the answer to item j of the weighted variance of the references' number
    right on the items still unasked after j, by enumeration."""
    eps = test.settings.epsilon
    w = test.weights()[row]
    out = np.full(test.refs.shape[1], np.inf)
    for j in np.flatnonzero(test.available[row]):
        left = test.available[row].copy()
        left[j] = False
        t = test.refs[:, left].sum(axis=1)
        total = 0.0
        for x in (1.0, 0.0):
            agree = test.refs[:, j] if x else 1 - test.refs[:, j]
            like = agree * (1 - eps) + (1 - agree) * eps
            z = float(w @ like)
            post = w * like / z
            mean = post @ t
            total += z * float(post @ (t - mean) ** 2)
        out[j] = total
    return out


@pytest.mark.parametrize("filled", [False, True])
def test_closed_form_expected_variance_matches_enumeration(filled: bool) -> None:
    rng = np.random.default_rng(3)
    refs = _refs(rng)
    if filled:  # some missing answers filled with a share right
        refs[rng.random(refs.shape) < 0.1] = 0.37
    can = rng.random((3, refs.shape[1])) < 0.9
    test = MixtureTest(refs, can)
    rows = np.arange(3)
    answers = (rng.random((3, refs.shape[1])) < 0.5).astype(float)
    for _ in range(4):  # after a few answers, with unequal weights
        items = test.select(rows)[:, 0]
        test.record(rows, items, answers[rows, items])
    fast = test.expected_variance()
    for row in rows:
        slow = _brute_expected_variance(test, row)
        finite = np.isfinite(slow)
        assert np.array_equal(finite, np.isfinite(fast[row]))
        np.testing.assert_allclose(fast[row, finite], slow[finite], rtol=1e-9, atol=1e-9)


def test_weights_follow_the_reference_the_examinee_copies() -> None:
    rng = np.random.default_rng(0)
    refs = _refs(rng, n=20, j=200)
    twin = 7
    can = np.ones((1, 200), dtype=bool)
    test = MixtureTest(refs, can)
    out, given = replay_reference_test(test, refs[[twin]], [40])
    assert int(np.argmax(test.weights()[0])) == twin
    assert test.weights()[0, twin] > 0.95
    assert given.sum() == 40
    assert abs(out[40][0] - refs[twin].mean()) < 0.01


def test_scoring_any_item_set_matches_the_adaptive_state() -> None:
    rng = np.random.default_rng(1)
    refs = _refs(rng)
    can = rng.random((4, refs.shape[1])) < 0.95
    answers = (rng.random(can.shape) < 0.6).astype(float)
    test = MixtureTest(refs, can)
    out, given = replay_reference_test(test, answers, [15])
    again = mixture_accuracy(refs, can, given, answers)
    np.testing.assert_allclose(again, out[15], rtol=1e-10)


def test_prediction_is_exact_once_every_item_is_asked() -> None:
    rng = np.random.default_rng(2)
    refs = _refs(rng, j=25)
    can = np.ones((2, 25), dtype=bool)
    can[1, :5] = False
    answers = (rng.random((2, 25)) < 0.5).astype(float)
    out, _ = replay_reference_test(MixtureTest(refs, can), answers, [25])
    np.testing.assert_allclose(out[25], [answers[0].mean(), answers[1, 5:].mean()])


def test_bad_settings_and_inputs_are_refused() -> None:
    with pytest.raises(CatError, match="epsilon"):
        MixtureSettings(epsilon=0.5)
    with pytest.raises(CatError, match="cover"):
        MixtureTest(np.zeros((3, 4)), np.ones((1, 5), dtype=bool))
    with pytest.raises(CatError, match="at least 2"):
        reference_answers(np.ones((1, 4)), np.ones((1, 4), dtype=bool))
    test = MixtureTest(np.eye(3), np.ones((1, 3), dtype=bool))
    test.record(np.array([0]), np.array([1]), np.array([1.0]))
    with pytest.raises(CatError, match="twice"):
        test.record(np.array([0]), np.array([1]), np.array([1.0]))


def test_missing_reference_answers_are_filled_with_the_item_share() -> None:
    values = np.array([[1, 0, -1], [1, 1, -1], [0, -1, -1]])
    observed = values >= 0
    filled = reference_answers(values, observed)
    np.testing.assert_allclose(filled[:, 0], [1, 1, 0])
    np.testing.assert_allclose(filled[2, 1], 0.5)
    np.testing.assert_allclose(filled[:, 2], 0.5)


def test_binary_references_reweight_by_the_noisy_copy_likelihood() -> None:
    from cat.designs.mixture import MixtureTest

    rng = np.random.default_rng(3)
    refs = (rng.random((15, 25)) < 0.5).astype(float)
    test = MixtureTest(refs, np.ones((2, 25), dtype=bool))
    rows, items, right = np.arange(2), np.array([4, 9]), np.array([1.0, 0.0])
    test.record(rows, items, right)
    y = refs[:, items].T
    agree = np.where(right[:, None] > 0.5, y, 1 - y)
    np.testing.assert_array_equal(test.log_weight, np.log(agree * 0.75 + (1 - agree) * 0.25))
