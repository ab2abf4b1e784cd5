"""The run store: every paid call, written the moment its reply arrives.

SQLite from the standard library in WAL mode. ``calls`` holds one row per completed call,
keyed by ``ChatRequest.key`` (a hash of model, messages and parameters): a rerun of the
same command finds its calls here and never pays for them twice, so a crash, Ctrl-C or
``kill -9`` loses at most the calls in flight. ``failures`` records calls that spent
their retry budget (a rerun tries them again); ``results`` holds each participant's
graded final answer per item. Requests are stored as their payload only: no API key or
header is ever written.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synth.backend import ChatReply, ChatRequest
from synth.errors import SynthError

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    reply TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    latency REAL NOT NULL,
    attempts INTEGER NOT NULL,
    cost REAL,
    prompt_version TEXT NOT NULL,
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS failures (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    error TEXT NOT NULL,
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
    participant TEXT NOT NULL,
    item_id TEXT NOT NULL,
    status TEXT NOT NULL,
    answer TEXT,
    score REAL NOT NULL,
    correct INTEGER NOT NULL,
    stages TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    created TEXT NOT NULL,
    PRIMARY KEY (participant, item_id)
);
"""


@dataclass(frozen=True)
class StoredCall:
    """A completed call as the store holds it."""

    key: str
    reply: ChatReply
    cost: float | None


@dataclass(frozen=True)
class Result:
    """One participant's graded final answer to one item."""

    participant: str
    item_id: str
    status: str  # "ok", "unparsed" or "failed"
    answer: str | None
    score: float
    correct: bool
    stages: list[dict[str, Any]]  # per stage: role, model, call key, parsed answer


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


class RunStore:
    """One SQLite file; use as a context manager or call ``close``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode: a committed row survives a crash of this process (only
            # an OS crash or power cut can lose the last commits).
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            found = self._db.execute("SELECT value FROM meta WHERE name='schema'").fetchone()
        except sqlite3.Error as exc:
            raise SynthError(f"{self.path}: cannot open the run store ({exc})") from exc
        if found is None:
            self._db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        elif int(found[0]) != SCHEMA_VERSION:
            raise SynthError(f"{self.path}: run store schema {found[0]}, expected {SCHEMA_VERSION}")

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    def get_call(self, key: str) -> StoredCall | None:
        row = self._db.execute(
            "SELECT reply, prompt_tokens, completion_tokens, latency, attempts, cost "
            "FROM calls WHERE key=?",
            (key,),
        ).fetchone()
        if row is None:
            return None
        reply = ChatReply(row[0], row[1], row[2], row[3], row[4])
        return StoredCall(key, reply, row[5])

    def put_call(
        self, request: ChatRequest, reply: ChatReply, cost: float | None, prompt_version: str
    ) -> None:
        payload = json.dumps(request.payload(), ensure_ascii=False)
        # One autocommitted statement per call: it is on disk before the next call starts.
        self._db.execute(
            "INSERT OR IGNORE INTO calls VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (
                request.key,
                request.model,
                payload,
                reply.text,
                reply.prompt_tokens,
                reply.completion_tokens,
                reply.latency,
                reply.attempts,
                cost,
                prompt_version,
                _now(),
            ),
        )
        self._db.execute("DELETE FROM failures WHERE key=?", (request.key,))

    def put_failure(self, request: ChatRequest, error: str) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO failures VALUES (?,?,?,?)",
            (request.key, request.model, error, _now()),
        )

    def put_result(self, result: Result, prompt_version: str) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO results VALUES (?,?,?,?,?,?,?,?,?)",
            (
                result.participant,
                result.item_id,
                result.status,
                result.answer,
                result.score,
                int(result.correct),
                json.dumps(result.stages, ensure_ascii=False),
                prompt_version,
                _now(),
            ),
        )

    def results(self) -> list[Result]:
        rows = self._db.execute(
            "SELECT participant, item_id, status, answer, score, correct, stages FROM results "
            "ORDER BY participant, item_id"
        ).fetchall()
        return [Result(r[0], r[1], r[2], r[3], r[4], bool(r[5]), json.loads(r[6])) for r in rows]

    def set_meta(self, name: str, value: Any) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)",
            (name, json.dumps(value, ensure_ascii=False)),
        )

    def get_meta(self, name: str) -> Any:
        row = self._db.execute("SELECT value FROM meta WHERE name=?", (name,)).fetchone()
        return None if row is None else json.loads(row[0])

    def totals(self) -> dict[str, float]:
        """Calls, tokens and cost of everything stored, and the failures outstanding."""
        calls, prompt, completion, cost = self._db.execute(
            "SELECT COUNT(*), COALESCE(SUM(prompt_tokens),0), COALESCE(SUM(completion_tokens),0),"
            " COALESCE(SUM(cost),0) FROM calls"
        ).fetchone()
        (failed,) = self._db.execute("SELECT COUNT(*) FROM failures").fetchone()
        return {
            "calls": calls,
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "cost": cost,
            "failed_calls": failed,
        }
