"""A local OpenAI-compatible chat-completions server with simulated models and faults.

Tests, the offline demo and the throughput benchmark talk to it with the real ``openai``
client, so the wire format is the real one: ``POST /v1/chat/completions`` answers with a
``chat.completion`` object, ``GET /v1/models`` lists the simulated models, errors come as
``{"error": {...}}`` with the status codes the client maps to its exception types.

A simulated model is a name and the probability that it answers a question right. The
server recognises which pool item a request is about by finding the item's question text
in the request's messages, then draws the answer from a generator seeded by a stable hash
of (server seed, item, model, messages): the same request always gets the same reply, and
distinct requests are independent draws. Faults (429, 500, slow, malformed JSON, dropped
connection) are drawn per request from a separate generator, so a retry can succeed.

Standard library only. Run it in-process with :class:`LocalServer` or as a separate
process with ``python -m synth.local_server`` (prints ``READY <base_url>`` once listening).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import random
import re
import signal
import socket
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType, TracebackType
from typing import IO, Any, Final, cast

from synth.errors import SynthError
from synth.items import ItemType, PoolItem, read_pool

__all__ = ["OUTCOMES", "FaultPlan", "LocalServer", "RequestRecord", "main"]

#: Every value ``RequestRecord.outcome`` takes.
OUTCOMES: Final = ("ok", "429", "500", "slow", "malformed", "drop", "bad_request", "unknown_model")

_COMPLETIONS_PATHS: Final = frozenset({"/v1/chat/completions", "/chat/completions"})
_MODELS_PATHS: Final = frozenset({"/v1/models", "/models"})
_WHITESPACE: Final = re.compile(r"\s+")
_CJK: Final = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# Anchor length for finding long questions in a prompt: long enough that a hit is almost
# always the real question, short enough that every realistic question has one.
_ANCHOR: Final = 24
_LOOKUP_CACHE_SIZE: Final = 4096
# A non-blocking peek tells whether a client hung up; MSG_DONTWAIT is POSIX-only.
_PEEK_FLAGS: Final = (
    socket.MSG_PEEK | socket.MSG_DONTWAIT if hasattr(socket, "MSG_DONTWAIT") else None
)

# Reasoning filler. It never contains a lone capital letter (no "I", no "A ..."), so a
# parser looking for option letters finds only the final answer statement.
_EN_REASONING: Final = (
    "The question asks which option best fits the description.",
    "Comparing each option with the key facts, one of them matches clearly.",
    "The other options contain details that do not hold up on closer inspection.",
    "Recalling the relevant background narrows it down quickly.",
    "Checking the wording of the question carefully rules out the distractors.",
    "Based on the standard definition, the choice is straightforward.",
)
_ZH_REASONING: Final = (
    "题目考查的是相关概念的理解。",
    "逐一比较各选项，与题意相符的选项很明确。",
    "其余选项存在明显错误或与题干不符。",
    "结合背景知识可以排除干扰项。",
    "仔细审题后，关键信息已经给出。",
    "根据常见定义即可判断。",
)


@dataclass(frozen=True)
class FaultPlan:
    """Per-request fault rates (each in [0, 1], together at most 1).

    ``rate_429``: 429 with a ``Retry-After`` of ``retry_after`` seconds. ``rate_500``: 500.
    ``rate_slow``: the reply comes after ``slow_seconds`` (meant to outlast the client's
    timeout). ``rate_malformed``: 200 whose body is truncated JSON. ``rate_drop``: the
    connection is closed without any response.
    """

    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_slow: float = 0.0
    rate_malformed: float = 0.0
    rate_drop: float = 0.0
    retry_after: float = 0.05
    slow_seconds: float = 2.0

    def __post_init__(self) -> None:
        rates = self._rates()
        for name, rate in rates:
            if not 0.0 <= rate <= 1.0:
                raise SynthError(f"fault rate {name} must be in [0, 1], got {rate}")
        total = sum(rate for _, rate in rates)
        if total > 1.0 + 1e-9:
            raise SynthError(f"fault rates add up to {total:g}, more than 1")
        if not self.retry_after >= 0.0:
            raise SynthError(f"retry_after must be >= 0, got {self.retry_after}")
        if not self.slow_seconds >= 0.0:
            raise SynthError(f"slow_seconds must be >= 0, got {self.slow_seconds}")

    def _rates(self) -> tuple[tuple[str, float], ...]:
        return (
            ("429", self.rate_429),
            ("500", self.rate_500),
            ("slow", self.rate_slow),
            ("malformed", self.rate_malformed),
            ("drop", self.rate_drop),
        )

    def draw(self, u: float) -> str:
        """The fault for a uniform draw ``u`` in [0, 1): a fault outcome name or ``"ok"``."""
        edge = 0.0
        for name, rate in self._rates():
            edge += rate
            if u < edge:
                return name
        return "ok"


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


@dataclass(frozen=True)
class _ItemInfo:
    item: PoolItem
    question: str  # whitespace-normalised
    letters: tuple[str, ...]  # the option letters, sorted
    chinese: bool


@dataclass(frozen=True)
class _Reply:
    """What the handler writes: ``outcome`` decides how (drop, slow, …)."""

    outcome: str
    status: int
    body: bytes
    model: str
    item_id: str | None
    key: str
    headers: tuple[tuple[str, str], ...] = ()


def _normalise(text: str) -> str:
    # Prompt templates re-wrap and indent questions; matching on collapsed whitespace
    # keeps recognition independent of that.
    return _WHITESPACE.sub(" ", text).strip()


def _error_body(message: str, kind: str, code: str | None = None) -> bytes:
    payload = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return json.dumps(payload).encode("utf-8")


def _message_text(content: Any) -> str:
    """The text of a message's ``content``: a string or a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


class _ItemIndex:
    """Finds the pool item whose question occurs in a text.

    Questions of at least ``_ANCHOR`` characters are indexed by their first ``_ANCHOR``
    characters, so a text is scanned with one dict lookup per position; the few shorter
    questions are searched for directly (``str.find`` runs in C).
    """

    def __init__(self, infos: Sequence[_ItemInfo]) -> None:
        self._by_anchor: dict[str, list[_ItemInfo]] = {}
        self._short: list[_ItemInfo] = []
        for info in infos:
            if len(info.question) >= _ANCHOR:
                self._by_anchor.setdefault(info.question[:_ANCHOR], []).append(info)
            else:
                self._short.append(info)
        # Prompts repeat (retries, several models on one question): remember answers.
        self.find = lru_cache(maxsize=_LOOKUP_CACHE_SIZE)(self._find)

    def _find(self, text: str) -> _ItemInfo | None:
        """The item whose question occurs last in ``text`` (a question inside a longer
        matching question does not count), or None."""
        matches: list[tuple[int, int, _ItemInfo]] = []
        if self._by_anchor:
            by_anchor = self._by_anchor
            for start in range(len(text) - _ANCHOR + 1):
                candidates = by_anchor.get(text[start : start + _ANCHOR])
                if candidates is None:
                    continue
                for info in candidates:
                    if text.startswith(info.question, start):
                        matches.append((start, start + len(info.question), info))
        for info in self._short:
            start = text.find(info.question)
            while start >= 0:
                matches.append((start, start + len(info.question), info))
                start = text.find(info.question, start + 1)
        if not matches:
            return None
        # Drop matches nested in a longer one (a short question quoted by a longer one),
        # then take the last: few-shot examples come before the question being asked.
        outer = [
            m
            for m in matches
            if not any(o[0] <= m[0] and m[1] <= o[1] and o[1] - o[0] > m[1] - m[0] for o in matches)
        ]
        return max(outer, key=lambda m: (m[0], m[1]))[2]


class _Simulator:
    """The request logic, free of sockets: body in, reply out, records kept."""

    def __init__(
        self,
        items: Sequence[PoolItem],
        models: Mapping[str, float],
        faults: FaultPlan,
        seed: int,
        irt: Mapping[str, tuple[float, float, float]] | None = None,
    ) -> None:
        if not models:
            raise SynthError("at least one simulated model is needed")
        for name, p in models.items():
            if not name:
                raise SynthError("a model name must not be empty")
            if irt is None and not 0.0 <= p <= 1.0:
                raise SynthError(f"model {name!r}: probability of a right answer must be in [0, 1]")
        if irt is not None:
            missing = [item.id for item in items if item.id not in irt]
            if missing:
                raise SynthError(f"no IRT parameters for {len(missing)} items (e.g. {missing[0]})")
        # With ``irt`` (item -> a, b, c), a model's value is its ability θ and an item is
        # answered right with the 3PL probability: models then differ item by item, as
        # real ones do, and a calibration has something to recover.
        self.irt = dict(irt) if irt is not None else None
        self.models: dict[str, float] = dict(models)
        self.faults = faults
        self.seed = seed
        infos: list[_ItemInfo] = []
        seen: dict[str, str] = {}
        for item in items:
            question = _normalise(item.question)
            if question in seen:
                raise SynthError(
                    f"items {seen[question]!r} and {item.id!r} ask the same question; "
                    "the server could not tell them apart"
                )
            seen[question] = item.id
            infos.append(
                _ItemInfo(
                    item=item,
                    question=question,
                    letters=tuple(sorted(item.options)),
                    chinese=_CJK.search(item.question) is not None,
                )
            )
        self._index = _ItemIndex(infos)
        self._fault_rng = random.Random(f"synth.local_server faults {seed}")
        self._fault_lock = threading.Lock()
        self._records: list[RequestRecord] = []
        self._records_lock = threading.Lock()
        self._log: IO[str] | None = None
        models_list = {
            "object": "list",
            "data": [
                {"id": name, "object": "model", "created": 0, "owned_by": "synth-local"}
                for name in self.models
            ],
        }
        self.models_body = json.dumps(models_list).encode("utf-8")

    # --- records -------------------------------------------------------------------

    def open_log(self, path: Path | None) -> None:
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._log = path.open("a", encoding="utf-8")

    def close_log(self) -> None:
        with self._records_lock:
            if self._log is not None:
                self._log.close()
                self._log = None

    def record(self, reply: _Reply, outcome: str | None = None) -> None:
        rec = RequestRecord(
            model=reply.model,
            item_id=reply.item_id,
            key=reply.key,
            outcome=outcome or reply.outcome,
            at=time.time(),
        )
        line = json.dumps(asdict(rec), ensure_ascii=False) + "\n"
        with self._records_lock:
            self._records.append(rec)
            if self._log is not None:
                # One flushed line per request: a reader in another process sees it at
                # once, and it survives the crash of whoever sent the request.
                self._log.write(line)
                self._log.flush()

    def records(self) -> list[RequestRecord]:
        with self._records_lock:
            return list(self._records)

    # --- requests ------------------------------------------------------------------

    def complete(self, raw: bytes) -> _Reply:
        """The reply to a ``POST /v1/chat/completions`` body."""
        try:
            body = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            return self._bad_request(raw, f"the request body is not valid JSON ({exc})")
        problem = _request_problem(body)
        if problem is not None:
            model = body.get("model") if isinstance(body, dict) else None
            return self._bad_request(raw, problem, model if isinstance(model, str) else "")
        model = cast(str, body["model"])
        messages = cast(list[dict[str, Any]], body["messages"])
        canonical = json.dumps(
            [model, messages], sort_keys=True, ensure_ascii=False, separators=(",", ":")
        )
        key = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
        if model not in self.models:
            return _Reply(
                outcome="unknown_model",
                status=404,
                body=_error_body(
                    f"The model `{model}` does not exist or you do not have access to it.",
                    "invalid_request_error",
                    "model_not_found",
                ),
                model=model,
                item_id=None,
                key=key,
            )
        info = self._find_item(messages)
        item_id = info.item.id if info is not None else None
        with self._fault_lock:
            fault = self.faults.draw(self._fault_rng.random())
        if fault == "429":
            return _Reply(
                outcome=fault,
                status=429,
                body=_error_body(
                    "Rate limit reached (simulated). Please retry after a short wait.",
                    "requests",
                    "rate_limit_exceeded",
                ),
                model=model,
                item_id=item_id,
                key=key,
                headers=(("Retry-After", f"{self.faults.retry_after:g}"),),
            )
        if fault == "500":
            return _Reply(
                outcome=fault,
                status=500,
                body=_error_body(
                    "The server had an error while processing your request (simulated).",
                    "server_error",
                ),
                model=model,
                item_id=item_id,
                key=key,
            )
        text = self._answer_text(model, info, key)
        completion = _completion_json(model, key, text, len(canonical))
        if fault == "malformed":
            # Cut the text, not the bytes: the client then fails on JSON, not on UTF-8.
            completion = completion[: max(1, len(completion) // 2)]
        return _Reply(
            outcome=fault,
            status=200,
            body=completion.encode("utf-8"),
            model=model,
            item_id=item_id,
            key=key,
        )

    def p_right(self, model: str, item_id: str) -> float:
        """The probability that ``model`` answers ``item_id`` right."""
        value = self.models[model]
        if self.irt is None:
            return value
        a, b, c = self.irt[item_id]
        return c + (1.0 - c) / (1.0 + math.exp(-a * (value - b)))

    def _bad_request(self, raw: bytes, message: str, model: str = "") -> _Reply:
        return _Reply(
            outcome="bad_request",
            status=400,
            body=_error_body(message, "invalid_request_error"),
            model=model,
            item_id=None,
            key=hashlib.sha256(raw).hexdigest(),
        )

    def _find_item(self, messages: list[dict[str, Any]]) -> _ItemInfo | None:
        # The question being asked is in the latest user turn; other turns are searched
        # only when no user turn names a question.
        ordered = [m for m in reversed(messages) if m.get("role") == "user"]
        ordered += [m for m in reversed(messages) if m.get("role") != "user"]
        for message in ordered:
            text = _message_text(message.get("content"))
            if text:
                found = self._index.find(_normalise(text))
                if found is not None:
                    return found
        return None

    def _answer_text(self, model: str, info: _ItemInfo | None, key: str) -> str:
        if info is None:
            return "I am not sure."
        digest = hashlib.sha256(f"{self.seed}\x00{info.item.id}\x00{key}".encode()).digest()
        rng = random.Random(int.from_bytes(digest[:8], "big"))
        answer = (
            info.item.answer
            if rng.random() < self.p_right(model, info.item.id)
            else _wrong(info, rng)
        )
        return _render(info, answer, rng)


def _request_problem(body: Any) -> str | None:
    """Why a decoded request body is not a chat-completion request, or None."""
    if not isinstance(body, dict):
        return "the request body must be a JSON object"
    model = body.get("model")
    if not isinstance(model, str) or not model:
        return "you must provide a model parameter"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array"
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            return f"messages[{i}] must be an object with a 'role'"
    if body.get("stream"):
        return "streaming is not supported by the local server"
    return None


def _completion_json(model: str, key: str, text: str, prompt_chars: int) -> str:
    prompt_tokens = max(1, prompt_chars // 4)
    completion_tokens = max(1, len(text) // 4)
    payload = {
        "id": f"chatcmpl-{key[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
    return json.dumps(payload, ensure_ascii=False)


def _wrong(info: _ItemInfo, rng: random.Random) -> str:
    """A wrong answer of the item's type, drawn with ``rng``."""
    key = info.item.answer
    letters = info.letters
    if info.item.type is ItemType.MULTI:
        while True:
            size = rng.randint(1, len(letters))
            pick = "".join(sorted(rng.sample(letters, size)))
            if set(pick) != set(key):
                return pick
    if info.item.type is ItemType.ORDER and len(key) >= 2:
        order = list(key)
        while "".join(order) == key:
            rng.shuffle(order)
        return "".join(order)
    return rng.choice([letter for letter in letters if letter != key])


def _render(info: _ItemInfo, answer: str, rng: random.Random) -> str:
    """``answer`` in one of several realistic shapes; the answer statement is always last."""
    kind = info.item.type
    if info.chinese:
        reasoning = "".join(rng.sample(_ZH_REASONING, rng.randint(1, 2)))
        statement = f"答案：{answer}"
        prefixes = ("", f"分析：{reasoning}\n", f"{reasoning}\n\n")
        return rng.choice(prefixes) + statement
    listed = ", ".join(answer)
    if kind is ItemType.MULTI:
        statements: tuple[str, ...] = (f"The answer is {listed}.", f"Answer: {answer}")
    elif kind is ItemType.ORDER:
        statements = (f"The order is {listed}.", f"Answer: {answer}")
    else:
        statements = (f"The answer is ({answer}).", f"Answer: {answer}", f"The answer is {answer}.")
    reasoning = " ".join(rng.sample(_EN_REASONING, rng.randint(1, 2)))
    prefixes = ("", f"Let me think step by step. {reasoning}\n", f"{reasoning}\n\n")
    return rng.choice(prefixes) + rng.choice(statements)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    # Do not wait for handler threads on close: keep-alive and slow connections would
    # make stop() hang; stop() shuts their sockets down instead.
    block_on_close = False
    # 64 clients connect at once in the benchmark; the default backlog of 5 would drop
    # SYNs and cost a one-second retransmit each.
    request_queue_size = 256

    def __init__(self, address: tuple[str, int], simulator: _Simulator) -> None:
        self.simulator = simulator
        self.stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, _Handler)

    def track(self, connection: socket.socket) -> None:
        with self._connections_lock:
            self._connections.add(connection)

    def untrack(self, connection: socket.socket) -> None:
        with self._connections_lock:
            self._connections.discard(connection)

    def close_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up mid-request (timeouts, kill -9) is routine here, not
        # worth a traceback; anything else is a bug and is reported.
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "synth-local/1"
    # Small replies on keep-alive connections: without TCP_NODELAY, Nagle plus delayed
    # ACKs can add tens of milliseconds per request.
    disable_nagle_algorithm = True
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        self.server.track(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.untrack(self.connection)

    def log_message(self, format: str, *args: Any) -> None:
        # Per-request logging to stderr costs throughput; the request log replaces it.
        return

    def do_GET(self) -> None:
        """``GET /v1/models`` and ``GET /v1/models/<id>``."""
        path = self.path.split("?", 1)[0].rstrip("/")
        simulator = self.server.simulator
        if path in _MODELS_PATHS:
            self._send(200, simulator.models_body)
            return
        prefix, _, name = path.rpartition("/")
        if prefix in _MODELS_PATHS and name in simulator.models:
            model = {"id": name, "object": "model", "created": 0, "owned_by": "synth-local"}
            self._send(200, json.dumps(model).encode("utf-8"))
            return
        self._send(404, _error_body(f"no route for GET {path}", "invalid_request_error"))

    def do_POST(self) -> None:
        """``POST /v1/chat/completions``."""
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True
            self._send(411, _error_body("Content-Length is required", "invalid_request_error"))
            return
        raw = self.rfile.read(length)
        path = self.path.split("?", 1)[0].rstrip("/")
        if path not in _COMPLETIONS_PATHS:
            self._send(404, _error_body(f"no route for POST {path}", "invalid_request_error"))
            return
        simulator = self.server.simulator
        reply = simulator.complete(raw)
        if reply.outcome == "ok" and self._client_gone():
            # A client killed mid-request must not find its request counted as completed
            # when it reruns; its answer is never sent.
            simulator.record(reply, "drop")
            self.close_connection = True
            return
        # Recorded before the reply is written, so a client that has its reply can rely
        # on the record being there.
        simulator.record(reply)
        if reply.outcome == "drop":
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        if reply.outcome == "slow":
            self.close_connection = True
            if self.server.stopping.wait(simulator.faults.slow_seconds):
                return
            with contextlib.suppress(OSError):
                self._send(reply.status, reply.body, reply.headers)
            return
        self._send(reply.status, reply.body, reply.headers)

    def _client_gone(self) -> bool:
        """Whether the client has closed or reset the connection (it sends nothing else
        while it waits for a reply, so readable-with-EOF means gone)."""
        if _PEEK_FLAGS is None:
            return False
        try:
            peeked: bytes = self.connection.recv(1, _PEEK_FLAGS)
        except BlockingIOError:
            return False
        except OSError:
            return True
        return peeked == b""

    def _send(self, status: int, body: bytes, headers: tuple[tuple[str, str], ...] = ()) -> None:
        # Status line, headers and body in one write: one segment per small reply.
        reason = self.responses.get(status, ("",))[0]
        lines = [
            f"HTTP/1.1 {status} {reason}",
            "Content-Type: application/json",
            f"Content-Length: {len(body)}",
        ]
        lines.extend(f"{name}: {value}" for name, value in headers)
        if self.close_connection:
            lines.append("Connection: close")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        self.wfile.write(head + body)


class LocalServer:
    """An OpenAI-compatible chat-completions server for ``items``, serving in a daemon
    thread.

    ``models`` maps a model name to its probability of answering right; ``faults`` sets
    the per-request fault rates; ``seed`` fixes answers and faults; ``log_path`` (optional)
    receives one JSON line per request as it happens. Use as a context manager or call
    :meth:`start` and :meth:`stop`.
    """

    def __init__(
        self,
        items: Sequence[PoolItem],
        models: Mapping[str, float],
        *,
        faults: FaultPlan = FaultPlan(),
        seed: int = 0,
        host: str = "127.0.0.1",
        port: int = 0,
        log_path: Path | None = None,
        irt: Mapping[str, tuple[float, float, float]] | None = None,
    ) -> None:
        self._simulator = _Simulator(items, models, faults, seed, irt)
        self._host = host
        self._port = port
        self._log_path = log_path
        self._server: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._base_url: str | None = None

    def start(self) -> str:
        """Bind (port 0 picks a free port), serve in a daemon thread; the base URL."""
        if self._server is not None:
            raise SynthError("the local server is already running")
        try:
            server = _HTTPServer((self._host, self._port), self._simulator)
        except OSError as exc:
            raise SynthError(f"cannot listen on {self._host}:{self._port} ({exc})") from exc
        self._simulator.open_log(self._log_path)
        self._server = server
        host, port = server.server_address[:2]
        self._base_url = f"http://{_url_host(str(host))}:{port}/v1"
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="synth-local-server",
            daemon=True,
        )
        self._thread.start()
        return self._base_url

    def stop(self) -> None:
        """Stop serving, cut open connections, close the log; safe to call twice."""
        server, thread = self._server, self._thread
        if server is None:
            return
        server.stopping.set()
        server.shutdown()
        server.close_connections()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5.0)
        self._simulator.close_log()
        self._server = None
        self._thread = None

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT/v1``, for ``OpenAI(base_url=...)``; only after :meth:`start`."""
        if self._base_url is None:
            raise SynthError("the local server has not been started")
        return self._base_url

    @property
    def records(self) -> list[RequestRecord]:
        """A copy of the request log so far, in arrival order of the outcomes."""
        return self._simulator.records()

    def p_right(self, model: str, item_id: str) -> float:
        """The probability that simulated ``model`` answers ``item_id`` right: its true
        expected accuracy on a pool is the mean of these."""
        return self._simulator.p_right(model, item_id)

    def completed_keys(self) -> list[str]:
        """The keys of requests answered in full (outcome ``"ok"``), in order."""
        return [r.key for r in self._simulator.records() if r.outcome == "ok"]

    def __enter__(self) -> LocalServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _parse_models(text: str) -> dict[str, float]:
    models: dict[str, float] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        name, sep, value = part.partition("=")
        try:
            p = float(value)
        except ValueError:
            p = float("nan")
        if not sep or not name.strip() or not 0.0 <= p <= 1.0:
            raise argparse.ArgumentTypeError(
                f"expected NAME=PROBABILITY with a probability in [0, 1], got {part!r}"
            )
        models[name.strip()] = p
    if not models:
        raise argparse.ArgumentTypeError("name at least one model, e.g. m1=0.8,m2=0.5")
    return models


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m synth.local_server",
        description="Serve simulated models over an OpenAI-compatible chat-completions API.",
    )
    parser.add_argument("--pool", type=Path, required=True, help="pool folder")
    parser.add_argument(
        "--models", type=_parse_models, required=True, help="NAME=P,... (P = right-answer rate)"
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log", type=Path, default=None, help="append request records here")
    for name in ("429", "500", "slow", "malformed", "drop"):
        parser.add_argument(f"--rate-{name}", type=float, default=0.0, metavar="X")
    parser.add_argument("--retry-after", type=float, default=0.05, metavar="SECONDS")
    parser.add_argument("--slow-seconds", type=float, default=2.0, metavar="SECONDS")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until SIGTERM or SIGINT; print ``READY <base_url>`` once listening."""
    args = _parser().parse_args(argv)
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    try:
        faults = FaultPlan(
            rate_429=args.rate_429,
            rate_500=args.rate_500,
            rate_slow=args.rate_slow,
            rate_malformed=args.rate_malformed,
            rate_drop=args.rate_drop,
            retry_after=args.retry_after,
            slow_seconds=args.slow_seconds,
        )
        pool = read_pool(args.pool)
        server = LocalServer(
            pool.items,
            args.models,
            faults=faults,
            seed=args.seed,
            host=args.host,
            port=args.port,
            log_path=args.log,
        )
        # Handlers first: a SIGTERM right after READY must still stop cleanly.
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        base_url = server.start()
    except SynthError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        print(f"READY {base_url}", flush=True)
        # A timed wait keeps the main thread responsive to signals on every platform.
        while not stop.wait(0.5):
            pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
