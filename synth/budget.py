"""A budget of requests in flight, shared by event loops in different threads.

``cat assess`` with several models runs each model's test in its own thread, with its
own event loop, OpenAI client and run-store connection; one ``RequestBudget`` holds all
of their calls to ``--concurrency`` in flight at once. An ``asyncio.Semaphore`` cannot
do that (it belongs to one loop), and a ``threading.Semaphore`` would block a loop whose
own calls hold the slots. Here a waiter parks on a future of its own loop, and a freed
slot is handed to the oldest waiter, whichever loop it is in.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from synth.errors import SynthError

__all__ = ["RequestBudget"]


class RequestBudget:
    """At most ``limit`` holders at once, across threads; first come, first served."""

    def __init__(self, limit: int) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise SynthError(f"concurrency must be a whole number of at least 1, got {limit!r}")
        self.limit = limit
        self._free = limit
        self._lock = threading.Lock()
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = deque()
        #: The most holders seen at once (tests check the bound with it).
        self.peak = 0

    @property
    def in_use(self) -> int:
        """Slots held now."""
        with self._lock:
            return self.limit - self._free

    async def acquire(self) -> None:
        """Wait for a slot."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._free > 0 and not self._waiters:
                self._take()
                return
            future: asyncio.Future[None] = loop.create_future()
            waiter = (loop, future)
            self._waiters.append(waiter)
        try:
            await future
        except asyncio.CancelledError:
            with self._lock:
                if waiter in self._waiters:  # never granted: just leave the queue
                    self._waiters.remove(waiter)
                    raise
            # Granted as it was cancelled: the slot is ours, so pass it on. (A grant
            # still on its way finds the future cancelled and passes it on itself.)
            if future.done() and not future.cancelled():
                self.release()
            raise

    def release(self) -> None:
        """Give a slot back: to the oldest waiter, else to the pool."""
        with self._lock:
            while self._waiters:
                loop, future = self._waiters.popleft()
                # The slot moves straight to the waiter (``_free`` unchanged).
                try:
                    loop.call_soon_threadsafe(self._grant, future)
                except RuntimeError:  # its loop is closed: nobody waits there any more
                    continue
                return
            self._free += 1

    def _take(self) -> None:
        self._free -= 1
        self.peak = max(self.peak, self.limit - self._free)

    def _grant(self, future: asyncio.Future[None]) -> None:
        if future.cancelled():
            self.release()
        else:
            future.set_result(None)

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold a slot for the block."""
        await self.acquire()
        try:
            yield
        finally:
            self.release()
