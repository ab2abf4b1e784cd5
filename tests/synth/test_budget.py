"""The budget of requests in flight, shared by event loops in several threads."""

from __future__ import annotations

import asyncio
import threading

import pytest

from synth.budget import RequestBudget
from synth.errors import SynthError


def test_loops_in_several_threads_share_one_bound() -> None:
    budget = RequestBudget(3)
    done = [0]
    lock = threading.Lock()

    async def call() -> None:
        async with budget.slot():
            assert budget.in_use <= 3
            await asyncio.sleep(0.002)
            with lock:
                done[0] += 1

    async def many() -> None:
        await asyncio.gather(*(call() for _ in range(20)))

    threads = [threading.Thread(target=asyncio.run, args=(many(),)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert done[0] == 80
    assert budget.peak == 3  # used to the full, never beyond
    assert budget.in_use == 0


def test_a_cancelled_waiter_leaves_no_slot_taken() -> None:
    budget = RequestBudget(1)

    async def main() -> None:
        await budget.acquire()
        waiter = asyncio.create_task(budget.acquire())
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        budget.release()
        # granted and cancelled at once: the slot passes on rather than leaking
        await budget.acquire()
        racing = asyncio.create_task(budget.acquire())
        await asyncio.sleep(0)
        budget.release()  # hands the slot to racing ...
        racing.cancel()  # ... which is cancelled before it runs
        with pytest.raises(asyncio.CancelledError):
            await racing
        await asyncio.sleep(0)
        assert budget.in_use == 0
        async with budget.slot():
            assert budget.in_use == 1

    asyncio.run(main())
    assert budget.in_use == 0


@pytest.mark.parametrize("limit", [0, -1, 1.5, True])
def test_a_bad_limit_is_refused(limit: object) -> None:
    with pytest.raises(SynthError, match="concurrency"):
        RequestBudget(limit)  # type: ignore[arg-type]
