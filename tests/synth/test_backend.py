"""The OpenAI-compatible backend: retries, Retry-After, keys."""

from __future__ import annotations

import asyncio
import random
import time

import openai
import pytest
from openai.resources.models import AsyncModels

from synth.backend import ChatReply, ChatRequest, OpenAIBackend, RetryPolicy, api_key
from synth.errors import SynthError
from synth.local_server import FaultPlan, LocalServer
from synth.prompts import Style, generation
from tests.synth.pools import EN_ITEMS

REQUEST = ChatRequest("m", generation(EN_ITEMS[0], "en", Style.DIRECT))


def _complete(backend: OpenAIBackend, request: ChatRequest = REQUEST) -> ChatReply:
    async def go() -> ChatReply:
        try:
            return await backend.complete(request)
        finally:
            await backend.close()

    return asyncio.run(go())


def test_backoff_has_jitter_a_ceiling_and_obeys_retry_after() -> None:
    policy = RetryPolicy(max_attempts=5, base_delay=1.0, max_delay=4.0)
    rng = random.Random(0)
    waits = [policy.delay(3, None, rng) for _ in range(200)]
    assert min(waits) >= 2.0 and max(waits) <= 4.0 and len(set(waits)) > 100
    assert all(policy.delay(10, None, rng) <= 4.0 for _ in range(20))
    assert policy.delay(1, 2.5, rng) == 2.5 and policy.delay(1, 99.0, rng) == 4.0
    with pytest.raises(SynthError):
        RetryPolicy(max_attempts=0)


def test_keys_come_from_the_environment_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert api_key("http://127.0.0.1:8000/v1") == "not-needed"
    with pytest.raises(SynthError, match="set the environment variable OPENAI_API_KEY"):
        api_key("https://api.openai.com/v1")
    monkeypatch.setenv("MY_KEY", "sk-abc")
    assert api_key("https://api.openai.com/v1", "MY_KEY") == "sk-abc"


def test_a_reply_with_usage_after_transient_faults() -> None:
    faults = FaultPlan(rate_500=0.3, rate_drop=0.3, retry_after=0.0)
    with LocalServer(EN_ITEMS, {"m": 1.0}, faults=faults, seed=1) as server:
        policy = RetryPolicy(max_attempts=30, base_delay=0.001, max_delay=0.01)
        reply = _complete(OpenAIBackend(server.base_url, retry=policy))
        outcomes = [r.outcome for r in server.records]
    assert "(B)" in reply.text or "B" in reply.text.split()[-1]
    assert reply.prompt_tokens > 0 and reply.completion_tokens > 0
    assert reply.attempts == len(outcomes) and outcomes[-1] == "ok"


def test_retry_after_is_honoured_and_the_budget_ends_in_a_clear_error() -> None:
    faults = FaultPlan(rate_429=1.0, retry_after=0.2)
    with LocalServer(EN_ITEMS, {"m": 1.0}, faults=faults) as server:
        t0 = time.perf_counter()
        with pytest.raises(SynthError, match=r"m: gave up after 3 attempts \(RateLimitError 429"):
            _complete(OpenAIBackend(server.base_url, retry=RetryPolicy(max_attempts=3)))
        assert time.perf_counter() - t0 >= 0.4  # two waits of Retry-After
        assert len(server.records) == 3


def test_errors_a_retry_cannot_fix_are_final_and_never_show_the_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-123")
    with LocalServer(EN_ITEMS, {"m": 1.0}) as server:
        request = ChatRequest("unknown-model", REQUEST.messages)
        with pytest.raises(SynthError, match="has no model 'unknown-model'") as info:
            _complete(OpenAIBackend(server.base_url), request)
        assert len(server.records) == 1
    assert "sk-secret-123" not in str(info.value)


def test_a_model_the_endpoint_lacks_is_named_with_the_models_it_has() -> None:
    with LocalServer(EN_ITEMS, {"good": 0.9, "bad": 0.3}) as server:
        backend = OpenAIBackend(server.base_url)

        async def twice() -> list[str]:
            messages = []
            try:
                for _ in range(2):  # the second 404 reuses the first's list
                    with pytest.raises(SynthError) as info:
                        await backend.complete(ChatRequest("nosuch", REQUEST.messages))
                    messages.append(str(info.value))
            finally:
                await backend.close()
            return messages

        messages = asyncio.run(twice())
    assert (
        messages == [f"the endpoint {server.base_url} has no model 'nosuch'; it has: bad, good"] * 2
    )


def test_without_a_model_list_the_message_leaves_it_out(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(self: AsyncModels) -> None:
        raise openai.OpenAIError("the list is refused")

    with LocalServer(EN_ITEMS, {"good": 0.9}) as server:
        monkeypatch.setattr(AsyncModels, "list", refused)
        with pytest.raises(SynthError) as info:
            _complete(OpenAIBackend(server.base_url), ChatRequest("nosuch", REQUEST.messages))
        assert str(info.value) == f"the endpoint {server.base_url} has no model 'nosuch'"
        # A wrong base URL: neither chat completions nor the model list is found there.
        monkeypatch.undo()
        root = server.base_url.removesuffix("/v1") + "/api"
        with pytest.raises(SynthError) as info:
            _complete(OpenAIBackend(root), ChatRequest("good", REQUEST.messages))
    assert str(info.value) == (
        f"the endpoint {root} has no model 'good', nor a list at {root}/models: is the URL right?"
    )


def test_a_long_model_list_is_cut() -> None:
    models = {f"m{k:02d}": 0.5 for k in range(25)}
    with LocalServer(EN_ITEMS, models) as server, pytest.raises(SynthError) as info:
        _complete(OpenAIBackend(server.base_url), ChatRequest("nosuch", REQUEST.messages))
    listed = ", ".join(f"m{k:02d}" for k in range(20))
    assert str(info.value).endswith(f"; it has: {listed}, … (25 in all)")


def test_timeouts_are_retried_then_reported() -> None:
    faults = FaultPlan(rate_slow=1.0, slow_seconds=0.5)
    with LocalServer(EN_ITEMS, {"m": 1.0}, faults=faults) as server:
        policy = RetryPolicy(max_attempts=2, base_delay=0.0, max_delay=0.0)
        with pytest.raises(SynthError, match="gave up after 2 attempts \\(APITimeoutError"):
            _complete(OpenAIBackend(server.base_url, timeout=0.2, retry=policy))


def test_bad_settings_fail() -> None:
    with pytest.raises(SynthError, match="http"):
        OpenAIBackend("localhost:8000")
    with pytest.raises(SynthError, match="timeout"):
        OpenAIBackend("http://x/v1", timeout=0)


def test_a_raw_prompt_goes_to_the_completions_endpoint_and_is_cut_at_its_stop() -> None:
    messages = (("system", "Be brief."), ("user", REQUEST.messages[-1][1]))
    raw = ChatRequest("m", messages, max_tokens=64, stop=(")",), endpoint="completions")
    chat = ChatRequest("m", messages, max_tokens=64, stop=(")",))
    # The route is part of the call's key; a chat request's key is what it always was.
    assert raw.key != chat.key and "endpoint" not in chat.payload()
    assert raw.payload()["endpoint"] == "completions"
    with LocalServer(EN_ITEMS, {"m": 1.0}) as server:
        reply = _complete(OpenAIBackend(server.base_url), raw)
        (record,) = server.records
    assert record.route == "completions" and record.stop == [")"]
    # One prompt: the messages' texts a blank line apart, no chat template.
    assert record.messages == [("user", f"Be brief.\n\n{messages[1][1]}")]
    assert ")" not in reply.text and reply.finish_reason == "stop"
    assert reply.prompt_tokens > 0


def test_batches_refuse_raw_prompts() -> None:
    from synth.batch_files import request_line

    raw = ChatRequest("m", REQUEST.messages, endpoint="completions")
    assert '"url"' in request_line(REQUEST)
    with pytest.raises(SynthError, match="batches carry chat requests only"):
        request_line(raw)
