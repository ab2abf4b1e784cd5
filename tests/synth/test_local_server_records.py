"""The local server's request log keeps each request's generation parameters."""

from __future__ import annotations

import json

from openai import OpenAI

from synth.local_server import LocalServer
from synth.local_server.records import request_parameters
from tests.synth.pools import EN_ITEMS


def test_each_parameter_sent_by_the_openai_client_is_logged() -> None:
    item = EN_ITEMS[0]
    with LocalServer(EN_ITEMS, {"good": 1.0}) as server:
        client = OpenAI(base_url=server.base_url, api_key="not-needed")
        client.chat.completions.create(
            model="good",
            messages=[
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": item.question},
            ],
            temperature=0.7,
            max_tokens=33,
            seed=5,
            stop=["###", "END"],
            extra_body={"reasoning_effort": "low", "top_k": 4},
        )
        client.chat.completions.create(
            model="good", messages=[{"role": "user", "content": item.question}]
        )
        with_all, plain = server.records
    assert (with_all.temperature, with_all.max_tokens, with_all.seed) == (0.7, 33, 5)
    assert with_all.stop == ["###", "END"] and with_all.system == "Be brief."
    assert with_all.extra == {"reasoning_effort": "low", "top_k": 4}
    assert with_all.item_id == item.id and with_all.outcome == "ok"
    assert (plain.temperature, plain.max_tokens, plain.stop, plain.seed) == (None,) * 4
    assert plain.extra is None and plain.system is None


def test_the_log_file_holds_the_parameters_too(tmp_path) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "requests.jsonl"
    with LocalServer(EN_ITEMS, {"good": 1.0}, log_path=log) as server:
        client = OpenAI(base_url=server.base_url, api_key="not-needed")
        client.chat.completions.create(
            model="good",
            messages=[{"role": "user", "content": EN_ITEMS[1].question}],
            temperature=0.2,
            stop="STOP",
        )
    (line,) = [json.loads(text) for text in log.read_text().splitlines()]
    assert line["temperature"] == 0.2 and line["stop"] == ["STOP"]


def test_parameters_of_odd_bodies() -> None:
    body = {"model": "m", "messages": "x", "temperature": True, "max_tokens": 2.5, "n": 2}
    parameters = request_parameters(body)
    assert parameters["temperature"] is None and parameters["max_tokens"] is None
    assert parameters["extra"] == {"n": 2} and parameters["system"] is None
