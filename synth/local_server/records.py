"""The local server's request log: one record per chat-completion request, kept in memory
and, if asked, appended to a JSON-lines file as it happens."""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Final

__all__ = ["OUTCOMES", "RequestLog", "RequestRecord"]

#: Every value ``RequestRecord.outcome`` takes.
OUTCOMES: Final = ("ok", "429", "500", "slow", "malformed", "drop", "bad_request", "unknown_model")


@dataclass(frozen=True)
class RequestRecord:
    """One chat-completion request as the server saw it.

    ``key`` is the sha256 hex of the canonical JSON of ``[model, messages]`` (of the raw
    body for a request that is not valid JSON); ``at`` is wall-clock time
    (``time.time()``), so records from another process line up.
    """

    model: str
    item_id: str | None
    key: str
    outcome: str
    at: float


class RequestLog:
    """The records so far, safe to add to from many handler threads at once."""

    def __init__(self) -> None:
        self._records: list[RequestRecord] = []
        self._lock = threading.Lock()
        self._file: IO[str] | None = None

    def open(self, path: Path | None) -> None:
        """Also append every record to ``path`` from now on (nothing if None)."""
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = path.open("a", encoding="utf-8")

    def close(self) -> None:
        """Close the file opened by :meth:`open`; the in-memory records stay."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def add(self, record: RequestRecord) -> None:
        """Keep ``record`` and write it to the file, if one is open."""
        line = json.dumps(asdict(record), ensure_ascii=False) + "\n"
        with self._lock:
            self._records.append(record)
            if self._file is not None:
                # One flushed line per request: a reader in another process sees it at
                # once, and it survives the crash of whoever sent the request.
                self._file.write(line)
                self._file.flush()

    def records(self) -> list[RequestRecord]:
        """A copy of the records so far, in the order they were added."""
        with self._lock:
            return list(self._records)
