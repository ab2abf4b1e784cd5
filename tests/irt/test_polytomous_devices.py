"""The torch path of the polytomous EM fit on one θ (``PolytomousCalibrator(device=)``):
every family's curves, and the fit of a pool of every family, as the numpy path gives
them, on torch's CPU device here and on a GPU where there is one."""

from __future__ import annotations

import numpy as np
import pytest

import irt.estimation.devices
import irt.polytomous_products
from irt.polytomous import ItemType, PolytomousParams, curves
from irt.polytomous_em import PolytomousCalibrator
from irt.polytomous_responses import PolytomousResponses
from tests.irt.test_polytomous import KINDS, random_items, simulate

torch = pytest.importorskip("torch")
pytest.importorskip("array_api_compat")

FAMILIES = ["2PL", "3PL", "graded", "graded", "gpcm", "gpcm", "sequential", "nominal", "nominal"]


@pytest.mark.parametrize(("kind", "m"), [*KINDS, (ItemType.NOMINAL, 3)])
def test_every_family_s_curves_and_derivatives_are_numpy_s(kind: ItemType, m: int) -> None:
    rng = np.random.default_rng(1)
    a, d, c = random_items(kind, m, 6, rng)
    ak = np.column_stack([rng.uniform(0.2, 2.0, (6, m - 1)), np.full(6, float(m))])
    ak = ak if kind is ItemType.NOMINAL else None
    theta = np.array([-30.0, -4.0, -0.5, 0.0, 1.2, 5.0, 30.0])
    ours = curves(kind, theta, a, d, c, ak=ak, derivatives=True)

    def tensor(x: np.ndarray | None) -> object:
        return None if x is None else torch.as_tensor(x)

    theirs = curves(
        kind, tensor(theta), tensor(a), tensor(d), tensor(c), ak=tensor(ak), derivatives=True
    )
    for name in ("log_p", "slope", "thresholds", "asymptote", "scores"):
        mine, other = getattr(ours, name), getattr(theirs, name)
        assert (mine is None) == (other is None), name
        if mine is not None:
            np.testing.assert_allclose(other.numpy(), mine, rtol=1e-12, atol=1e-14, err_msg=name)


@pytest.fixture(scope="module")
def pool() -> tuple[PolytomousResponses, list[str]]:
    """600 subjects on items of every family, a tenth of the answers missing."""
    rng = np.random.default_rng(5)
    truth = PolytomousParams.create(
        FAMILIES,
        rng.uniform(0.8, 2.0, len(FAMILIES)),
        [
            [0.3],
            [-0.2],
            [1.5, 0.2, -1.0],
            [1.0, -1.5],
            [0.5, 0.0, -1.0],
            [1.0],
            [1.0, 0.0, -0.5],
            [0.5, 0.2, -0.4],
            [0.8, -0.3, 0.1],
        ],
        [0, 0.2, 0, 0, 0, 0, 0, 0, 0],
        ak=[[], [], [], [], [], [], [], [0.7, 1.6, 3.0], [1.3, 2.2, 3.0]],
    )
    return simulate(truth, 600, rng, missing=0.1)[0], FAMILIES


def _assert_same_fit(ours: PolytomousCalibrator, theirs: PolytomousCalibrator) -> None:
    assert theirs.n_iter_ == ours.n_iter_
    assert theirs.converged_ and ours.converged_
    # Sums taken in another order move the last digits only.
    assert theirs.loglik_ == pytest.approx(ours.loglik_, rel=1e-9)
    for name in ("a", "d", "c", "ak"):
        np.testing.assert_allclose(
            getattr(theirs.params_, name), getattr(ours.params_, name), atol=1e-5, err_msg=name
        )


def test_torch_on_the_cpu_fits_what_numpy_fits(pool: tuple[PolytomousResponses, list[str]]) -> None:
    responses, types = pool
    ours = PolytomousCalibrator(types).fit(responses)
    theirs = PolytomousCalibrator(types, device="torch:cpu").fit(responses)
    assert ours.device_ == "cpu" and theirs.device_ == "torch:cpu"
    _assert_same_fit(ours, theirs)
    # The standard errors are the host's, at estimates that agree.
    assert ours.se_ is not None and theirs.se_ is not None
    np.testing.assert_allclose(theirs.se_.a, ours.se_.a, rtol=1e-3)


def test_a_pool_too_large_to_hold_whole_is_fitted_the_same_in_blocks(
    pool: tuple[PolytomousResponses, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    responses, types = pool
    ours = PolytomousCalibrator(types, standard_errors=None).fit(responses)
    monkeypatch.setattr(irt.polytomous_products, "WHOLE_BYTES", 0)
    monkeypatch.setattr(irt.estimation.devices, "BLOCK_BYTES", 8 * 9 * 50)  # 50 patterns
    theirs = PolytomousCalibrator(types, standard_errors=None).fit(responses)
    _assert_same_fit(ours, theirs)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU that torch sees")
def test_the_gpu_fits_what_numpy_fits(pool: tuple[PolytomousResponses, list[str]]) -> None:
    responses, types = pool
    _assert_same_fit(
        PolytomousCalibrator(types, standard_errors=None).fit(responses),
        PolytomousCalibrator(types, standard_errors=None, device="cuda").fit(responses),
    )
