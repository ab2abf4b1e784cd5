"""How many BLAS threads a fit runs with.

OpenBLAS splits any matrix product above a small size across every core. A fit on a
human-sized data set makes thousands of mid-sized products a second, and there the
threads' start-up and spinning cost more than they share: R's ``bfactor`` comparison
(a bifactor 2PL on 1,525 × 16 answers) took 230 s with the default two threads on a
2-core machine and 57 s with one. A fit's products grow with its response matrix, so a
fit on fewer than ``PARALLEL_CELLS`` cells runs on one BLAS thread, and a larger one
keeps the default, where the products are large enough to share. A thread count the
user set in the environment is always left as it is. torch's thread pool, which the
``torch:cpu`` path runs on, follows the same rule.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

#: Response cells (subjects × items) from which a fit keeps the default BLAS threads.
PARALLEL_CELLS = 4_000_000

#: Variables by which a user sets the BLAS threads; any of them set means "as told".
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


@contextmanager
def blas_threads_for(cells: int | None, torch: bool = False) -> Iterator[None]:
    """Run the block with one BLAS thread when a fit on ``cells`` response cells gains
    nothing from more (None: size unknown, leave the default); with ``torch`` (a fit
    that will run on it), torch's threads too, importing it first."""
    if cells is None or cells >= PARALLEL_CELLS or any(map(os.environ.get, THREAD_VARIABLES)):
        yield
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a dependency; a bare install still fits
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"), _one_torch_thread(torch):
        yield


@contextmanager
def _one_torch_thread(load: bool) -> Iterator[None]:
    """torch's own thread pool (the ``torch:cpu`` path) held to one thread too, when torch
    is loaded (or ``load``: about to be): a 300 x 2,000 fit took 13 s on two busy cores
    with its default, 1 s with one."""
    torch = sys.modules.get("torch")
    if torch is None and load:
        try:
            import torch
        except ImportError:
            torch = None
    if torch is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def cells_of(data: object) -> int | None:
    """Subjects × items of a response table (None for anything else)."""
    n_subjects = getattr(data, "n_subjects", None)
    n_items = getattr(data, "n_items", None)
    if isinstance(n_subjects, int) and isinstance(n_items, int):
        return n_subjects * n_items
    return None
