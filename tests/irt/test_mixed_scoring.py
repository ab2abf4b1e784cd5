"""EAP scores of mixed pools (``irt.mixed_scoring``)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp

from irt.continuous_responses import ContinuousResponses
from irt.continuous_scoring import continuous_scores
from irt.errors import IRTError
from irt.mixed import MixedParams, MixedResponses
from irt.mixed_scoring import mixed_scores
from irt.polytomous_responses import MISSING, PolytomousResponses
from irt.polytomous_scoring import polytomous_scores
from tests.irt.test_mixed import _continuous_pool, _discrete_pool, _simulate


def test_discrete_part_alone_matches_the_polytomous_scorer() -> None:
    rng = np.random.default_rng(41)
    params = MixedParams(discrete=_discrete_pool(4, 3, rng, n_3pl=1))
    responses, _ = _simulate(params, 300, rng, missing=0.2)
    assert responses.discrete is not None and params.discrete is not None
    got = mixed_scores(responses, params, prior_mean=0.3, prior_sd=1.2)
    ref = polytomous_scores(responses.discrete, params.discrete, prior_mean=0.3, prior_sd=1.2)
    np.testing.assert_allclose(got.theta, ref.theta, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got.sd, ref.sd, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(got.n_answered, ref.n_answered)
    assert got.subject_ids == ref.subject_ids
    assert np.all(got.n_continuous == 0)


def test_continuous_part_alone_matches_the_continuous_scorer() -> None:
    rng = np.random.default_rng(42)
    params = MixedParams(continuous=_continuous_pool(3, 3, rng))
    responses, _ = _simulate(params, 300, rng, missing=0.2)
    assert responses.continuous is not None and params.continuous is not None
    got = mixed_scores(responses, params, n_quad=81, bound=5.0)
    ref = continuous_scores(responses.continuous, params.continuous, n_quad=81, bound=5.0)
    np.testing.assert_allclose(got.theta, ref.theta, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got.sd, ref.sd, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(got.n_answered, ref.n_answered)
    assert np.all(got.n_discrete == 0)


def test_mixed_scores_are_the_posterior_of_both_parts_by_brute_force() -> None:
    """A subject's log posterior at each node is the prior's plus the log-probability of
    each discrete answer plus the log density of each continuous one (missing skipped),
    from the parameter objects themselves."""
    rng = np.random.default_rng(43)
    params = MixedParams(discrete=_discrete_pool(3, 3, rng), continuous=_continuous_pool(2, 2, rng))
    n = 40
    responses, _ = _simulate(params, n, rng, missing=0.3)
    assert responses.discrete is not None and params.discrete is not None
    assert responses.continuous is not None and params.continuous is not None
    nodes = np.linspace(-6.0, 6.0, 121)
    values, x = responses.discrete.values, responses.continuous.values
    log_lik = np.zeros((n, nodes.size))
    for q, t in enumerate(nodes):
        log_p = params.discrete.log_probs(np.array([t]))[0]  # (J, K)
        for j in range(values.shape[1]):
            ok = values[:, j] >= 0
            log_lik[ok, q] += log_p[j, values[ok, j]]
        dens = params.continuous.log_density(np.full(n, t), x)  # (N, J), NaN where missing
        log_lik[:, q] += np.nansum(dens, axis=1)
    log_post = log_lik - 0.5 * nodes**2
    post = np.exp(log_post - logsumexp(log_post, axis=1, keepdims=True))
    want = post @ nodes
    got = mixed_scores(responses, params)
    np.testing.assert_allclose(got.theta, want, atol=1e-8)
    np.testing.assert_allclose(got.sd**2, post @ nodes**2 - want**2, atol=1e-8)


def test_eap_recovers_theta_and_both_parts_add_information() -> None:
    rng = np.random.default_rng(44)
    params = MixedParams(discrete=_discrete_pool(6, 6, rng), continuous=_continuous_pool(4, 4, rng))
    responses, theta = _simulate(params, 2000, rng, missing=0.05)
    got = mixed_scores(responses, params)
    assert np.corrcoef(got.theta, theta)[0, 1] > 0.9
    assert got.sd.mean() == pytest.approx(np.sqrt(np.mean((got.theta - theta) ** 2)), rel=0.15)
    assert responses.discrete is not None and params.discrete is not None
    assert responses.continuous is not None and params.continuous is not None
    alone_d = polytomous_scores(responses.discrete, params.discrete)
    alone_c = continuous_scores(responses.continuous, params.continuous)
    r = [np.corrcoef(s.theta, theta)[0, 1] for s in (alone_d, alone_c)]
    assert np.corrcoef(got.theta, theta)[0, 1] > max(r)
    assert np.all(got.sd <= np.minimum(alone_d.sd, alone_c.sd) + 1e-12)


def test_a_subject_with_no_answer_gets_the_prior() -> None:
    rng = np.random.default_rng(45)
    params = MixedParams(discrete=_discrete_pool(2, 2, rng), continuous=_continuous_pool(2, 0, rng))
    full, _ = _simulate(params, 30, rng)
    assert full.discrete is not None and full.continuous is not None
    values, x = full.discrete.values.copy(), full.continuous.values.copy()
    values[:10], x[:10] = MISSING, np.nan
    responses = MixedResponses(
        PolytomousResponses.from_array(
            values,
            item_ids=full.discrete.item_ids,
            subject_ids=full.subject_ids,
            n_categories=full.discrete.n_categories,
        ),
        ContinuousResponses.from_array(
            x, item_ids=full.continuous.item_ids, subject_ids=full.subject_ids
        ),
    )
    got = mixed_scores(responses, params, prior_mean=0.5, prior_sd=0.8)
    np.testing.assert_allclose(got.theta[:10], 0.5, atol=1e-6)
    np.testing.assert_allclose(got.sd[:10], 0.8, atol=1e-4)
    assert np.all(got.n_answered[:10] == 0) and np.all(got.n_answered[10:] == 6)
    assert np.all(got.sd[10:] < 0.8)


def test_bad_input_is_refused() -> None:
    rng = np.random.default_rng(46)
    params = MixedParams(discrete=_discrete_pool(2, 2, rng), continuous=_continuous_pool(2, 0, rng))
    responses, _ = _simulate(params, 10, rng)
    with pytest.raises(IRTError, match="same items"):
        mixed_scores(responses, MixedParams(discrete=params.discrete))
    with pytest.raises(IRTError, match="prior_sd"):
        mixed_scores(responses, params, prior_sd=0.0)
    with pytest.raises(IRTError, match="MixedResponses"):
        mixed_scores(responses.discrete, params)  # type: ignore[arg-type]
