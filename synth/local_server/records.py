"""The local server's request log: one record per chat-completion request, kept in memory
and, if asked, appended to a JSON-lines file as it happens."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any, Final

__all__ = ["OUTCOMES", "STANDARD_FIELDS", "RequestLog", "RequestRecord", "request_parameters"]

#: Every value ``RequestRecord.outcome`` takes.
OUTCOMES: Final = ("ok", "429", "500", "slow", "malformed", "drop", "bad_request", "unknown_model")


#: Body fields of a chat-completion request that a record keeps under their own names;
#: any other field goes into ``RequestRecord.extra``.
STANDARD_FIELDS: Final = ("model", "messages", "temperature", "max_tokens", "stop", "seed")


@dataclass(frozen=True)
class RequestRecord:
    """One chat-completion request as the server saw it.

    ``key`` is the sha256 hex of the canonical JSON of ``[model, messages]`` (of the raw
    body for a request that is not valid JSON); ``at`` is wall-clock time
    (``time.time()``), so records from another process line up.

    The generation parameters as the body gave them, so that a test can check that a
    setting reached the endpoint: ``temperature``, ``max_tokens`` and ``seed`` (None
    when absent or null), ``stop`` (a list; None when absent), ``extra`` (every other
    body field, e.g. ``reasoning_effort``; None when there is none), ``system``
    (the text of the first system message; None when there is none) and ``messages``
    (every message as [role, text], so that a test can check the prompt itself; a
    completions request's prompts as user messages). ``route`` is "chat" for
    ``/v1/chat/completions`` and "completions" for ``/v1/completions``.
    """

    model: str
    item_id: str | None
    key: str
    outcome: str
    at: float
    temperature: float | None = None
    max_tokens: int | None = None
    stop: list[str] | None = None
    seed: int | None = None
    extra: dict[str, Any] | None = None
    system: str | None = None
    messages: list[tuple[str, str]] | None = None
    route: str = "chat"


def request_parameters(body: Mapping[str, Any]) -> dict[str, Any]:
    """The generation parameters of a decoded request ``body``, as ``RequestRecord``
    keeps them (its fields from ``temperature`` on)."""
    stop = body.get("stop")
    extra = {k: v for k, v in body.items() if k not in STANDARD_FIELDS}
    messages = body.get("messages")
    system = None
    turns = None
    if isinstance(messages, list):
        turns = [
            (str(m.get("role")), _text(m.get("content"))) for m in messages if isinstance(m, dict)
        ]
        for message in messages:
            if isinstance(message, dict) and message.get("role") == "system":
                content = message.get("content")
                system = content if isinstance(content, str) else json.dumps(content)
                break
    return {
        "temperature": _number(body.get("temperature")),
        "max_tokens": _whole(body.get("max_tokens")),
        "stop": [stop] if isinstance(stop, str) else (list(stop) if stop is not None else None),
        "seed": _whole(body.get("seed")),
        "extra": extra or None,
        "system": system,
        "messages": turns,
    }


def _text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


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
