"""Ridge prediction across reference subjects."""

from __future__ import annotations

import numpy as np
import pytest

from cat.errors import CatError
from cat.prediction.predictors import ridge_accuracy, ridge_loo


def test_ridge_recovers_a_linear_rule_and_its_loo_error_is_honest() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 5))
    beta = np.array([1.0, -2.0, 0.5, 0.0, 0.0])
    y = 3.0 + x @ beta + rng.normal(scale=0.1, size=200)
    x_new = np.array([0.5, 0.5, 0.5, 0.5, 0.5])
    pred, loo = ridge_loo(x, y, x_new)
    assert pred == pytest.approx(3.0 + x_new @ beta, abs=0.05)
    assert loo == pytest.approx(0.1, rel=0.2)
    with pytest.raises(CatError):
        ridge_loo(x[:2], y[:2], x_new)


def test_ridge_accuracy_counts_given_answers_exactly() -> None:
    rng = np.random.default_rng(1)
    ability = rng.normal(size=120)
    p = 1 / (1 + np.exp(-(ability[:, None] - rng.normal(size=60)[None, :])))
    refs = (rng.random((120, 60)) < p).astype(float)
    observed = np.ones_like(refs, dtype=bool)
    given = np.arange(20)
    subject = refs[0]
    acc = ridge_accuracy(refs[1:], observed[1:], given, subject[given], np.arange(60))
    assert 0 <= acc <= 1
    assert acc == pytest.approx(subject.mean(), abs=0.12)
    # Every answered item given: the prediction is the subject's own accuracy.
    all_given = ridge_accuracy(refs[1:], observed[1:], np.arange(60), subject, np.arange(60))
    assert all_given == pytest.approx(subject.mean())


def test_reference_offset_measures_a_constant_drift() -> None:
    from cat.prediction.predictors import reference_offset
    from irt.models import probability
    from irt.simulate import random_params

    params = random_params(300, np.random.default_rng(2), "3pl")
    theta = np.linspace(-2, 2, 15)
    expected = probability(theta, params).mean(axis=1)
    # references that score 0.03 below what the model expects at their θ
    assert reference_offset(params, theta, expected - 0.03) == pytest.approx(0.03, abs=1e-12)
    # only the items each reference answered count
    observed = np.zeros((15, 300), dtype=bool)
    observed[:, :100] = True
    partial = probability(theta, params)[:, :100].mean(axis=1)
    assert reference_offset(params, theta, partial, observed) == pytest.approx(0.0, abs=1e-12)
    assert reference_offset(params, np.array([np.nan]), np.array([0.5])) == 0.0
    with pytest.raises(CatError):
        reference_offset(params, theta, expected[:3])


def _reference_ridge(ref_values, ref_observed, given, answers, answered):  # type: ignore[no-untyped-def]
    """The ridge before it was batched: one SVD and one pass per penalty, per subject."""
    from cat.prediction.predictors import PENALTIES

    rest = np.setdiff1d(answered, given)
    right = np.where(ref_observed, ref_values, np.nan)
    with np.errstate(invalid="ignore"):
        item_mean = np.nanmean(right[:, given], axis=0)
    item_mean = np.where(np.isnan(item_mean), 0.5, item_mean)
    x = np.where(ref_observed[:, given], ref_values[:, given], item_mean)
    n_rest = ref_observed[:, rest].sum(axis=1)
    usable = n_rest > 0
    y = np.nansum(right[:, rest], axis=1)[usable] / n_rest[usable]
    x = x[usable]
    mx, my = x.mean(axis=0), float(y.mean())
    xc, yc = x - mx, y - my
    u, s, vt = np.linalg.svd(xc, full_matrices=False)
    uy = u.T @ yc
    best = (np.inf, my)
    for lam in PENALTIES:
        shrink = s**2 / (s**2 + lam)
        leverage = (u**2 * shrink).sum(axis=1) + 1.0 / len(y)
        loo = float(np.sqrt(np.mean(((yc - u @ (shrink * uy)) / (1 - leverage)) ** 2)))
        if loo < best[0]:
            best = (loo, my + float((answers - mx) @ (vt.T @ (s / (s**2 + lam) * uy))))
    rest_acc = float(np.clip(best[1], 0.0, 1.0))
    return (answers.sum() + rest_acc * rest.size) / answered.size


def test_batched_ridge_gives_the_per_subject_svd_predictions() -> None:
    from cat.prediction.predictors import RidgeReferences

    rng = np.random.default_rng(4)
    ability = rng.normal(size=90)
    p = 1 / (1 + np.exp(-(ability[:, None] - rng.normal(size=70)[None, :])))
    answers = (rng.random((90, 70)) < p).astype(float)
    observed = rng.random((90, 70)) > 0.15
    refs, subjects = slice(0, 40), np.arange(60, 90)
    ridge = RidgeReferences.of(answers[refs], observed[refs])
    # 10 items (more references than items: eigenvectors) and 50 (fewer: the SVD).
    for length in (10, 50):
        given = [rng.permutation(np.flatnonzero(observed[s]))[:length] for s in subjects]
        got = ridge.accuracies(
            given, [answers[s, g] for s, g in zip(subjects, given, strict=True)], observed[subjects]
        )
        expected = [
            _reference_ridge(
                answers[refs], observed[refs], g, answers[s, g], np.flatnonzero(observed[s])
            )
            for s, g in zip(subjects, given, strict=True)
        ]
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-10)
