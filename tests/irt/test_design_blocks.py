"""The binary fit's sums over subjects taken one block of rows at a time equal those
over the whole matrix (``irt.design_blocks``)."""

from __future__ import annotations

import numpy as np
import pytest

import irt.design_blocks
import irt.scoring
from irt.design_blocks import DesignMatrices, rows_per_block
from irt.em import EMCalibrator, e_step_at
from irt.estep import marginal_log_likelihood, subject_log_likelihood
from irt.item_se import item_standard_errors
from irt.models import ModelKind, log_probabilities
from irt.mstep import MStepSpec, from_abcd
from irt.priors import ItemPriors
from irt.quadrature import normal_grid
from irt.response_table import row_blocks
from irt.responses import MISSING, ResponseMatrix
from irt.scoring import score_abilities
from irt.simulate import random_params, simulate_responses
from irt.start import classical_start

# Seven rows of 40 items a block: the 53 subjects make eight blocks, the last short.
SMALL_BLOCK = 7 * 40 * 8


@pytest.fixture(scope="module", params=[0.0, 0.2], ids=["complete", "missing"])
def data(request: pytest.FixtureRequest) -> tuple[ResponseMatrix, object]:
    rng = np.random.default_rng(7)
    params = random_params(40, rng, "3pl")
    return simulate_responses(params, rng.normal(size=53), rng, request.param), params


def test_blocks_cover_the_rows_in_order_with_the_codes_as_floats(
    data: tuple[ResponseMatrix, object],
) -> None:
    responses, _ = data
    design = DesignMatrices.from_responses(responses, SMALL_BLOCK)
    assert design.block_rows == 7
    seen = []
    for block in design.blocks():
        codes = responses.values[block.rows]
        np.testing.assert_array_equal(block.right, codes == 1)
        np.testing.assert_array_equal(block.observed_or_ones(), codes != MISSING)
        assert (block.observed is None) == responses.is_complete
        seen.extend(range(block.rows.start, block.rows.stop))
    assert seen == list(range(responses.n_subjects))


def test_rows_per_block_and_row_blocks() -> None:
    assert rows_per_block(100_000, 64 * 2**20) == 83
    assert rows_per_block(10**9, 64) == 1
    assert [(s.start, s.stop) for s in row_blocks(10, 4)] == [(0, 4), (4, 8), (8, 10)]


def test_e_step_start_and_errors_in_blocks_equal_the_whole(
    data: tuple[ResponseMatrix, object],
) -> None:
    responses, _ = data
    whole = DesignMatrices.from_responses(responses)
    blocked = DesignMatrices.from_responses(responses, SMALL_BLOCK)
    assert whole.block_rows >= responses.n_subjects
    spec = MStepSpec(
        model=ModelKind.THREE_PL, priors=ItemPriors.default_for("3pl"), theta=normal_grid().points
    )
    starts = [classical_start(design, 0.2) for design in (whole, blocked)]
    for one, other in zip(*starts, strict=True):
        np.testing.assert_allclose(other, one, rtol=1e-13)
    coords = from_abcd(*starts[0], np.ones(responses.n_items), spec)
    grid = normal_grid()
    steps = [e_step_at(coords, design, spec, grid) for design in (whole, blocked)]
    assert steps[1].loglik == pytest.approx(steps[0].loglik, rel=1e-13)
    for name in ("posterior", "expected_right", "expected_total"):
        np.testing.assert_allclose(getattr(steps[1], name), getattr(steps[0], name), rtol=1e-12)
    errors = [item_standard_errors(coords, d, steps[0].posterior, spec) for d in (whole, blocked)]
    for one, other in zip(*errors, strict=True):
        np.testing.assert_allclose(other, one, rtol=1e-10)
    log_p, log_q = log_probabilities(grid.points, _params_at(coords, spec, responses))
    np.testing.assert_allclose(
        subject_log_likelihood(blocked, log_p, log_q),
        subject_log_likelihood(whole, log_p, log_q),
        rtol=1e-13,
    )


def test_one_pl_errors_in_blocks_equal_the_whole(data: tuple[ResponseMatrix, object]) -> None:
    responses, _ = data
    spec = MStepSpec(model=ModelKind.ONE_PL, priors=ItemPriors.none(), theta=normal_grid().points)
    whole = DesignMatrices.from_responses(responses)
    blocked = DesignMatrices.from_responses(responses, SMALL_BLOCK)
    a, b, c = classical_start(whole, 0.0)
    coords = from_abcd(np.full_like(a, 1.1), b, c, np.ones_like(a), spec)
    posterior = e_step_at(coords, whole, spec, normal_grid()).posterior
    one = item_standard_errors(coords, whole, posterior, spec)
    other = item_standard_errors(coords, blocked, posterior, spec)
    np.testing.assert_allclose(other[0], one[0], rtol=1e-10)
    np.testing.assert_allclose(other[1], one[1], rtol=1e-10)


def test_fit_likelihood_and_scores_in_blocks_equal_the_whole(
    data: tuple[ResponseMatrix, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    responses, _ = data
    whole = EMCalibrator("3pl").fit(responses)
    scores = {m: score_abilities(responses, whole.params_, m) for m in ("eap", "map", "wle")}
    loglik = marginal_log_likelihood(responses, whole.params_)
    monkeypatch.setattr(irt.design_blocks, "BLOCK_BYTES", SMALL_BLOCK)
    monkeypatch.setattr(irt.scoring, "SCORING_BLOCK_BYTES", SMALL_BLOCK)
    blocked = EMCalibrator("3pl").fit(responses)
    # Sums taken in another order round differently. Each M-step stops an item's
    # Newton iterations once its step is below 1e-7 (irt.mstep), so the two fits may
    # settle up to that far apart in the intercept at every EM cycle, and b = -d/a
    # divides it by a slope below 1: a few 1e-7 in b after 7 cycles (2.3e-7 in a·b
    # with numpy 2.4's sums; 1e-7 held only while the rounding happened to agree).
    assert blocked.n_iter_ == whole.n_iter_
    np.testing.assert_allclose(blocked.params_.b, whole.params_.b, atol=1e-6)
    np.testing.assert_allclose(blocked.params_.se_b, whole.params_.se_b, rtol=1e-6)
    assert marginal_log_likelihood(responses, whole.params_) == pytest.approx(loglik, rel=1e-13)
    # Each subject is scored on its own; only the matrix products' rounding may differ
    # with the shape of the block they run on, which can end a search one step of its
    # tolerance (1e-8) apart.
    for method, one in scores.items():
        other = score_abilities(responses, whole.params_, method)
        np.testing.assert_allclose(other.theta, one.theta, rtol=0, atol=1e-7)
        np.testing.assert_allclose(other.se, one.se, rtol=1e-7)
        np.testing.assert_array_equal(other.fallback, one.fallback)


def _params_at(coords: np.ndarray, spec: MStepSpec, responses: ResponseMatrix) -> object:
    from irt.em import params_at

    return params_at(responses.item_ids, coords, spec)
