"""The run store: every paid call, written the moment its reply arrives.

SQLite from the standard library in WAL mode. ``calls`` holds one row per completed call,
keyed by ``ChatRequest.key`` (a hash of model, messages and parameters): a rerun of the
same command finds its calls here and never pays for them twice, so a crash, Ctrl-C or
``kill -9`` loses at most the calls in flight. ``failures`` records calls that spent
their retry budget (a rerun tries them again); ``results`` holds each participant's
graded final answer per item; ``judgements`` holds the LLM judge's score of each open
answer, keyed by (item, participant, the reply's hash, judge model, judge prompt version)
so that a rerun never asks the judge twice; ``batch_requests`` holds every request
written into a batch file (``synth.batch_round``), so that a result line finds its
request by its ``custom_id``, with the error results it got; ``batches`` holds each
batch of the Batch API path (``synth.batch_api``): its name, the keys it holds (written
before its file is uploaded), its file id (after the upload), its batch id (after the
batch is created) and whether its results are imported, so that a run killed at any
point resumes its batches and submits nothing twice. Requests are stored as their
payload only: no API key or header is ever written.

Schema 2 (issue 15) added ``credit``, ``points``, ``max_score`` and ``reply_hash`` to
``results`` and the ``judgements`` table. Schema 3 (issue 28) added to ``calls`` what each
call was for and how its reply was graded: ``item_id`` and ``stage`` (from the request:
``ChatRequest.item_id``, ``ChatRequest.stage``), ``answer`` (the parsed answer) and
``grade`` (JSON: status, correct, points, max_score, credit, target; a judge's call: its
parsed score), and ``item_id`` to ``batch_requests`` (a batch's reply is stored with it).
``cat export`` (``synth.export_calls``) reads them. A schema 1 or 2 store is migrated
when opened, in one transaction: the new columns are added empty (NULL); the runner fills
the results' grading by grading the stored final replies again, without any call, and
``cat export`` grades calls stored without a grade where it is given the pool.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from synth.backend import ChatReply, ChatRequest
from synth.errors import SynthError
from synth.store_records import CallRecord, Judgement, Result, StoredBatch, StoredCall

__all__ = [
    "SCHEMA_VERSION",
    "CallRecord",
    "Judgement",
    "Result",
    "RunStore",
    "StoredBatch",
    "StoredCall",
    "request_from_payload",
]

SCHEMA_VERSION = 4

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
    created TEXT NOT NULL,
    item_id TEXT,
    stage TEXT,
    answer TEXT,
    grade TEXT,
    reasoning TEXT,
    finish_reason TEXT,
    reasoning_tokens INTEGER
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
    credit REAL,
    points INTEGER,
    max_score INTEGER,
    reply_hash TEXT,
    PRIMARY KEY (participant, item_id)
);
CREATE TABLE IF NOT EXISTS judgements (
    item_id TEXT NOT NULL,
    participant TEXT NOT NULL,
    reply_hash TEXT NOT NULL,
    judge_model TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    status TEXT NOT NULL,
    points INTEGER,
    max_score INTEGER NOT NULL,
    prompt_hash TEXT NOT NULL,
    call_key TEXT,
    rejected INTEGER NOT NULL,
    error TEXT,
    created TEXT NOT NULL,
    PRIMARY KEY (item_id, participant, reply_hash, judge_model, prompt_version)
);
CREATE TABLE IF NOT EXISTS batch_requests (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    role TEXT NOT NULL,
    round INTEGER NOT NULL,
    errors INTEGER NOT NULL,
    last_error TEXT,
    error_seen TEXT,
    created TEXT NOT NULL,
    item_id TEXT
);
CREATE TABLE IF NOT EXISTS batches (
    name TEXT PRIMARY KEY,
    base_url TEXT NOT NULL,
    model TEXT NOT NULL,
    round INTEGER NOT NULL,
    keys TEXT NOT NULL,
    file_id TEXT,
    batch_id TEXT,
    status TEXT NOT NULL,
    imported INTEGER NOT NULL,
    created TEXT NOT NULL
);
"""

# The columns each schema added to tables that existed before it, as (table, column, type);
# new tables are made by _SCHEMA. Appended, so a migrated table has a new one's columns in
# the same order. Schema 2: the grading of results (and the judgements table).
_ADDED_IN_2 = (
    ("results", "credit", "REAL"),
    ("results", "points", "INTEGER"),
    ("results", "max_score", "INTEGER"),
    ("results", "reply_hash", "TEXT"),
)
# Schema 3: what each call was for and how its reply was graded.
_ADDED_IN_3 = (
    ("calls", "item_id", "TEXT"),
    ("calls", "stage", "TEXT"),
    ("calls", "answer", "TEXT"),
    ("calls", "grade", "TEXT"),
    ("batch_requests", "item_id", "TEXT"),
)
# Schema 4: a reasoning model's thinking, why a reply ended, the tokens it thought.
_ADDED_IN_4 = (
    ("calls", "reasoning", "TEXT"),
    ("calls", "finish_reason", "TEXT"),
    ("calls", "reasoning_tokens", "INTEGER"),
)
_MIGRATIONS = {
    1: _ADDED_IN_2 + _ADDED_IN_3 + _ADDED_IN_4,
    2: _ADDED_IN_3 + _ADDED_IN_4,
    3: _ADDED_IN_4,
}
_CALL_COLUMNS = (
    "key, model, request, reply, prompt_tokens, completion_tokens, latency, attempts, cost, "
    "prompt_version, created, item_id, stage, answer, grade, reasoning, finish_reason, "
    "reasoning_tokens"
)
_JUDGEMENT_COLUMNS = (
    "item_id, participant, reply_hash, judge_model, prompt_version, status, points, "
    "max_score, prompt_hash, call_key, rejected, error"
)
_RESULT_COLUMNS = (
    "participant, item_id, status, answer, score, correct, stages, prompt_version, created, "
    "credit, points, max_score, reply_hash"
)


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def request_from_payload(
    payload: Mapping[str, Any], item_id: str | None = None, stage: str | None = None
) -> ChatRequest:
    """The request whose ``payload()`` is ``payload`` (as the store keeps it), with the
    same key; ``item_id`` and ``stage`` say what it was for."""
    stop, extra = payload.get("stop"), payload.get("extra_body")
    return ChatRequest(
        payload["model"],
        tuple((m["role"], m["content"]) for m in payload["messages"]),
        payload["temperature"],
        payload["seed"],
        payload["max_tokens"],
        stop=None if stop is None else tuple(stop),
        extra_body=extra,
        endpoint=payload.get("endpoint", "chat"),
        item_id=item_id,
        stage=stage,
    )


def _models_clause(models: Sequence[str] | None) -> tuple[str, list[str]]:
    """A WHERE clause keeping the calls of ``models`` (none: every call)."""
    if not models:
        return "", []
    return f" WHERE model IN ({','.join('?' * len(models))})", list(models)


def _reply(columns: Sequence[Any], reasoning: Sequence[Any]) -> ChatReply:
    """A stored reply from its columns: text, prompt and completion tokens, latency,
    attempts; then reasoning, finish reason and reasoning tokens (schema 4)."""
    text, prompt, completion, latency, attempts = columns
    thought, finish, thought_tokens = reasoning
    return ChatReply(
        text,
        prompt,
        completion,
        latency,
        attempts,
        reasoning=thought,
        finish_reason=finish,
        reasoning_tokens=thought_tokens or 0,
    )


def _call_record(row: Sequence[Any]) -> CallRecord:
    grade = None if row[14] is None else json.loads(row[14])
    return CallRecord(
        key=row[0],
        model=row[1],
        request=json.loads(row[2]),
        reply=_reply(row[3:8], row[15:18]),
        cost=row[8],
        prompt_version=row[9],
        created=row[10],
        item_id=row[11],
        stage=row[12],
        answer=row[13],
        grade=grade,
    )


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
            if found is None:
                self._db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            elif found[0] in ("1", "2", "3"):
                self._migrate(int(found[0]))
            elif found[0] != str(SCHEMA_VERSION):
                raise SynthError(
                    f"{self.path}: run store schema {found[0]}, expected {SCHEMA_VERSION} "
                    "(written by another version of cat-llm?)"
                )
        except sqlite3.Error as exc:
            raise SynthError(f"{self.path}: cannot open the run store ({exc})") from exc
        #: The schema the file had when opened (1 or 2 when this opening migrated it).
        self.opened_schema = int(found[0]) if found is not None else SCHEMA_VERSION

    @classmethod
    def existing(cls, path: str | Path) -> RunStore:
        """Open the run store at ``path``, refusing (``SynthError``) a missing file or one
        that is not a run store, which opening would otherwise make into one."""
        path = Path(path)
        if not path.is_file():
            raise SynthError(
                f"{path}: no such run store" if not path.exists() else f"{path}: not a file"
            )
        try:
            # Read-only: a file that is not a store is left untouched.
            db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
            try:
                tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
                found = (
                    db.execute("SELECT value FROM meta WHERE name='schema'").fetchone()
                    if "meta" in tables
                    else None
                )
            finally:
                db.close()
        except sqlite3.Error as exc:
            raise SynthError(f"{path}: not a run store ({exc})") from exc
        if found is None or "calls" not in tables:
            raise SynthError(f"{path}: not a run store (an SQLite file without its tables)")
        return cls(path)

    def _migrate(self, found: int) -> None:
        # One transaction: a crash leaves the store as it was, never half-migrated.
        self._db.execute("BEGIN IMMEDIATE")
        try:
            for table, column, kind in _MIGRATIONS[found]:
                # A table younger than the store's schema was just made whole by _SCHEMA
                # (a schema 1 store had no batch_requests).
                have = {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}
                if column not in have:
                    self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
            self._db.execute("UPDATE meta SET value=? WHERE name='schema'", (str(SCHEMA_VERSION),))
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    def get_call(self, key: str) -> StoredCall | None:
        row = self._db.execute(
            "SELECT reply, prompt_tokens, completion_tokens, latency, attempts, cost, "
            "reasoning, finish_reason, reasoning_tokens FROM calls WHERE key=?",
            (key,),
        ).fetchone()
        if row is None:
            return None
        reply = _reply(row[0:5], row[6:9])
        return StoredCall(key, reply, row[5])

    def put_call(
        self, request: ChatRequest, reply: ChatReply, cost: float | None, prompt_version: str
    ) -> None:
        """Store a completed call with what it was for (``request.item_id`` and
        ``request.stage``); a call already stored keeps its reply."""
        payload = json.dumps(request.payload(), ensure_ascii=False)
        # One autocommitted statement per call: it is on disk before the next call starts.
        self._db.execute(
            f"INSERT INTO calls ({_CALL_COLUMNS}) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,NULL,NULL,?,?,?) "
            "ON CONFLICT(key) DO UPDATE SET item_id=COALESCE(calls.item_id, excluded.item_id), "
            "stage=COALESCE(calls.stage, excluded.stage)",
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
                request.item_id,
                request.stage,
                reply.reasoning,
                reply.finish_reason,
                reply.reasoning_tokens,
            ),
        )
        self._db.execute("DELETE FROM failures WHERE key=?", (request.key,))

    def set_call_grade(
        self,
        key: str,
        answer: str | None,
        grade: Mapping[str, object],
        *,
        item_id: str | None = None,
        stage: str | None = None,
    ) -> None:
        """Record how the stored call ``key``'s reply was read: its parsed ``answer``
        and its ``grade`` (status, correct, points, max_score, credit, target; a judge's
        call: its parsed score). ``item_id`` and ``stage`` fill those of a call stored
        without them (by a store of schema 2 or older); nothing happens to a key not
        stored."""
        self._db.execute(
            "UPDATE calls SET answer=?, grade=?, item_id=COALESCE(item_id, ?), "
            "stage=COALESCE(stage, ?) WHERE key=?",
            (answer, json.dumps(dict(grade), ensure_ascii=False), item_id, stage, key),
        )

    def count_calls(self, models: Sequence[str] | None = None) -> int:
        """How many calls are stored (of ``models`` only, where given)."""
        where, args = _models_clause(models)
        (count,) = self._db.execute(f"SELECT COUNT(*) FROM calls{where}", args).fetchone()
        return int(count)

    def call_models(self) -> list[str]:
        """The models with stored calls, in name order."""
        rows = self._db.execute("SELECT DISTINCT model FROM calls ORDER BY model")
        return [str(model) for (model,) in rows]

    def call_items(self, models: Sequence[str] | None = None) -> set[str]:
        """The item ids the stored calls (of ``models`` only, where given) record; calls
        stored without one (schema 2 or older) add nothing."""
        where, args = _models_clause(models)
        clause = f"{where} AND" if where else " WHERE"
        rows = self._db.execute(
            f"SELECT DISTINCT item_id FROM calls{clause} item_id IS NOT NULL", args
        )
        return {str(item) for (item,) in rows}

    def iter_calls(self, models: Sequence[str] | None = None) -> Iterator[CallRecord]:
        """Every stored call (of ``models`` only, where given) in the order stored, read
        a slice at a time: a big store is never held in memory."""
        where, args = _models_clause(models)
        cursor = self._db.execute(f"SELECT {_CALL_COLUMNS} FROM calls{where} ORDER BY rowid", args)
        while rows := cursor.fetchmany(500):
            for row in rows:
                yield _call_record(row)

    def call_purposes(self) -> dict[str, tuple[str, str]]:
        """Call key -> (item id, stage) as the results' stages and the judgements name
        them: what a call stored without its item and stage (schema 2 or older) was for."""
        purposes: dict[str, tuple[str, str]] = {}
        for item_id, stages in self._db.execute("SELECT item_id, stages FROM results"):
            for stage in json.loads(stages):
                key, role = stage.get("key"), stage.get("role")
                if isinstance(key, str) and isinstance(role, str):
                    purposes.setdefault(key, (item_id, role))
        rows = self._db.execute(
            "SELECT call_key, item_id FROM judgements WHERE call_key IS NOT NULL"
        ).fetchall()
        for key, item_id in rows:
            purposes.setdefault(key, (item_id, "judge"))
        return purposes

    def call_mark(self) -> int:
        """The row number of the newest stored call (0 when none): every call stored
        later has a higher one (``call_rows``), since calls are never deleted (a VACUUM
        of the file may renumber them)."""
        (mark,) = self._db.execute("SELECT COALESCE(MAX(rowid), 0) FROM calls").fetchone()
        return int(mark)

    def call_rows(self, keys: Iterable[str]) -> dict[str, tuple[int, int, int, int, str | None]]:
        """Per stored call among ``keys``: its row number (``call_mark``), prompt tokens,
        completion tokens, reasoning tokens and finish reason."""
        wanted = list(dict.fromkeys(keys))
        rows: dict[str, tuple[int, int, int, int, str | None]] = {}
        # In slices: SQLite caps the parameters of one statement (999 in older builds).
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            found = self._db.execute(
                "SELECT key, rowid, prompt_tokens, completion_tokens, reasoning_tokens, "
                f"finish_reason FROM calls WHERE key IN ({','.join('?' * len(part))})",
                part,
            ).fetchall()
            rows.update({key: (rowid, p, c, r or 0, f) for key, rowid, p, c, r, f in found})
        return rows

    def put_failure(self, request: ChatRequest, error: str) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO failures VALUES (?,?,?,?)",
            (request.key, request.model, error, _now()),
        )

    def put_result(self, result: Result, prompt_version: str) -> None:
        self._db.execute(
            f"INSERT OR REPLACE INTO results ({_RESULT_COLUMNS}) VALUES "
            "(?,?,?,?,?,?,?,?,?,?,?,?,?)",
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
                result.credit,
                result.points,
                result.max_score,
                result.reply_hash,
            ),
        )

    def regrade_result(self, result: Result) -> None:
        """Replace a stored result's grading (status, answer, score, correct, credit,
        points, max_score, reply hash), keeping its stages, prompt version and date."""
        self._db.execute(
            "UPDATE results SET status=?, answer=?, score=?, correct=?, credit=?, points=?, "
            "max_score=?, reply_hash=? WHERE participant=? AND item_id=?",
            (
                result.status,
                result.answer,
                result.score,
                int(result.correct),
                result.credit,
                result.points,
                result.max_score,
                result.reply_hash,
                result.participant,
                result.item_id,
            ),
        )

    def results(self) -> list[Result]:
        rows = self._db.execute(
            "SELECT participant, item_id, status, answer, score, correct, stages, credit, "
            "points, max_score, reply_hash FROM results ORDER BY participant, item_id"
        ).fetchall()
        return [
            Result(r[0], r[1], r[2], r[3], r[4], bool(r[5]), json.loads(r[6]), *r[7:]) for r in rows
        ]

    def get_judgement(
        self, item_id: str, participant: str, reply_hash: str, judge_model: str, version: str
    ) -> Judgement | None:
        """The stored judgement under its key, or None."""
        row = self._db.execute(
            f"SELECT {_JUDGEMENT_COLUMNS} FROM judgements WHERE item_id=? AND participant=? "
            "AND reply_hash=? AND judge_model=? AND prompt_version=?",
            (item_id, participant, reply_hash, judge_model, version),
        ).fetchone()
        return None if row is None else Judgement(*row)

    def put_judgement(self, judgement: Judgement) -> None:
        """Store ``judgement``, replacing any under the same key."""
        j = judgement
        self._db.execute(
            f"INSERT OR REPLACE INTO judgements ({_JUDGEMENT_COLUMNS}, created) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                j.item_id,
                j.participant,
                j.reply_hash,
                j.judge_model,
                j.prompt_version,
                j.status,
                j.points,
                j.max_score,
                j.prompt_hash,
                j.call_key,
                j.rejected,
                j.error,
                _now(),
            ),
        )

    def judgements(self, judge_model: str, version: str) -> list[Judgement]:
        """Every judgement by ``judge_model`` under judge prompt ``version``."""
        rows = self._db.execute(
            f"SELECT {_JUDGEMENT_COLUMNS} FROM judgements WHERE judge_model=? "
            "AND prompt_version=? ORDER BY participant, item_id",
            (judge_model, version),
        ).fetchall()
        return [Judgement(*row) for row in rows]

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Everything written inside is committed together, or not at all."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def put_batch_requests(self, calls: Iterable[tuple[ChatRequest, str]], round_no: int) -> None:
        """Record (request, stage) pairs as written into round ``round_no``'s batch files
        (before the files are written: a result can then always find its request)."""
        rows = [
            (
                request.key,
                request.model,
                json.dumps(request.payload(), ensure_ascii=False),
                role,
                round_no,
                0,
                None,
                None,
                _now(),
                request.item_id,
            )
            for request, role in calls
        ]
        with self.transaction():
            self._db.executemany(
                "INSERT INTO batch_requests (key, model, request, role, round, errors, "
                "last_error, error_seen, created, item_id) VALUES (?,?,?,?,?,?,?,?,?,?) "
                "ON CONFLICT(key) DO UPDATE SET round=excluded.round",
                rows,
            )

    def batch_request(self, key: str) -> tuple[ChatRequest, str] | None:
        """The request a batch line's ``custom_id`` names and its stage, if a batch file
        asked it."""
        row = self._db.execute(
            "SELECT request, role, item_id FROM batch_requests WHERE key=?", (key,)
        ).fetchone()
        if row is None:
            return None
        return request_from_payload(json.loads(row[0]), row[2], row[1]), row[1]

    def put_batch_error(self, key: str, error: str, seen: str) -> None:
        """Count an error result of a batch request, unless it is the very result line
        counted last (``seen`` names it): importing the same file again spends nothing."""
        self._db.execute(
            "UPDATE batch_requests SET errors=errors+1, last_error=?, error_seen=? "
            "WHERE key=? AND (error_seen IS NULL OR error_seen != ?)",
            (error, seen, key, seen),
        )

    def batch_errors(self) -> dict[str, tuple[int, str]]:
        """Each batch request with error results: their count and the last error."""
        rows = self._db.execute(
            "SELECT key, errors, last_error FROM batch_requests WHERE errors > 0"
        ).fetchall()
        return {key: (count, last or "") for key, count, last in rows}

    def batch_calls(self) -> list[tuple[str, int, int, float | None]]:
        """(model, prompt tokens, completion tokens, cost) of every stored call that a
        batch answered."""
        return self._db.execute(
            "SELECT c.model, c.prompt_tokens, c.completion_tokens, c.cost FROM calls c "
            "JOIN batch_requests b ON b.key = c.key"
        ).fetchall()

    def batch_stages(self, round_no: int) -> dict[str, int]:
        """The batch requests of round ``round_no``, counted by stage."""
        rows = self._db.execute(
            "SELECT role, COUNT(*) FROM batch_requests WHERE round=? GROUP BY role", (round_no,)
        ).fetchall()
        return dict(rows)

    def put_batches(self, batches: Iterable[StoredBatch]) -> None:
        """Record batches planned (their keys, before any upload), in one transaction."""
        with self.transaction():
            self._db.executemany(
                "INSERT INTO batches VALUES (?,?,?,?,?,?,?,?,?,?)",
                [
                    (
                        b.name,
                        b.base_url,
                        b.model,
                        b.round,
                        json.dumps(list(b.keys)),
                        b.file_id,
                        b.batch_id,
                        b.status,
                        int(b.imported),
                        _now(),
                    )
                    for b in batches
                ],
            )

    def update_batch(self, name: str, **fields: str | None) -> None:
        """Set a batch's ``file_id``, ``batch_id`` or ``status`` (committed at once)."""
        for column, value in fields.items():
            if column not in ("file_id", "batch_id", "status"):
                raise ValueError(f"not a batch field: {column}")
            self._db.execute(f"UPDATE batches SET {column}=? WHERE name=?", (value, name))

    def mark_batch_imported(self, name: str, status: str) -> None:
        """The batch ended with ``status`` and its results are stored (call inside the
        import's transaction: both are kept, or neither)."""
        self._db.execute("UPDATE batches SET imported=1, status=? WHERE name=?", (status, name))

    def open_batches(self) -> list[StoredBatch]:
        """The batches whose results are not imported yet, in the order planned."""
        rows = self._db.execute(
            "SELECT name, base_url, model, round, keys, file_id, batch_id, status, imported "
            "FROM batches WHERE imported=0 ORDER BY rowid"
        ).fetchall()
        return [
            StoredBatch(name, url, model, rnd, tuple(json.loads(keys)), fid, bid, status, bool(imp))
            for name, url, model, rnd, keys, fid, bid, status, imp in rows
        ]

    def set_meta(self, name: str, value: Any) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)",
            (name, json.dumps(value, ensure_ascii=False)),
        )

    def get_meta(self, name: str) -> Any:
        row = self._db.execute("SELECT value FROM meta WHERE name=?", (name,)).fetchone()
        return None if row is None else json.loads(row[0])

    def mean_completion_tokens(self, models: Iterable[str], stage: str) -> float | None:
        """The mean completion tokens of the stored calls of ``models`` at ``stage`` (as
        their endpoints counted them); None when there are none."""
        names = list(dict.fromkeys(models))
        if not names:
            return None
        marks = ",".join("?" * len(names))
        mean, count = self._db.execute(
            f"SELECT AVG(completion_tokens), COUNT(*) FROM calls WHERE stage = ? "
            f"AND model IN ({marks})",
            [stage, *names],
        ).fetchone()
        return None if not count else float(mean)

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
