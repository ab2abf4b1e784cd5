"""The OpenAI chat-completions protocol of the local server, free of sockets: a request
body in, a reply (status, headers, JSON body) out, with faults drawn and every request
recorded.

Replies follow the real wire format, so the real ``openai`` client can talk to the
server: a ``chat.completion`` object on success, ``{"error": {...}}`` with the status
codes the client maps to its exception types otherwise.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time
from dataclasses import dataclass, replace
from typing import Any, cast

from synth.local_server import logprobs
from synth.local_server.faults import FaultPlan
from synth.local_server.records import RequestLog, RequestRecord, request_parameters
from synth.local_server.simulator import Simulator, thinking_about

__all__ = ["ChatCompletions", "Reply", "error_body"]


@dataclass(frozen=True)
class Reply:
    """What the handler writes: ``outcome`` decides how (drop, slow, …)."""

    outcome: str
    status: int
    body: bytes
    model: str
    item_id: str | None
    key: str
    headers: tuple[tuple[str, str], ...] = ()
    # The request's generation parameters (``records.request_parameters``); empty for a
    # body that is not a request.
    parameters: tuple[tuple[str, Any], ...] = ()


def error_body(message: str, kind: str, code: str | None = None) -> bytes:
    """An OpenAI-style ``{"error": {...}}`` body."""
    payload = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return json.dumps(payload).encode("utf-8")


class ChatCompletions:
    """Answers ``POST /v1/chat/completions`` bodies for ``simulator``'s models, failing
    requests at ``faults``' rates, and keeps a record of each in ``log``."""

    def __init__(self, simulator: Simulator, faults: FaultPlan, log: RequestLog) -> None:
        self.simulator = simulator
        self.faults = faults
        self.log = log
        # Faults come from their own generator, apart from the answers: a retry of the
        # same request gets the same answer but a fresh fault draw.
        self._fault_rng = random.Random(f"synth.local_server faults {simulator.seed}")
        self._fault_lock = threading.Lock()
        models_list = {
            "object": "list",
            "data": [
                {"id": name, "object": "model", "created": 0, "owned_by": "synth-local"}
                for name in simulator.names
            ],
        }
        #: The ``GET /v1/models`` body.
        self.models_body = json.dumps(models_list).encode("utf-8")

    def record(self, reply: Reply, outcome: str | None = None) -> None:
        """Log ``reply``, under ``outcome`` if given (e.g. a reply never delivered)."""
        self.log.add(
            RequestRecord(
                model=reply.model,
                item_id=reply.item_id,
                key=reply.key,
                outcome=outcome or reply.outcome,
                at=time.time(),
                **dict(reply.parameters),
            )
        )

    def complete(self, raw: bytes) -> Reply:
        """The reply to a ``POST /v1/chat/completions`` body (not yet recorded), with the
        request's generation parameters for its record."""
        reply = self._complete(raw)
        try:
            body = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError):
            return reply
        if not isinstance(body, dict):
            return reply
        return replace(reply, parameters=tuple(request_parameters(body).items()))

    def _complete(self, raw: bytes) -> Reply:
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
        if model not in self.simulator.names:
            return _unknown_model(model, key)
        info = self.simulator.find_item(messages)
        item_id = info.item.id if info is not None else None
        with self._fault_lock:
            fault = self.faults.draw(self._fault_rng.random())
        if fault == "429":
            return Reply(
                outcome=fault,
                status=429,
                body=error_body(
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
            return Reply(
                outcome=fault,
                status=500,
                body=error_body(
                    "The server had an error while processing your request (simulated).",
                    "server_error",
                ),
                model=model,
                item_id=item_id,
                key=key,
            )
        prompt = self.simulator.last_user_text(messages)
        text = self.simulator.answer_text(model, info, key, prompt)
        reasoning = None
        mode = self.simulator.thinking.get(model)
        if mode is not None:
            thought = thinking_about(info, key, self.simulator.seed, text)
            if mode == "inline":
                text = f"<think>\n{thought}\n</think>\n\n{text}"
            else:
                reasoning = thought
        text, finish = logprobs.cut_at_limit(text, body.get("max_tokens"))
        completion = _completion_json(
            model, key, text, len(canonical), reasoning=reasoning, finish=finish
        )
        if fault == "malformed":
            # Cut the text, not the bytes: the client then fails on JSON, not on UTF-8.
            completion = completion[: max(1, len(completion) // 2)]
        return Reply(
            outcome=fault,
            status=200,
            body=completion.encode("utf-8"),
            model=model,
            item_id=item_id,
            key=key,
        )

    def text_complete(self, raw: bytes) -> Reply:
        """The reply to a ``POST /v1/completions`` body (``synth.local_server.logprobs``:
        with ``echo`` and ``logprobs``, the prompt's log-probabilities)."""
        try:
            body = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            return self._bad_request(raw, f"the request body is not valid JSON ({exc})")
        problem = logprobs.request_problem(body)
        if problem is not None:
            model = body.get("model") if isinstance(body, dict) else None
            return self._bad_request(raw, problem, model if isinstance(model, str) else "")
        model = cast(str, body["model"])
        key = logprobs.body_key(body)
        if model not in self.simulator.names:
            return _unknown_model(model, key)
        prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
        info = self.simulator.find_item([{"role": "user", "content": prompts[0]}])
        payload = logprobs.completion_body(self.simulator, body, key)
        parameters = request_parameters(body)
        parameters["messages"] = [("user", prompt) for prompt in prompts]
        parameters["route"] = "completions"
        return Reply(
            outcome="ok",
            status=200,
            body=json.dumps(payload, ensure_ascii=False).encode("utf-8"),
            model=model,
            item_id=None if info is None else info.item.id,
            key=key,
            parameters=tuple(parameters.items()),
        )

    def _bad_request(self, raw: bytes, message: str, model: str = "") -> Reply:
        return Reply(
            outcome="bad_request",
            status=400,
            body=error_body(message, "invalid_request_error"),
            model=model,
            item_id=None,
            key=hashlib.sha256(raw).hexdigest(),
        )


def _unknown_model(model: str, key: str) -> Reply:
    """The 404 of a request for a model the server does not play, as OpenAI words it."""
    return Reply(
        outcome="unknown_model",
        status=404,
        body=error_body(
            f"The model `{model}` does not exist or you do not have access to it.",
            "invalid_request_error",
            "model_not_found",
        ),
        model=model,
        item_id=None,
        key=key,
    )


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


def _completion_json(
    model: str,
    key: str,
    text: str,
    prompt_chars: int,
    *,
    reasoning: str | None = None,
    finish: str = "stop",
) -> str:
    prompt_tokens = max(1, prompt_chars // 4)
    thought_tokens = 0 if reasoning is None else max(1, len(reasoning) // 4)
    completion_tokens = max(1, len(text) // 4) + thought_tokens
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    payload = {
        "id": f"chatcmpl-{key[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "completion_tokens_details": {"reasoning_tokens": thought_tokens},
        },
    }
    return json.dumps(payload, ensure_ascii=False)
