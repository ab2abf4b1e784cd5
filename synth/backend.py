"""Chat backends: one request in, one reply out, over any OpenAI-compatible endpoint.

``OpenAIBackend`` uses the ``openai`` package's async client with its own retries off and
ours on: exponential backoff with jitter on 429, 5xx, timeouts, dropped connections and
malformed replies, honouring ``Retry-After``; a clear ``SynthError`` once the retry budget
is spent or at once for errors a retry cannot fix (400, 401, 403, 404: a model the
endpoint lacks is named with the models it lists). The API key is
read from an environment variable only and never leaves the client: it is in no request
record, log line or error message.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import random
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol, cast
from urllib.parse import urlparse

from synth.errors import SynthError
from synth.names import DEFAULT_KEY_ENV as DEFAULT_KEY_ENV
from synth.prompts import Message

if TYPE_CHECKING:
    import openai

log = logging.getLogger(__name__)

#: Sent when a local server needs no key (the client insists on one).
_NO_KEY = "not-needed"

#: ``ChatRequest.endpoint`` of a request sent to ``/v1/completions`` as one raw prompt.
COMPLETIONS = "completions"


class CallDeferred(Exception):  # noqa: N818 (not an error: the call is answered later)
    """Raised by a backend that does not answer now: the request goes into a batch
    (``synth.batch_round``), and the job waits for the batch's reply in the store."""


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion to ask for. ``key`` identifies it in the run store.

    ``stop`` and ``extra_body`` (fields the endpoint takes beside the standard ones, e.g.
    ``{"reasoning_effort": "low"}``) are part of the key when set; left unset they are
    left out of it, so that a store written before they existed keeps its keys.
    ``item_id`` and ``stage`` only say what the call was for (the run store keeps them
    for ``cat export``): the same request asked for another reason is the same call.
    ``endpoint`` "completions" sends the messages' texts as one raw prompt to
    ``/v1/completions`` (``synth.loglikelihood.prompt_text``); it enters the key only
    then."""

    model: str
    messages: tuple[Message, ...]
    temperature: float = 0.0
    seed: int | None = 0
    max_tokens: int | None = None
    stop: tuple[str, ...] | None = None
    extra_body: Mapping[str, object] | None = None
    endpoint: str = "chat"
    item_id: str | None = field(default=None, compare=False)
    stage: str | None = field(default=None, compare=False)

    def payload(self) -> dict[str, object]:
        """What the key covers: the model, the messages and the sampling parameters."""
        payload: dict[str, object] = {
            "model": self.model,
            "messages": [{"role": r, "content": c} for r, c in self.messages],
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
        }
        if self.stop is not None:
            payload["stop"] = list(self.stop)
        if self.extra_body is not None:
            payload["extra_body"] = dict(self.extra_body)
        if self.endpoint != "chat":
            payload["endpoint"] = self.endpoint
        return payload

    @cached_property
    def key(self) -> str:
        canonical = json.dumps(self.payload(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ChatReply:
    """The reply text and what it cost.

    A reasoning model's thinking, where the endpoint sends it apart from the content
    (``reasoning_content`` or ``reasoning``), is ``reasoning``; ``reasoning_tokens`` is
    the part of ``completion_tokens`` it took, where the endpoint says. ``finish_reason``
    is the endpoint's ("stop"; "length" for a reply cut off at the token limit)."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency: float = 0.0  # seconds, of the successful attempt
    attempts: int = 1
    reasoning: str | None = None
    finish_reason: str | None = None
    reasoning_tokens: int = 0

    @property
    def truncated(self) -> bool:
        """Whether the reply was cut off at the token limit."""
        return self.finish_reason == "length"


class ChatBackend(Protocol):
    """Anything that turns a chat request into a reply."""

    async def complete(self, request: ChatRequest) -> ChatReply: ...


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry a failing call."""

    max_attempts: int = 6
    base_delay: float = 0.5  # seconds before the 2nd attempt, doubling after that
    max_delay: float = 30.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise SynthError(f"max_attempts must be at least 1, got {self.max_attempts}")
        if not 0 <= self.base_delay <= self.max_delay:
            raise SynthError("need 0 <= base_delay <= max_delay")

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based): a server's
        Retry-After if it gave one, else full-jitter exponential backoff (so that many
        clients throttled together do not all come back at the same instant)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay)
        ceiling = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        return ceiling * (0.5 + 0.5 * rng.random())


def api_key(base_url: str, env_name: str = DEFAULT_KEY_ENV) -> str:
    """The key from ``env_name``; a local server may go without one."""
    key = os.environ.get(env_name, "")
    if key:
        return key
    host = urlparse(base_url).hostname or ""
    if host in ("127.0.0.1", "localhost", "::1") or host.endswith(".local"):
        return _NO_KEY
    raise SynthError(f"no API key: set the environment variable {env_name} for {base_url}")


def check_reachable(url: str, timeout: float = 10.0) -> None:
    """Fail before any paid call if nothing answers at ``url``: any HTTP reply from
    ``URL/models`` counts (401 and 404 too), only a refused or unresolvable address
    does not."""
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/models", timeout=timeout):
            return
    except urllib.error.HTTPError:
        return
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise SynthError(f"cannot reach {url} ({reason})") from exc


def _openai() -> ModuleType:
    """The ``openai`` package, imported on first use: it takes about a second, which
    every ``cat`` command that never calls an endpoint would pay at start-up."""
    import openai

    return openai


@cache
def _transient() -> tuple[type[Exception], ...]:
    """Failures a later attempt may not repeat."""
    openai = _openai()
    return (
        openai.RateLimitError,
        openai.InternalServerError,
        openai.APITimeoutError,
        openai.APIConnectionError,
        openai.APIResponseValidationError,
        json.JSONDecodeError,
    )


@dataclass
class OpenAIBackend:
    """An OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, SGLang, DeepSeek, Qwen …)."""

    base_url: str
    key_env: str = DEFAULT_KEY_ENV
    timeout: float = 60.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    seed: int = 0
    _client: openai.AsyncOpenAI | None = field(default=None, init=False, repr=False)
    _rng: random.Random = field(init=False, repr=False)
    _listing: asyncio.Lock = field(default_factory=asyncio.Lock, init=False, repr=False)
    _listed: tuple[tuple[str, ...] | None, bool] | None = field(
        default=None, init=False, repr=False
    )

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise SynthError(f"base URL must start with http:// or https://, got {self.base_url!r}")
        if self.timeout <= 0:
            raise SynthError(f"timeout must be positive, got {self.timeout}")
        self._rng = random.Random(self.seed)

    def _get_client(self) -> openai.AsyncOpenAI:
        if self._client is None:
            self._client = _openai().AsyncOpenAI(
                api_key=api_key(self.base_url, self.key_env),
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=0,
            )
        return self._client

    def _scrub(self, text: str) -> str:
        # Some servers echo the key back in an error message; it must not travel further.
        key = os.environ.get(self.key_env, "")
        return text.replace(key, "***") if key else text

    async def _not_found(self, model: str, exc: openai.NotFoundError) -> SynthError:
        """The error for a 404 on ``model``, in one line: the endpoint has no such
        model, and the models it has when it lists them (the server's own reason when it
        lists ``model``: the 404 was about something else)."""
        listed, routed = await self._models()
        if listed is not None and model in listed:
            return SynthError(f"{model}: {self._scrub(_describe(exc))}")
        text = f"the endpoint {self.base_url} has no model {model!r}"
        if listed is not None:
            text += f"; it has: {_names(listed)}" if listed else "; it lists none"
        elif not routed:
            # Neither route found: the usual cause is a base URL without its /v1.
            text += f", nor a list at {self.base_url.rstrip('/')}/models: is the URL right?"
        return SynthError(self._scrub(text))

    async def _models(self) -> tuple[tuple[str, ...] | None, bool]:
        """The endpoint's model names (None when it does not list them) and whether it
        has a ``/models`` route at all; asked once per backend, as every call of a model
        it lacks gets the same 404."""
        async with self._listing:
            if self._listed is None:
                self._listed = await _list_models(self._get_client())
            return self._listed

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def complete(self, request: ChatRequest) -> ChatReply:
        """The reply to ``request``: a chat completion, or a text completion of its
        messages as one prompt when its ``endpoint`` is "completions"."""
        client = self._get_client()
        if request.endpoint == COMPLETIONS:
            return await self._retrying(request.model, lambda: _text_completion(client, request))
        return await self._retrying(request.model, lambda: _chat_completion(client, request))

    async def _retrying(self, model: str, once: Callable[[], Awaitable[ChatReply]]) -> ChatReply:
        """``once()``'s reply, asked again after a failure a later attempt may not
        repeat (with backoff, up to the retry budget); ``SynthError`` at once for one it
        would (a 4xx), naming ``model``."""
        last = ""
        for attempt in range(1, self.retry.max_attempts + 1):
            t0 = time.perf_counter()
            try:
                reply = await once()
            except _transient() as exc:
                last = self._scrub(_describe(exc))
                retry_after = _retry_after(exc)
            except _openai().NotFoundError as exc:
                raise await self._not_found(model, exc) from exc
            except _openai().APIStatusError as exc:
                raise SynthError(f"{model}: {self._scrub(_describe(exc))}") from exc
            except (IndexError, AttributeError) as exc:
                last, retry_after = f"reply without a message ({exc})", None
            else:
                return replace(reply, latency=time.perf_counter() - t0, attempts=attempt)
            if attempt == self.retry.max_attempts:
                break
            wait = self.retry.delay(attempt, retry_after, self._rng)
            log.debug("%s: attempt %d failed (%s); retrying in %.2fs", model, attempt, last, wait)
            await asyncio.sleep(wait)
        raise SynthError(
            f"{model}: gave up after {self.retry.max_attempts} "
            f"attempt{'' if self.retry.max_attempts == 1 else 's'} ({last})"
        )


async def _chat_completion(client: openai.AsyncOpenAI, request: ChatRequest) -> ChatReply:
    """One chat completion (no retry).

    Posted as the body ``client.chat.completions.create`` would send for these fields,
    through the client's own ``post``: ``create`` first walks its whole parameter schema
    over every message (``openai._utils._transform``), which for plain strings changes
    nothing and was a fifth of ``cat demo``'s time (20,000 calls to a local server)."""
    body: dict[str, Any] = request.payload()  # what the key covers, which is what is sent
    body.pop("endpoint", None)
    extra = body.pop("extra_body", None)
    options: Any = {"extra_json": extra} if extra else {}
    response = await client.post(
        "/chat/completions",
        body=body,
        options=options,
        cast_to=_openai().types.chat.ChatCompletion,
    )
    choice = response.choices[0]
    details = getattr(response.usage, "completion_tokens_details", None)
    return ChatReply(
        choice.message.content or "",
        *_token_counts(response.usage),
        reasoning=reasoning_of(choice.message),
        finish_reason=getattr(choice, "finish_reason", None),
        reasoning_tokens=int(getattr(details, "reasoning_tokens", None) or 0),
    )


async def _text_completion(client: openai.AsyncOpenAI, request: ChatRequest) -> ChatReply:
    """One text completion of the request's messages as one raw prompt (no retry)."""
    from synth.loglikelihood import prompt_text

    response = await client.completions.create(
        model=request.model,
        prompt=prompt_text(request.messages),
        temperature=request.temperature,
        seed=request.seed,
        max_tokens=request.max_tokens,
        extra_body=dict(request.extra_body) if request.extra_body else None,
        **_optional(request),
    )
    choice = response.choices[0]
    return ChatReply(
        choice.text or "",
        *_token_counts(response.usage),
        finish_reason=getattr(choice, "finish_reason", None),
    )


def _token_counts(usage: Any) -> tuple[int, int]:
    """The prompt and completion tokens a reply's ``usage`` reports (0 without)."""
    return (usage.prompt_tokens, usage.completion_tokens) if usage else (0, 0)


async def loglikelihood_reply(backend: OpenAIBackend, request: ChatRequest) -> ChatReply:
    """The options' log-likelihoods (``synth.loglikelihood``) for ``request``: its one
    message is the prompt, its ``extra_body`` holds the continuations; one completions
    request with ``echo`` and ``logprobs`` scores them all."""
    from synth.loglikelihood import CONTINUATIONS, OptionScores, option_loglikelihoods

    prompt = request.messages[-1][1]
    extra = dict(request.extra_body or {})
    listed = cast(list[tuple[str, str]], extra.pop(CONTINUATIONS))
    pairs = [(str(letter), str(text)) for letter, text in listed]
    client = backend._get_client()

    async def once() -> ChatReply:
        response = await client.completions.create(
            model=request.model,
            prompt=[prompt + text for _, text in pairs],
            max_tokens=1,
            temperature=0.0,
            echo=True,
            logprobs=1,
            seed=request.seed,
            extra_body=extra or None,
        )
        by_index = sorted(response.choices, key=lambda c: c.index)
        if len(by_index) != len(pairs):
            raise SynthError(
                f"{request.model}: {len(by_index)} choices came back for {len(pairs)} options"
            )
        sums = [
            option_loglikelihoods(choice.logprobs, len(prompt), len(text))
            for choice, (_, text) in zip(by_index, pairs, strict=True)
        ]
        scores = OptionScores(
            tuple(letter for letter, _ in pairs),
            tuple(sums),
            tuple(len(text) for _, text in pairs),
        )
        return ChatReply(scores.to_text(), *_token_counts(response.usage))

    return await backend._retrying(request.model, once)


def reasoning_of(message: object) -> str | None:
    """The reasoning a message carries apart from its content: ``reasoning_content``
    (DeepSeek, vLLM, Qwen) or ``reasoning`` (OpenRouter, gpt-oss on some servers);
    None without. The client keeps fields it does not know as extra attributes."""
    for name in ("reasoning_content", "reasoning"):
        value = getattr(message, name, None)
        if value is None:
            extra = getattr(message, "model_extra", None) or {}
            value = extra.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def _optional(request: ChatRequest) -> dict[str, Any]:
    """The optional fields ``request`` sets, and only those: an unset one is left out
    of the body rather than sent as null, which some servers refuse."""
    return {} if request.stop is None else {"stop": list(request.stop)}


#: Model names a "no such model" message lists at most (OpenAI's endpoint has 100+).
_MAX_NAMES = 20


async def _list_models(client: openai.AsyncOpenAI) -> tuple[tuple[str, ...] | None, bool]:
    """The names ``GET /models`` lists, sorted (None when it fails), and whether the
    route exists (False only for a 404). The list only improves a message: any failure,
    a reply not shaped like a list too, leaves it out."""
    try:
        return tuple(sorted({m.id async for m in client.models.list()})), True
    except _openai().NotFoundError:
        return None, False
    except (_openai().OpenAIError, ValueError, TypeError, AttributeError):
        return None, True


def _names(names: Sequence[str]) -> str:
    """The names as "a, b, c", cut at ``_MAX_NAMES`` ("…, 143 in all")."""
    shown = ", ".join(names[:_MAX_NAMES])
    return shown if len(names) <= _MAX_NAMES else f"{shown}, … ({len(names)} in all)"


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    value = headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff


def _describe(exc: BaseException) -> str:
    """A short reason, without request headers (where the key would be)."""
    status = getattr(exc, "status_code", None)
    name = type(exc).__name__
    message = str(getattr(exc, "message", "") or exc).splitlines()[0][:200] if str(exc) else ""
    return f"{name} {status}: {message}" if status else f"{name}: {message}"
