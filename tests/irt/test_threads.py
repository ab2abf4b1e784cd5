"""A fit on small data runs on one BLAS thread; larger fits and a count the user set
keep theirs (``irt.estimation.threads``)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from irt.em import EMCalibrator
from irt.estimation.threads import PARALLEL_CELLS, THREAD_VARIABLES, blas_threads_for, cells_of
from irt.simulate import random_params, simulate_responses


def _blas_threads() -> int:
    return max(lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas")


@pytest.fixture
def two_threads(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Two BLAS threads outside, and no thread count in the environment."""
    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with threadpool_limits(limits=2, user_api="blas"):
        if _blas_threads() != 2:
            pytest.skip("this BLAS cannot be set to two threads")
        yield


def test_small_fits_run_on_one_thread_and_give_it_back(two_threads: None) -> None:
    with blas_threads_for(1_525 * 16):
        assert _blas_threads() == 1
    assert _blas_threads() == 2


def test_large_or_unknown_sizes_keep_the_threads(two_threads: None) -> None:
    for cells in (PARALLEL_CELLS, None):
        with blas_threads_for(cells):
            assert _blas_threads() == 2


def test_a_thread_count_set_by_the_user_is_kept(
    two_threads: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    with blas_threads_for(100):
        assert _blas_threads() == 2


def test_every_calibrator_fit_runs_with_its_sized_threads(
    two_threads: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(0)
    responses = simulate_responses(random_params(10, rng, "2pl"), rng.normal(size=50), rng)
    assert cells_of(responses) == 500
    seen: list[int] = []
    e_step = EMCalibrator._iterate

    def spy(self: EMCalibrator, *args: object) -> object:
        seen.append(_blas_threads())
        return e_step(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(EMCalibrator, "_iterate", spy)
    EMCalibrator("2pl").fit(responses=responses)
    assert seen == [1]
    assert _blas_threads() == 2
