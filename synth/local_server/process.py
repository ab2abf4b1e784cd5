"""The local server in a process of its own: ``ServerProcess`` takes what ``LocalServer``
takes and serves from a child process, so that the server and a client in this process
each get a processor (in one process they share one interpreter lock; on two cores the
demo's synthesis runs about 1.4 times faster apart). ``p_right`` is answered here, from
the same simulated models."""

from __future__ import annotations

import contextlib
import multiprocessing
from collections.abc import Mapping, Sequence
from multiprocessing.connection import Connection
from types import TracebackType
from typing import Any

from itempool import PoolItem
from synth.errors import SynthError
from synth.local_server.simulator import Simulator

#: Seconds the child may take to start listening.
START_SECONDS = 60.0


def _serve(
    conn: Connection,
    items: Sequence[PoolItem],
    models: Mapping[str, float],
    kwargs: dict[str, Any],
) -> None:
    from synth.local_server.server import LocalServer

    with LocalServer(items, models, **kwargs) as server:
        conn.send(server.base_url)
        with contextlib.suppress(EOFError):  # EOF: the parent is gone
            conn.recv()  # anything: stop


class ServerProcess:
    """``LocalServer(items, models, irt=..., seed=...)`` in a child process; a context
    manager (the child ends with the block, or with this process)."""

    def __init__(
        self,
        items: Sequence[PoolItem],
        models: Mapping[str, float],
        *,
        irt: Mapping[str, tuple[float, float, float]] | None = None,
        seed: int = 0,
    ) -> None:
        self._simulator = Simulator(items, models, seed, irt)
        self._args = (list(items), dict(models), {"irt": irt, "seed": seed})
        self._process: multiprocessing.process.BaseProcess | None = None
        self._conn: Connection | None = None
        self.base_url = ""

    def __enter__(self) -> ServerProcess:
        context = multiprocessing.get_context("spawn")  # no fork of a threaded parent
        parent, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child, *self._args), daemon=True)
        self._process.start()
        child.close()
        self._conn = parent
        if not parent.poll(START_SECONDS):
            self.__exit__(None, None, None)
            raise SynthError(f"the local server did not start within {START_SECONDS:.0f} s")
        self.base_url = str(parent.recv())
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._conn is not None:
            with contextlib.suppress(BrokenPipeError, OSError):
                self._conn.send(None)
            self._conn.close()
        if self._process is not None:
            self._process.join(timeout=10)
            if self._process.is_alive():
                self._process.terminate()
                self._process.join()

    def p_right(self, model: str, item_id: str) -> float:
        """As ``LocalServer.p_right``."""
        return self._simulator.p_right(model, item_id)
