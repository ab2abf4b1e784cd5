"""The HTTP side of the local server: a threading HTTP server and its request handler,
which route ``/v1/models`` and ``/v1/chat/completions`` and carry out the faults (a
dropped connection, a late reply) that :mod:`synth.local_server.protocol` decides on.

Standard library only; tuned for many small keep-alive requests (the benchmark).
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

from synth.local_server.batches import BatchFaults, BatchService, multipart_fields
from synth.local_server.protocol import ChatCompletions, error_body

__all__ = ["CompletionsHTTPServer"]

_COMPLETIONS_PATHS: Final = frozenset({"/v1/chat/completions", "/chat/completions"})
_TEXT_COMPLETIONS_PATHS: Final = frozenset({"/v1/completions", "/completions"})
_MODELS_PATHS: Final = frozenset({"/v1/models", "/models"})
# A non-blocking peek tells whether a client hung up; MSG_DONTWAIT is POSIX-only.
_PEEK_FLAGS: Final = (
    socket.MSG_PEEK | socket.MSG_DONTWAIT if hasattr(socket, "MSG_DONTWAIT") else None
)


class CompletionsHTTPServer(ThreadingHTTPServer):
    """Serves ``api`` over HTTP on ``address``, one thread per connection.

    ``stopping`` is set when the server stops, so that a slow reply waiting out its delay
    gives up at once; :meth:`close_connections` cuts the connections still open.
    """

    daemon_threads = True
    # Do not wait for handler threads on close: keep-alive and slow connections would
    # make stop() hang; stop() shuts their sockets down instead.
    block_on_close = False
    # 64 clients connect at once in the benchmark; the default backlog of 5 would drop
    # SYNs and cost a one-second retransmit each.
    request_queue_size = 256

    def __init__(
        self, address: tuple[str, int], api: ChatCompletions, batches: BatchService | None = None
    ) -> None:
        self.api = api
        self.batches = batches or BatchService(api, BatchFaults())
        self.stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, _Handler)

    def track(self, connection: socket.socket) -> None:
        """Remember an open client connection."""
        with self._connections_lock:
            self._connections.add(connection)

    def untrack(self, connection: socket.socket) -> None:
        """Forget a client connection that has closed."""
        with self._connections_lock:
            self._connections.discard(connection)

    def close_connections(self) -> None:
        """Shut down every client connection still open."""
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
    server: CompletionsHTTPServer

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
        """``GET /v1/models`` and ``GET /v1/models/<id>``; the Batch API's files and
        batches (``synth.local_server.batches``)."""
        path = self.path.split("?", 1)[0].rstrip("/")
        if path.startswith(("/v1/files", "/v1/batches")):
            self._batch_get(path, parse_qs(urlsplit(self.path).query))
            return
        api = self.server.api
        if path in _MODELS_PATHS:
            self._send(200, api.models_body)
            return
        prefix, _, name = path.rpartition("/")
        if prefix in _MODELS_PATHS and name in api.simulator.names:
            model = {"id": name, "object": "model", "created": 0, "owned_by": "synth-local"}
            self._send(200, json.dumps(model).encode("utf-8"))
            return
        self._send(404, error_body(f"no route for GET {path}", "invalid_request_error"))

    def do_POST(self) -> None:
        """``POST /v1/chat/completions``."""
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True
            self._send(411, error_body("Content-Length is required", "invalid_request_error"))
            return
        raw = self.rfile.read(length)
        path = self.path.split("?", 1)[0].rstrip("/")
        if path.startswith(("/v1/files", "/v1/batches")):
            self._batch_post(path, raw)
            return
        api = self.server.api
        if path in _TEXT_COMPLETIONS_PATHS:
            reply = api.text_complete(raw)
            api.record(reply)
            self._send(reply.status, reply.body, reply.headers)
            return
        if path not in _COMPLETIONS_PATHS:
            self._send(404, error_body(f"no route for POST {path}", "invalid_request_error"))
            return
        reply = api.complete(raw)
        if reply.outcome == "ok" and self._client_gone():
            # A client killed mid-request must not find its request counted as completed
            # when it reruns; its answer is never sent.
            api.record(reply, "drop")
            self.close_connection = True
            return
        # Recorded before the reply is written, so a client that has its reply can rely
        # on the record being there.
        api.record(reply)
        if reply.outcome == "drop":
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        if reply.outcome == "slow":
            self.close_connection = True
            if self.server.stopping.wait(api.faults.slow_seconds):
                return
            with contextlib.suppress(OSError):
                self._send(reply.status, reply.body, reply.headers)
            return
        self._send(reply.status, reply.body, reply.headers)

    def _batch_get(self, path: str, query: dict[str, list[str]]) -> None:
        service = self.server.batches
        parts = path.split("/")[2:]  # ["files", id, "content"] or ["batches", id]
        found: object = None
        if parts[0] == "files" and len(parts) == 3 and parts[2] == "content":
            content = service.content(parts[1])
            if content is not None:
                self._send(200, content)
                return
        elif parts[0] == "files" and len(parts) == 2:
            found = service.file(parts[1])
        elif parts == ["batches"]:
            limit = query.get("limit", ["20"])[0]
            after = query.get("after", [None])[0]
            found = service.list(int(limit) if limit.isdigit() else 20, after)
        elif parts[0] == "batches" and len(parts) == 2:
            found = service.retrieve(parts[1])
        if found is None:
            self._send(404, error_body(f"no such object: {path}", "invalid_request_error"))
            return
        self._send(200, json.dumps(found).encode("utf-8"))

    def _batch_post(self, path: str, raw: bytes) -> None:
        service = self.server.batches
        parts = path.split("/")[2:]
        if parts == ["files"]:
            fields = multipart_fields(self.headers.get("Content-Type", ""), raw)
            if "file" not in fields or "purpose" not in fields:
                self._send(
                    400, error_body("a file and its purpose are needed", "invalid_request_error")
                )
                return
            filename, content = fields["file"]
            meta = service.upload(
                filename or "upload.jsonl", fields["purpose"][1].decode(), content
            )
            self._send(200, json.dumps(meta).encode("utf-8"))
            return
        if parts == ["batches"]:
            status, body = service.create(json.loads(raw or b"{}"))
            self._send(status, json.dumps(body).encode("utf-8"))
            return
        if parts[0] == "batches" and len(parts) == 3 and parts[2] == "cancel":
            found = service.cancel(parts[1])
            if found is not None:
                self._send(200, json.dumps(found).encode("utf-8"))
                return
        self._send(404, error_body(f"no route for POST {path}", "invalid_request_error"))

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
