"""The local server's Batch API (``/v1/files``, ``/v1/batches``), built for the tests of
``cat synth``'s batch path: files are uploaded and downloaded, and a batch goes through
OpenAI's status transitions, one step each time it is retrieved:
``validating`` → ``in_progress`` → ``completed`` (or ``failed``, ``expired``,
``cancelled``).

A batch's lines are answered by the server's simulated models (the same reply as over
``/v1/chat/completions``). ``BatchFaults`` makes a batch come back imperfect, as real
ones do: a share of its lines as errors (in the error file), a share left out of both
files, a share of whole batches failed (no output) or expired (half the lines answered,
the rest in the error file as ``batch_expired``). Every ``custom_id`` of every batch
created is kept in ``submitted``, so a test can check that nothing was submitted twice.
"""

from __future__ import annotations

import json
import random
import threading
import time
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any

from synth.local_server.protocol import ChatCompletions

__all__ = [
    "BatchFaults",
    "BatchService",
    "answer_line",
    "error_line",
    "line_fate",
    "multipart_fields",
]


@dataclass(frozen=True)
class BatchFaults:
    """Shares of lines answered as errors or left out, and of batches failed or expired;
    how long a batch runs (in retrieves); how many requests of a model may be in
    flight."""

    line_error_rate: float = field(
        default=0.0, metadata={"help": "share of lines answered as errors"}
    )
    line_drop_rate: float = field(
        default=0.0, metadata={"help": "share of lines left out of both files"}
    )
    fail_rate: float = field(default=0.0, metadata={"help": "share of batches failed"})
    expire_rate: float = field(
        default=0.0, metadata={"help": "share of batches expired (half their lines answered)"}
    )
    in_progress_polls: int = field(
        default=1,
        metadata={"help": "retrieves a batch stays in_progress before it ends (its run time)"},
    )
    max_enqueued: int = field(
        default=0,
        metadata={
            "help": "requests a model may have in batches in flight; a batch that would "
            "pass it fails with token_limit_exceeded, as OpenAI's enqueued-token limit "
            "does (0: no limit)"
        },
    )


class BatchService:
    """Files and batches in memory; thread-safe."""

    def __init__(self, api: ChatCompletions, faults: BatchFaults, seed: int = 0) -> None:
        self.api, self.faults = api, faults
        self._rng = random.Random(f"batches {seed}")
        self._lock = threading.Lock()
        self._files: dict[str, tuple[dict[str, Any], bytes]] = {}
        self._batches: dict[str, dict[str, Any]] = {}
        #: Every custom_id of every batch created, in order (duplicates kept).
        self.submitted: list[str] = []
        #: The batches that failed for the limit of requests in flight, by id.
        self._refused: set[str] = set()
        self._models: dict[str, str] = {}
        self._polls: dict[str, int] = {}  # retrieves of each batch in progress

    # --- files ------------------------------------------------------------------------
    def upload(self, filename: str, purpose: str, content: bytes) -> dict[str, Any]:
        with self._lock:
            return self._add_file(filename, purpose, content)

    def _add_file(self, filename: str, purpose: str, content: bytes) -> dict[str, Any]:
        file_id = f"file-{len(self._files) + 1:06d}"
        meta = {
            "id": file_id,
            "object": "file",
            "bytes": len(content),
            "created_at": int(time.time()),
            "filename": filename,
            "purpose": purpose,
            "status": "processed",
        }
        self._files[file_id] = (meta, content)
        return meta

    def file(self, file_id: str) -> dict[str, Any] | None:
        with self._lock:
            found = self._files.get(file_id)
        return None if found is None else found[0]

    def content(self, file_id: str) -> bytes | None:
        with self._lock:
            found = self._files.get(file_id)
        return None if found is None else found[1]

    # --- batches ----------------------------------------------------------------------
    def create(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """A new batch from ``{"input_file_id", "endpoint", "completion_window",
        "metadata"}``; (status code, body)."""
        with self._lock:
            found = self._files.get(str(body.get("input_file_id")))
            if found is None or found[0]["purpose"] != "batch":
                return 400, _error("input_file_id must name an uploaded file of purpose batch")
            if body.get("endpoint") != "/v1/chat/completions":
                return 400, _error("this server batches /v1/chat/completions only")
            lines = [json.loads(line) for line in found[1].decode().splitlines() if line.strip()]
            batch_id = f"batch_{len(self._batches) + 1:06d}"
            model = str(lines[0]["body"].get("model")) if lines else ""
            batch: dict[str, Any] = {
                "id": batch_id,
                "object": "batch",
                "endpoint": body["endpoint"],
                "errors": None,
                "input_file_id": body["input_file_id"],
                "completion_window": body.get("completion_window", "24h"),
                "status": "validating",
                "output_file_id": None,
                "error_file_id": None,
                "created_at": int(time.time()),
                "in_progress_at": None,
                "expires_at": None,
                "finalizing_at": None,
                "completed_at": None,
                "failed_at": None,
                "expired_at": None,
                "cancelling_at": None,
                "cancelled_at": None,
                "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
                "metadata": body.get("metadata") or None,
            }
            if self._over_limit(model, len(lines)):
                self._refused.add(batch_id)
            self._models[batch_id] = model
            self.submitted.extend(str(line.get("custom_id")) for line in lines)
            self._batches[batch_id] = batch
            return 200, dict(batch)

    def retrieve(self, batch_id: str) -> dict[str, Any] | None:
        """The batch, moved one step on (``validating`` → ``in_progress`` → its end)."""
        with self._lock:
            batch = self._batches.get(batch_id)
            if batch is None:
                return None
            if batch["status"] == "validating" and batch_id in self._refused:
                batch["status"], batch["failed_at"] = "failed", int(time.time())
                limit = self.faults.max_enqueued
                batch["errors"] = {
                    "object": "list",
                    "data": [
                        {
                            "code": "token_limit_exceeded",
                            "message": f"Enqueued token limit reached for "
                            f"{self._models[batch_id]}: limit {limit} requests in flight",
                        }
                    ],
                }
            elif batch["status"] == "validating":
                batch["status"] = "in_progress"
                batch["in_progress_at"] = int(time.time())
            elif batch["status"] == "in_progress":
                self._polls[batch_id] = self._polls.get(batch_id, 0) + 1
                if self._polls[batch_id] >= self.faults.in_progress_polls:
                    self._finish(batch)
            elif batch["status"] == "cancelling":
                batch["status"] = "cancelled"
                batch["cancelled_at"] = int(time.time())
            return dict(batch)

    def _over_limit(self, model: str, n: int) -> bool:
        """Would ``n`` more requests of ``model`` pass its limit of requests in flight?"""
        if not self.faults.max_enqueued:
            return False
        in_flight: int = sum(
            b["request_counts"]["total"]
            for batch_id, b in self._batches.items()
            if self._models.get(batch_id) == model
            and batch_id not in self._refused
            and b["status"] in ("validating", "in_progress")
        )
        return in_flight + n > self.faults.max_enqueued

    def list(self, limit: int = 20, after: str | None = None) -> dict[str, Any]:
        """The newest batches first, ``limit`` a page, from the one after ``after``, as
        ``GET /v1/batches`` lists them (``has_more`` when a page follows)."""
        with self._lock:
            ids = list(reversed(self._batches))
            start = ids.index(after) + 1 if after in self._batches else 0
            page = [dict(self._batches[i]) for i in ids[start : start + limit]]
            more = start + limit < len(ids)
        return {"object": "list", "data": page, "has_more": more}

    def cancel(self, batch_id: str) -> dict[str, Any] | None:
        with self._lock:
            batch = self._batches.get(batch_id)
            if batch is None:
                return None
            if batch["status"] in ("validating", "in_progress"):
                batch["status"] = "cancelling"
                batch["cancelling_at"] = int(time.time())
            return dict(batch)

    def _finish(self, batch: dict[str, Any]) -> None:
        now = int(time.time())
        u = self._rng.random()
        if u < self.faults.fail_rate:
            batch["status"], batch["failed_at"] = "failed", now
            batch["errors"] = {
                "object": "list",
                "data": [{"code": "server_error", "message": "the batch failed"}],
            }
            return
        expired = u < self.faults.fail_rate + self.faults.expire_rate
        lines = self._files[batch["input_file_id"]][1].decode().splitlines()
        out, errors = [], []
        for n, raw in enumerate(line for line in lines if line.strip()):
            request = json.loads(raw)
            line_id = f"{batch['id']}_{n}"
            if expired and n % 2:
                errors.append(error_line(request, line_id, "batch_expired", "the batch expired"))
                continue
            fate = line_fate(
                self._rng.random(), self.faults.line_drop_rate, self.faults.line_error_rate
            )
            if fate == "error":
                errors.append(error_line(request, line_id))
            elif fate == "answered":
                out.append(answer_line(self.api, request, line_id))
        counts = batch["request_counts"]
        counts["completed"], counts["failed"] = len(out), len(errors)
        for kind, rows in (("output", out), ("error", errors)):
            if rows:
                text = "".join(row + "\n" for row in rows).encode()
                made = self._add_file(f"{batch['id']}_{kind}.jsonl", "batch_output", text)
                batch[f"{kind}_file_id"] = made["id"]
        batch["status"] = "expired" if expired else "completed"
        batch["expired_at" if expired else "completed_at"] = now


def _error(message: str) -> dict[str, Any]:
    return {
        "error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    }


def line_fate(draw: float, drop_rate: float, error_rate: float) -> str:
    """What becomes of a request line given a uniform ``draw``: "dropped" (left out of
    the results), "error" or "answered"."""
    if draw < drop_rate:
        return "dropped"
    return "error" if draw < drop_rate + error_rate else "answered"


def answer_line(api: ChatCompletions, request: dict[str, Any], line_id: str) -> str:
    """The result line of a request line answered by the simulated models (the same
    reply as over ``/v1/chat/completions``)."""
    reply = api.complete(json.dumps(request["body"]).encode("utf-8"))
    api.record(reply)
    response = {
        "status_code": reply.status,
        "request_id": f"req_{line_id}",
        "body": json.loads(reply.body),
    }
    line = {"id": line_id, "custom_id": request["custom_id"], "response": response, "error": None}
    return json.dumps(line, ensure_ascii=False)


def error_line(
    request: dict[str, Any],
    line_id: str,
    code: str = "server_error",
    message: str = "the engine failed",
) -> str:
    """The result line of a request line that failed."""
    error = {"code": code, "message": message}
    line = {"id": line_id, "custom_id": request["custom_id"], "response": None, "error": error}
    return json.dumps(line, ensure_ascii=False)


def multipart_fields(content_type: str, body: bytes) -> dict[str, tuple[str | None, bytes]]:
    """The fields of a ``multipart/form-data`` body: name → (filename, bytes)."""
    head = f"Content-Type: {content_type}\r\n\r\n".encode()
    message = BytesParser(policy=HTTP).parsebytes(head + body)
    fields: dict[str, tuple[str | None, bytes]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if isinstance(name, str) and isinstance(payload, bytes):
            fields[name] = (part.get_filename(), payload)
    return fields
