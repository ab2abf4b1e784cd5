"""The torch path of the binary EM fit (``irt.estimation.devices``): the same fit as the
numpy path, on torch's CPU device here and on a GPU where there is one."""

from __future__ import annotations

import re

import numpy as np
import pytest

import irt.design_blocks
import irt.estimation.devices as devices
from irt.em import EMCalibrator
from irt.errors import IRTError
from irt.estimation.devices import HOST, resolve_device
from irt.estimation.methods import calibrate as fit_items
from irt.responses import ResponseMatrix
from irt.simulate import random_params, simulate_responses

torch = pytest.importorskip("torch")
pytest.importorskip("array_api_compat")

MODELS = ["1pl", "2pl", "3pl", "4pl"]


def _data(n: int, j: int, missing: float, seed: int) -> ResponseMatrix:
    rng = np.random.default_rng(seed)
    params = random_params(j, rng, "3pl")
    return simulate_responses(params, rng.normal(size=n), rng, missing)


@pytest.fixture(scope="module")
def short_test() -> ResponseMatrix:
    """Wide posteriors: the plain grid E-step."""
    return _data(400, 30, 0.1, 3)


@pytest.fixture(scope="module")
def long_test() -> ResponseMatrix:
    """Posteriors far narrower than the grid: the interpolated E-step and Laplace rows."""
    return _data(120, 1500, 0.0, 4)


def _assert_same_fit(ours: EMCalibrator, theirs: EMCalibrator) -> None:
    assert theirs.n_iter_ == ours.n_iter_
    assert theirs.converged_ == ours.converged_
    # Sums taken in another order (another BLAS) move the last digits only.
    assert theirs.loglik_ == pytest.approx(ours.loglik_, rel=1e-9)
    for name in ("a", "b", "c", "d"):
        np.testing.assert_allclose(
            getattr(theirs.params_, name), getattr(ours.params_, name), atol=1e-5, err_msg=name
        )
    assert theirs.params_.se_b is not None and ours.params_.se_b is not None
    np.testing.assert_allclose(theirs.params_.se_b, ours.params_.se_b, rtol=1e-4)
    np.testing.assert_allclose(theirs.posterior_, ours.posterior_, atol=1e-6)


@pytest.mark.parametrize("model", MODELS)
def test_torch_on_the_cpu_fits_what_numpy_fits(short_test: ResponseMatrix, model: str) -> None:
    ours = EMCalibrator(model).fit(short_test)
    theirs = EMCalibrator(model, device="torch:cpu").fit(short_test)
    assert ours.device_ == "cpu" and theirs.device_ == "torch:cpu"
    _assert_same_fit(ours, theirs)


# The models with priors: without, 120 subjects leave an item everyone got right
# unidentified, and two fits of an unidentified item need not agree.
@pytest.mark.parametrize("model", ["3pl", "4pl"])
def test_long_tests_agree_where_posteriors_are_narrower_than_the_grid(
    long_test: ResponseMatrix, model: str
) -> None:
    _assert_same_fit(
        EMCalibrator(model).fit(long_test),
        EMCalibrator(model, device="torch:cpu").fit(long_test),
    )


def test_device_blocks_sum_to_the_whole_matrix(
    short_test: ResponseMatrix, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = EMCalibrator("3pl", device="torch:cpu").fit(short_test)
    # Seven subjects a block on the device: 58 blocks, the last short.
    monkeypatch.setattr(irt.design_blocks, "BLOCK_BYTES", 7 * 30 * 8)
    monkeypatch.setattr(devices, "BLOCK_BYTES", 7 * 30 * 8)
    blocked = EMCalibrator("3pl", device="torch:cpu").fit(short_test)
    assert blocked.n_iter_ == whole.n_iter_
    # The M-step stops an item's Newton steps once one moves it less than 1e-7, so a
    # rounding difference can decide whether an item takes one more step: the fits
    # agree to that precision, not to rounding (they differed by 1.4e-8 and 3e-8 in b
    # as the driver's ridge changed).
    np.testing.assert_allclose(blocked.params_.b, whole.params_.b, atol=1e-6)
    # Blocks sum the start values' counts in another order; EM, which stops at a 1e-4
    # step, carries that rounding to ~1e-11 of the log-likelihood.
    assert blocked.loglik_ == pytest.approx(whole.loglik_, rel=1e-10)


def test_cpu_is_numpy_and_torch_names_its_device() -> None:
    assert resolve_device("cpu") is HOST
    assert resolve_device(" CPU ") is HOST
    assert resolve_device("torch:cpu").name == "torch:cpu"


def test_auto_takes_the_host_without_a_gpu() -> None:
    if torch.cuda.is_available():
        assert resolve_device("auto").name.startswith("torch:cuda")
    else:
        assert resolve_device("auto") is HOST


@pytest.mark.parametrize(
    ("device", "message"),
    [
        ("gpu", "unknown device 'gpu'"),
        ("torch:nonsense", "unknown device 'torch:nonsense'"),
        ("torch:meta", "only cpu and cuda"),
    ],
)
def test_unknown_devices_are_refused_by_name(device: str, message: str) -> None:
    with pytest.raises(IRTError, match=message):
        resolve_device(device)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_a_gpu_that_is_not_there_is_refused_with_what_to_do() -> None:
    with pytest.raises(IRTError, match=r"torch sees no GPU here.*--device cpu"):
        resolve_device("cuda")
    with pytest.raises(IRTError, match="no GPU"):
        EMCalibrator("2pl", device="cuda:0").fit(_data(20, 5, 0.0, 1))


def test_without_torch_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(devices, "_torch_or_none", lambda: None)
    with pytest.raises(IRTError, match=re.escape("pip install torch==2.13.0 array-api-compat")):
        resolve_device("cuda")
    assert resolve_device("auto") is HOST


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU that torch sees")
@pytest.mark.parametrize("model", MODELS)
def test_the_gpu_fits_what_numpy_fits(short_test: ResponseMatrix, model: str) -> None:
    ours = EMCalibrator(model).fit(short_test)
    theirs = EMCalibrator(model, device="cuda").fit(short_test)
    assert theirs.device_.startswith("torch:cuda")
    _assert_same_fit(ours, theirs)


def test_bayesian_fits_stay_on_the_cpu_and_say_so(short_test: ResponseMatrix) -> None:
    with pytest.raises(IRTError, match="Bayesian calibration runs on the cpu"):
        fit_items(short_test, "2pl", "bayes", device="torch:cpu")
    with pytest.raises(IRTError, match="unknown device 'gpu'"):
        fit_items(short_test, "2pl", "bayes", device="gpu")


def test_the_fit_record_names_the_device(short_test: ResponseMatrix) -> None:
    assert fit_items(short_test, "2pl").settings["device"] == "cpu"
    assert fit_items(short_test, "2pl", device="torch:cpu").settings["device"] == "torch:cpu"
