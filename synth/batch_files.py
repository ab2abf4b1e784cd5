"""Batch request and result files: the JSONL lines of OpenAI's Batch API, which
``vllm run-batch -i FILE -o OUT`` reads and writes too.

A request line is one chat completion, its ``custom_id`` the run store's call key
(``ChatRequest.key``), so a result can only ever be matched to the call it answers:

    {"custom_id": "<key>", "method": "POST", "url": "/v1/chat/completions",
     "body": {"model": "m", "messages": [...], "temperature": 0.0, "seed": 0}}

A result line holds the ``custom_id`` and either a ``response`` (``status_code`` 200
and a ``chat.completion`` body) or an ``error``; a response with another status is an
error too. Files are split at the API's limits: at most ``MAX_REQUESTS`` lines and
``MAX_BYTES`` bytes each.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synth.backend import ChatReply, ChatRequest
from synth.errors import SynthError

__all__ = [
    "CHAT_URL",
    "MAX_BYTES",
    "MAX_REQUESTS",
    "BatchResult",
    "model_slug",
    "parse_results",
    "read_results",
    "request_chunks",
    "request_line",
    "result_files",
    "split_lines",
    "write_request_files",
]

#: The endpoint every request line names.
CHAT_URL = "/v1/chat/completions"
#: OpenAI's limits per batch input file: 50,000 requests and 200 MB.
MAX_REQUESTS = 50_000
MAX_BYTES = 200 * 1024 * 1024


@dataclass(frozen=True)
class BatchResult:
    """One result line: the call's key and its reply, or the error it got instead."""

    key: str
    reply: ChatReply | None
    error: str | None
    where: str  # "FILE line N": for messages, and which line an error came from


def request_line(request: ChatRequest) -> str:
    """The request as one batch line (unset sampling fields are left out of the body)."""
    if request.endpoint != "chat":
        raise SynthError(
            f"{request.model}: batches carry chat requests only, not raw prompts to "
            f"/v1/{request.endpoint}: ask without the batch API"
        )
    body = {k: v for k, v in request.payload().items() if v is not None}
    # The endpoint reads extra_body's fields at the top level of the body, as the
    # openai client sends them over /chat/completions.
    extra = body.pop("extra_body", None)
    if isinstance(extra, dict):
        body = {**extra, **body}
    line = {"custom_id": request.key, "method": "POST", "url": CHAT_URL, "body": body}
    return json.dumps(line, ensure_ascii=False)


def split_lines(
    lines: Sequence[str], max_requests: int = MAX_REQUESTS, max_bytes: int = MAX_BYTES
) -> list[list[str]]:
    """``lines`` in consecutive chunks of at most ``max_requests`` lines and
    ``max_bytes`` bytes (newlines counted); a single line above ``max_bytes`` is
    refused."""
    chunks: list[list[str]] = []
    current: list[str] = []
    size = 0
    for line in lines:
        n = len(line.encode("utf-8")) + 1
        if n > max_bytes:
            raise SynthError(
                f"a batch request of {n:,} bytes is above the {max_bytes:,}-byte limit"
            )
        if current and (len(current) == max_requests or size + n > max_bytes):
            chunks.append(current)
            current, size = [], 0
        current.append(line)
        size += n
    if current:
        chunks.append(current)
    return chunks


def write_request_files(
    requests: Iterable[ChatRequest],
    folder: Path,
    prefix: str,
    max_requests: int = MAX_REQUESTS,
    max_bytes: int = MAX_BYTES,
) -> list[Path]:
    """Write the requests as batch files ``folder/<prefix>-<model>-NNN.jsonl``, one
    series per model (a ``vllm run-batch`` serves one model), split at the limits;
    returns the files written."""
    written = []
    for model, k, chunk in request_chunks(requests, max_requests, max_bytes):
        path = folder / f"{prefix}-{model_slug(model)}-{k:03d}.jsonl"
        path.write_text("".join(line + "\n" for line in chunk), encoding="utf-8")
        written.append(path)
    return written


def request_chunks(
    requests: Iterable[ChatRequest],
    max_requests: int = MAX_REQUESTS,
    max_bytes: int = MAX_BYTES,
) -> list[tuple[str, int, list[str]]]:
    """The requests as batch lines, by model (sorted) and split at the limits:
    (model, chunk number from 1, lines)."""
    by_model: dict[str, list[str]] = {}
    for request in requests:
        by_model.setdefault(request.model, []).append(request_line(request))
    return [
        (model, k + 1, chunk)
        for model in sorted(by_model)
        for k, chunk in enumerate(split_lines(by_model[model], max_requests, max_bytes))
    ]


def model_slug(model: str) -> str:
    """``model`` as a file-name part."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("_") or "model"


def result_files(path: Path) -> list[Path]:
    """``path`` itself, or the ``*.jsonl`` files of a folder (sorted)."""
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix == ".jsonl" and p.is_file())
        if not files:
            raise SynthError(f"{path}: no .jsonl result files in the folder")
        return files
    if not path.is_file():
        raise SynthError(f"no such result file or folder: {path}")
    return [path]


def read_results(paths: Sequence[Path]) -> Iterator[BatchResult]:
    """Every result line of the files, in order; a line that is not a batch result
    stops with one ``SynthError`` naming the file and line."""
    for path in paths:
        try:
            with path.open(encoding="utf-8") as fh:
                yield from parse_results(fh, path.name)
        except (OSError, UnicodeDecodeError) as exc:
            raise SynthError(f"{path}: cannot read the result file ({exc})") from exc


def parse_results(lines: Iterable[str], name: str) -> Iterator[BatchResult]:
    """The result lines of one file called ``name`` (blank lines skipped); a line that
    is not a batch result stops with one ``SynthError`` naming ``name`` and the line."""
    for n, raw in enumerate(lines, start=1):
        if raw.strip():
            yield _result(raw, f"{name} line {n}")


def _result(raw: str, where: str) -> BatchResult:
    try:
        line = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise SynthError(f"{where}: not JSON ({exc.msg})") from exc
    if not isinstance(line, dict) or not isinstance(line.get("custom_id"), str):
        raise SynthError(f"{where}: a batch result needs a string custom_id")
    key = line["custom_id"]
    error = line.get("error")
    response = line.get("response")
    if error:
        return BatchResult(key, None, _error_text(error), where)
    if not isinstance(response, dict):
        raise SynthError(f"{where}: a batch result needs a response or an error")
    status = response.get("status_code")
    body = response.get("body")
    if status != 200:
        detail = _error_text(body.get("error") if isinstance(body, dict) else body)
        return BatchResult(key, None, f"status {status}: {detail}", where)
    return BatchResult(key, _reply(body, where), None, where)


def _reply(body: Any, where: str) -> ChatReply:
    try:
        choice = body["choices"][0]
        message = choice["message"]
        text = message["content"] or ""
    except (KeyError, IndexError, TypeError) as exc:
        raise SynthError(f"{where}: the response body has no choices[0].message") from exc
    if not isinstance(text, str):
        raise SynthError(f"{where}: the reply's content is not text")
    usage = body.get("usage") if isinstance(body, dict) else None
    usage = usage if isinstance(usage, dict) else {}
    details = usage.get("completion_tokens_details")
    details = details if isinstance(details, dict) else {}
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    finish = choice.get("finish_reason") if isinstance(choice, dict) else None
    return ChatReply(
        text=text,
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        reasoning=reasoning if isinstance(reasoning, str) and reasoning else None,
        finish_reason=finish if isinstance(finish, str) else None,
        reasoning_tokens=int(details.get("reasoning_tokens") or 0),
    )


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        message = error.get("message") or json.dumps(error, ensure_ascii=False)
        code = error.get("code")
        return f"{code}: {message}" if code else str(message)
    return str(error)
