"""A fit on small data runs on one BLAS thread; larger fits and a count the user set
keep theirs (``irt.estimation.threads``)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import irt.em
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
    loop = irt.em.run_em

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(_blas_threads())
        return loop(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(irt.em, "run_em", spy)
    EMCalibrator("2pl").fit(responses=responses)
    assert seen == [1]
    assert _blas_threads() == 2


def test_torch_threads_follow_the_same_rule(two_threads: None) -> None:
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    with blas_threads_for(1_525 * 16):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with blas_threads_for(PARALLEL_CELLS):
        assert torch.get_num_threads() == before


def test_a_small_torch_fit_loads_torch_on_one_thread() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    # A fresh process, where torch is first imported by the fit itself.
    script = """
import sys
import numpy as np
import irt.em
from irt.simulate import random_params, simulate_responses
assert "torch" not in sys.modules
seen = []
loop = irt.em.run_em
def spy(*args, **kwargs):
    seen.append(sys.modules["torch"].get_num_threads())
    return loop(*args, **kwargs)
irt.em.run_em = spy
rng = np.random.default_rng(0)
data = simulate_responses(random_params(10, rng, "2pl"), rng.normal(size=50), rng)
irt.em.EMCalibrator("2pl", device="torch:cpu").fit(data)
print(seen)
"""
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[1]"
