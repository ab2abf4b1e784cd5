"""The local OpenAI-compatible server, driven by the real ``openai`` client."""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import select
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from itempool import ItemType, PoolItem
from synth.errors import SynthError
from synth.local_server import OUTCOMES, FaultPlan, LocalServer
from synth.local_server.process import ServerProcess
from synth.local_server.server import parse_models
from synth.local_server.simulator import random_item_params

REPO = Path(__file__).resolve().parents[2]

ITEMS = (
    PoolItem(
        id="en-planet",
        question="Which planet in our solar system is known as the red planet?",
        options={"A": "Venus", "B": "Mars", "C": "Jupiter", "D": "Saturn"},
        answer="B",
    ),
    PoolItem(
        id="en-water",
        question="At sea level, at what temperature in degrees Celsius does pure water boil?",
        options={"A": "90", "B": "95", "C": "100", "D": "110"},
        answer="C",
    ),
    PoolItem(
        id="en-short",
        question="2 + 2 = ?",
        options={"A": "3", "B": "4", "C": "5"},
        answer="B",
    ),
    PoolItem(
        id="en-multi",
        type=ItemType.MULTI,
        question="Which of the following numbers are prime? Select all that apply.",
        options={"A": "4", "B": "7", "C": "9", "D": "11"},
        answer="BD",
    ),
    PoolItem(
        id="zh-capital",
        question="中华人民共和国的首都是哪一座城市？请从下列选项中选择。",
        options={"A": "上海", "B": "北京", "C": "广州", "D": "深圳"},
        answer="B",
    ),
    PoolItem(
        id="zh-order",
        type=ItemType.ORDER,
        question="请将下列朝代按时间先后顺序排列，从最早到最晚。",
        options={"A": "唐", "B": "汉", "C": "秦", "D": "宋"},
        answer="CBAD",
    ),
)
BY_ID = {item.id: item for item in ITEMS}
MODELS = {"good": 0.8, "perfect": 1.0, "hopeless": 0.0}
_STATEMENT = re.compile(r"(?:答案：|Answer:|answer is|order is)\s*([^\n]*)$")
_CJK = re.compile(r"[\u4e00-\u9fff]")


def prompt(item: PoolItem, intro: str = "") -> str:
    """The question as a prompt template would put it: question, options, instruction."""
    options = "\n".join(f"{letter}. {text}" for letter, text in item.options.items())
    return f"{intro}Question: {item.question}\n{options}\nGive the letter of your answer."


def ask(item: PoolItem, system: str = "You are a careful test taker.") -> list[dict[str, Any]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": prompt(item)}]


def final_answer(text: str) -> str:
    """The letters of the reply's last line, which must be its answer statement."""
    last = text.strip().splitlines()[-1]
    found = _STATEMENT.search(last)
    assert found is not None, f"no answer statement at the end of {text!r}"
    return "".join(re.findall(r"[A-Z]", found.group(1)))


def is_right(item: PoolItem, letters: str) -> bool:
    if item.type is ItemType.MULTI:
        return set(letters) == set(item.answer)
    return letters == item.answer


def client(base_url: str, timeout: float = 5.0) -> openai.OpenAI:
    return openai.OpenAI(api_key="test", base_url=base_url, max_retries=0, timeout=timeout)


def reply_text(api: openai.OpenAI, model: str, messages: list[dict[str, Any]]) -> str:
    result = api.chat.completions.create(
        model=model,
        messages=messages,  # type: ignore[arg-type]
        temperature=0,
        seed=1,
    )
    content = result.choices[0].message.content
    assert content is not None
    return content


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LocalServer]:
    with LocalServer(ITEMS, MODELS, seed=7, log_path=tmp_path / "requests.jsonl") as running:
        yield running


def test_a_completion_has_the_openai_shape(server: LocalServer) -> None:
    api = client(server.base_url)
    result = api.chat.completions.create(
        model="good", messages=ask(BY_ID["en-planet"]), temperature=0, seed=3, max_tokens=200
    )
    assert result.object == "chat.completion"
    assert result.model == "good"
    choice = result.choices[0]
    assert choice.finish_reason == "stop"
    assert choice.message.role == "assistant"
    assert choice.message.content is not None
    assert final_answer(choice.message.content) in "ABCD"
    assert result.usage is not None
    assert result.usage.prompt_tokens >= 1
    assert result.usage.completion_tokens >= 1
    usage = result.usage
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    [record] = server.records
    assert (record.model, record.item_id, record.outcome) == ("good", "en-planet", "ok")
    assert server.completed_keys() == [record.key]


def test_the_async_client_works_too(server: LocalServer) -> None:
    async def run() -> list[str]:
        api = openai.AsyncOpenAI(
            api_key="test", base_url=server.base_url, max_retries=0, timeout=5.0
        )
        results = await asyncio.gather(
            *(
                api.chat.completions.create(model="perfect", messages=ask(item), temperature=0)
                for item in ITEMS
            )
        )
        await api.close()
        return [r.choices[0].message.content or "" for r in results]

    texts = asyncio.run(run())
    assert [final_answer(t) for t in texts] == [item.answer for item in ITEMS]


def test_right_answer_rate_follows_the_model(server: LocalServer) -> None:
    api = client(server.base_url)
    right = 0
    n = 402
    for i in range(n):
        item = ITEMS[i % len(ITEMS)]
        text = reply_text(api, "good", ask(item, f"Session {i}."))
        right += is_right(item, final_answer(text))
    # p = 0.8, n = 402: one standard deviation is 0.02.
    assert abs(right / n - 0.8) < 0.06
    assert len(set(server.completed_keys())) == n


def test_perfect_and_hopeless_models_and_valid_wrong_answers(server: LocalServer) -> None:
    api = client(server.base_url)
    for item in ITEMS:
        for i in range(6):
            messages = ask(item, f"Run {i}.")
            assert final_answer(reply_text(api, "perfect", messages)) == item.answer
            wrong = final_answer(reply_text(api, "hopeless", messages))
            assert not is_right(item, wrong)
            assert set(wrong) <= set(item.options)
            if item.type is ItemType.SINGLE:
                assert len(wrong) == 1
            if item.type is ItemType.ORDER:
                assert sorted(wrong) == sorted(item.answer)


def test_the_same_request_gets_the_same_reply(server: LocalServer) -> None:
    api = client(server.base_url)
    messages = ask(BY_ID["en-water"])
    first = reply_text(api, "good", messages)
    assert all(reply_text(api, "good", messages) == first for _ in range(3))
    others = {reply_text(api, "good", ask(BY_ID["en-water"], f"Variant {i}.")) for i in range(8)}
    assert len(others) > 1  # and different requests are different draws


def test_reply_language_follows_the_question(server: LocalServer) -> None:
    api = client(server.base_url)
    for item in ITEMS:
        for i in range(5):
            text = reply_text(api, "good", ask(item, f"Language check {i}."))
            last = text.strip().splitlines()[-1]
            if _CJK.search(item.question):
                assert last.startswith("答案：")
            else:
                assert _CJK.search(text) is None
                assert "answer" in last.lower() or "order" in last.lower()


def test_finds_the_question_in_a_few_shot_prompt(server: LocalServer) -> None:
    api = client(server.base_url)
    target = BY_ID["en-multi"]
    # The example question comes first; the asked question is re-wrapped and indented,
    # and sent as content parts.
    example = f"Example:\n{prompt(BY_ID['en-planet'])}\nAnswer: B"
    rewrapped = prompt(target).replace("following numbers", "following\n    numbers")
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": example},
        {"role": "assistant", "content": "Understood."},
        {"role": "user", "content": [{"type": "text", "text": rewrapped}]},
    ]
    assert set(final_answer(reply_text(api, "perfect", messages))) == set("BD")
    assert server.records[-1].item_id == "en-multi"
    # The short question is found as well, even mid-sentence.
    short = [{"role": "user", "content": "Quick one: 2 + 2 = ? (A) 3 (B) 4 (C) 5"}]
    assert final_answer(reply_text(api, "perfect", short)) == "B"
    assert server.records[-1].item_id == "en-short"


def test_an_unknown_question_gets_a_generic_reply(server: LocalServer) -> None:
    text = reply_text(client(server.base_url), "good", [{"role": "user", "content": "Hello!"}])
    assert re.search(r"\b[A-D]\b", text) is None
    assert _STATEMENT.search(text) is None
    record = server.records[-1]
    assert (record.item_id, record.outcome) == (None, "ok")


def test_an_unknown_model_is_404(server: LocalServer) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        reply_text(client(server.base_url), "gpt-nonexistent", ask(ITEMS[0]))
    assert caught.value.status_code == 404
    assert caught.value.code == "model_not_found"
    assert server.records[-1].outcome == "unknown_model"
    assert server.completed_keys() == []


def test_models_are_listed(server: LocalServer) -> None:
    listed = [model.id for model in client(server.base_url).models.list()]
    assert listed == list(MODELS)


def test_a_malformed_request_is_400(server: LocalServer) -> None:
    request = urllib.request.Request(
        server.base_url + "/chat/completions",
        data=b'{"model": "good", "messages": [',
        headers={"Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=5)
    assert caught.value.code == 400
    assert json.loads(caught.value.read())["error"]["type"] == "invalid_request_error"
    with pytest.raises(openai.BadRequestError):
        reply_text(client(server.base_url), "good", [])
    assert [r.outcome for r in server.records] == ["bad_request", "bad_request"]


@pytest.mark.parametrize(
    ("plan", "error", "outcome"),
    [
        (FaultPlan(rate_429=1.0), openai.RateLimitError, "429"),
        (FaultPlan(rate_500=1.0), openai.InternalServerError, "500"),
        (FaultPlan(rate_slow=1.0, slow_seconds=1.0), openai.APITimeoutError, "slow"),
        # The installed client does not wrap a body it cannot decode.
        (FaultPlan(rate_malformed=1.0), json.JSONDecodeError, "malformed"),
        (FaultPlan(rate_drop=1.0), openai.APIConnectionError, "drop"),
    ],
)
def test_each_fault_raises_its_client_error(
    plan: FaultPlan, error: type[Exception], outcome: str
) -> None:
    with LocalServer(ITEMS, MODELS, faults=plan) as server:
        api = client(server.base_url, timeout=0.3)
        for item in (BY_ID["en-planet"], BY_ID["zh-capital"]):
            with pytest.raises(error) as caught:
                reply_text(api, "good", ask(item))
            if outcome == "drop":
                assert not isinstance(caught.value, openai.APITimeoutError)
            if outcome == "429":
                assert isinstance(caught.value, openai.RateLimitError)
                assert caught.value.response.headers["retry-after"] == "0.05"
        assert [r.outcome for r in server.records] == [outcome, outcome]
        assert [r.item_id for r in server.records] == ["en-planet", "zh-capital"]
        assert server.completed_keys() == []


def test_faults_are_per_request_so_a_retry_succeeds(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    plan = FaultPlan(rate_429=0.3, rate_500=0.3)
    with LocalServer(ITEMS, MODELS, faults=plan, seed=1, log_path=log) as server:
        api = client(server.base_url)
        messages = ask(BY_ID["zh-order"])
        texts = []
        for _ in range(3):
            for _attempt in range(40):
                try:
                    texts.append(reply_text(api, "good", messages))
                    break
                except (openai.RateLimitError, openai.InternalServerError):
                    continue
        records = server.records
    assert len(texts) == 3
    assert len(set(texts)) == 1  # a fault does not change the answer
    outcomes = {r.outcome for r in records}
    assert {"ok", "429", "500"} <= outcomes <= set(OUTCOMES)
    assert len({r.key for r in records}) == 1
    assert server.completed_keys() == [r.key for r in records if r.outcome == "ok"]
    assert len(server.completed_keys()) == 3
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [line["outcome"] for line in lines] == [r.outcome for r in records]
    assert {line["item_id"] for line in lines} == {"zh-order"}


@pytest.mark.skipif(not hasattr(socket, "MSG_MORE"), reason="needs Linux's MSG_MORE")
def test_a_client_that_hung_up_is_not_counted_as_completed(server: LocalServer) -> None:
    host, port = server.base_url.removeprefix("http://").removesuffix("/v1").split(":")
    body = json.dumps({"model": "good", "messages": ask(ITEMS[0])}).encode()
    head = f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n"
    for _ in range(3):
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            # MSG_MORE holds the request back so the hang-up travels with it: the server
            # sees a client that is already gone, as a killed client leaves it.
            sock.sendall(head.encode() + body, socket.MSG_MORE)
            sock.shutdown(socket.SHUT_WR)
            assert sock.recv(65536) == b""
    assert [r.outcome for r in server.records] == ["drop"] * 3
    assert server.completed_keys() == []


def test_stop_cuts_keep_alive_connections() -> None:
    server = LocalServer(ITEMS, MODELS)
    api = client(server.start(), timeout=2.0)
    reply_text(api, "good", ask(ITEMS[0]))
    server.stop()
    server.stop()  # twice is fine
    with pytest.raises(openai.APIConnectionError):
        reply_text(api, "good", ask(ITEMS[1]))
    with pytest.raises(SynthError):
        _ = LocalServer(ITEMS, MODELS).base_url


@pytest.mark.parametrize(
    "kwargs",
    [
        {"rate_429": 1.5},
        {"rate_500": -0.1},
        {"rate_slow": 0.6, "rate_drop": 0.6},
        {"retry_after": -1.0},
        {"slow_seconds": float("nan")},
    ],
)
def test_fault_plans_are_checked(kwargs: dict[str, float]) -> None:
    with pytest.raises(SynthError):
        FaultPlan(**kwargs)


def test_server_arguments_are_checked() -> None:
    with pytest.raises(SynthError, match="probability"):
        LocalServer(ITEMS, {"m": 1.2})
    with pytest.raises(SynthError, match="model"):
        LocalServer(ITEMS, {})
    with pytest.raises(SynthError, match="both simulated and replayed"):
        LocalServer(ITEMS, MODELS, replay={"good": {"en-planet": 1}})
    with pytest.raises(SynthError, match="answer to 'en-planet' is 2; only 0 or 1"):
        LocalServer(ITEMS, {}, replay={"r": {"en-planet": 2}})


def test_module_entry_point_serves_until_sigterm(tmp_path: Path) -> None:
    pool = tmp_path / "pool"
    pool.mkdir()
    (pool / "pool.json").write_text(json.dumps({"name": "tiny", "language": "en"}))
    english = [item for item in ITEMS if not _CJK.search(item.question)]
    (pool / "items.jsonl").write_text("".join(item.model_dump_json() + "\n" for item in english))
    log = tmp_path / "log.jsonl"
    command = [sys.executable, "-m", "synth.local_server", "--pool", str(pool)]
    command += ["--models", "m1=1.0,m2=0.5", "--seed", "3", "--log", str(log)]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 20.0)
        assert ready, "the server printed nothing within 20 s"
        line = process.stdout.readline().strip()
        assert re.fullmatch(r"READY http://127\.0\.0\.1:\d+/v1", line)
        base_url = line.split()[1]
        text = reply_text(client(base_url), "m1", ask(BY_ID["en-water"]))
        assert final_answer(text) == "C"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    [record] = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert (record["model"], record["item_id"], record["outcome"]) == ("m1", "en-water", "ok")


def test_irt_models_answer_by_ability_and_item() -> None:
    irt = {item.id: (2.0, -1.0 if k % 2 else 1.5, 0.0) for k, item in enumerate(ITEMS)}
    server = LocalServer(ITEMS, {"strong": 2.0, "weak": -2.0}, irt=irt)
    easy, hard = ITEMS[1].id, ITEMS[0].id  # b = -1 and b = 1.5
    assert server.p_right("strong", easy) > 0.99 and server.p_right("weak", hard) < 0.001
    assert server.p_right("weak", easy) == pytest.approx(1 / (1 + math.exp(2.0)))
    with pytest.raises(SynthError, match="no IRT parameters"):
        LocalServer(ITEMS, {"m": 0.0}, irt={ITEMS[0].id: (1.0, 0.0, 0.0)})


def test_random_items_make_models_of_abilities_differ_item_by_item() -> None:
    params = random_item_params(ITEMS, 5)
    assert params == random_item_params(ITEMS, 5) != random_item_params(ITEMS, 6)
    assert all(
        a > 0 and c == 1 / len(item.options) for item in ITEMS for a, _, c in [params[item.id]]
    )
    assert len({b for _, b, _ in params.values()}) == len(ITEMS)
    server = LocalServer(ITEMS, {"strong": 1.5, "weak": -0.5}, irt=params)
    for item in ITEMS:
        assert server.p_right("strong", item.id) > server.p_right("weak", item.id)
    # Abilities outside [0, 1] parse; without --random-items they are refused as rates.
    assert parse_models("strong=1.5,weak=-0.5") == {"strong": 1.5, "weak": -0.5}
    with pytest.raises(SynthError, match="probability of a right answer must be in"):
        LocalServer(ITEMS, {"weak": -0.5})
    with pytest.raises(argparse.ArgumentTypeError, match="NAME=THETA with --random-items"):
        parse_models("strong=nan")


def test_a_server_in_a_process_of_its_own_answers_as_in_this_one() -> None:
    irt = random_item_params(ITEMS, 3)
    models = {"strong": 1.5, "weak": -0.5}
    here = LocalServer(ITEMS, models, irt=irt, seed=4)
    with ServerProcess(ITEMS, models, irt=irt, seed=4) as apart, here:
        item = BY_ID["en-water"]
        assert reply_text(client(apart.base_url), "strong", ask(item)) == reply_text(
            client(here.base_url), "strong", ask(item)
        )
        assert apart.p_right("weak", item.id) == here.p_right("weak", item.id)
        process = apart._process
    assert process is not None and not process.is_alive()  # ended with the block
