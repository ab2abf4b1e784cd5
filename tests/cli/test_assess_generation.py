"""``cat assess`` with generation settings against the local server: each setting reaches
the endpoint (its request log) and RESULT.json, a changed one never reuses a stored
reply, ``--resume`` refuses changed settings, and few-shot examples are never asked."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cat.cli.app import app
from irt.models import ItemParams
from synth.local_server import FaultPlan, LocalServer, RequestRecord
from synth.store import RunStore
from tests.cli.live_pool import live_items, live_pool, true_irt

runner = CliRunner()
TEMPLATE = (
    "[{{ scenario }}] {{ question }}\n"
    "{% for letter, text in choices %}({{ letter }}) {{ text }}\n{% endfor %}{{ instructions }}"
)


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ItemParams, Path]:
    folder = tmp_path_factory.mktemp("generation")
    pool, params = live_pool(folder / "pool")
    template = folder / "prompt.j2"
    template.write_text(TEMPLATE)
    return pool, params, template


def _settings(template: Path) -> list[str]:
    return [
        "--temperature",
        "0.3",
        "--max-tokens",
        "50",
        "--system-prompt",
        "You are a careful pharmacist.",
        "--prompt-template",
        str(template),
        "--few-shot",
        "2",
        "--stop",
        "###",
        "--extra-body",
        '{"reasoning_effort": "low"}',
    ]


def _assess(
    pool: Path, url: str, store: Path, out: Path, *extra: str
) -> tuple[int, str, dict[str, Any] | None]:
    args = ["assess", "--pool", str(pool), "--model", "llm", "--base-url", url]
    args += ["--store", str(store), "--out", str(out), "--length", "6", *extra]
    result = runner.invoke(app, args)
    written = json.loads(out.read_text()) if result.exit_code == 0 else None
    return result.exit_code, result.output, written


def test_every_setting_reaches_the_endpoint_and_is_recorded(
    calibrated: tuple[Path, ItemParams, Path], tmp_path: Path
) -> None:
    pool, params, template = calibrated
    store, out = tmp_path / "calls.db", tmp_path / "r.json"
    with LocalServer(live_items(), {"llm": 0.5}, irt=true_irt(params)) as server:
        extra = [*_settings(template), "--length", "12", "--batch-size", "4"]
        code, output, result = _assess(
            pool, server.base_url, store, out, *extra, "--concurrency", "2"
        )
        records = [r for r in server.records if r.outcome == "ok"]
    assert code == 0, output
    assert result is not None and len(records) == 12
    for record in records:
        assert (record.temperature, record.max_tokens, record.seed) == (0.3, 50, 0)
        assert record.stop == ["###"] and record.extra == {"reasoning_effort": "low"}
        assert record.system == "You are a careful pharmacist."
    settings = result["settings"]
    generation = settings["generation"]
    assert generation["prompt_template"] == str(template)
    assert len(generation.pop("prompt_template_sha256")) == 64
    assert generation == {
        "temperature": 0.3,
        "max_tokens": 50,
        "system_prompt": "You are a careful pharmacist.",
        "prompt_template": str(template),
        "few_shot": 2,
        "stop": ["###"],
        "extra_body": {"reasoning_effort": "low"},
        "examples": None,
        "examples_sha256": None,
        "few_shot_select": "seeded",
        "extractor": "builtin",
        "mode": "generate",
        "choices": "texts",
        "endpoint": "chat",
    }
    # The pool records no protocol: the built-in one, which every option here leaves.
    assert settings["protocol"] == {
        "name": "builtin",
        "source": None,
        "style": "direct",
        "followed": False,
        "differs": [
            "temperature",
            "max_tokens",
            "system_prompt",
            "prompt_template",
            "few_shot",
            "stop",
            "extra_body",
        ],
        "form": "default",
    }
    assert settings["concurrency"] == 2
    # two examples per scenario, never asked
    excluded = set(settings["excluded_items"])
    assert len(excluded) == 6
    asked = {item["id"] for item in result["items"]}
    assert len(asked) == 12 and not asked & excluded
    assert {r.item_id for r in records} == asked  # the server saw the question, not an example
    with RunStore(store) as opened:
        calls = list(opened.iter_calls())
    assert {c.stage for c in calls} == {"assess"} and {c.item_id for c in calls} == asked
    for call in calls:
        messages = call.request["messages"]
        assert [m["role"] for m in messages] == ["system", *["user", "assistant"] * 2, "user"]
        assert messages[1]["content"].startswith("[") and messages[-1]["content"].startswith("[")
        assert {messages[2]["content"], messages[4]["content"]} <= {f"Answer: {x}" for x in "ABCD"}
        assert call.grade is not None and call.grade["target"] in "ABCD"
    assert "asked with" in output and "2-shot" in output


def test_a_changed_setting_never_reuses_a_stored_reply(
    calibrated: tuple[Path, ItemParams, Path], tmp_path: Path
) -> None:
    pool, params, template = calibrated
    store, out = tmp_path / "calls.db", tmp_path / "r.json"
    changes: list[tuple[list[str], Callable[[RequestRecord], bool]]] = [
        (["--temperature", "0.5"], lambda r: r.temperature == 0.5),
        (["--max-tokens", "40"], lambda r: r.max_tokens == 40),
        (["--system-prompt", "Be brief."], lambda r: r.system == "Be brief."),
        (["--prompt-template", str(template)], lambda r: True),
        (["--few-shot", "1"], lambda r: True),
        (["--stop", "END"], lambda r: r.stop == ["END"]),
        (["--extra-body", '{"top_k": 5}'], lambda r: r.extra == {"top_k": 5}),
    ]
    with LocalServer(live_items(), {"llm": 0.5}, irt=true_irt(params)) as server:
        code, output, first = _assess(pool, server.base_url, store, out)
        assert code == 0 and first is not None, output
        assert first["usage"]["calls"] == 6
        code, output, again = _assess(pool, server.base_url, store, out)
        assert again is not None and again["usage"]["calls"] == 0, output
        assert again["usage"]["calls_from_store"] == 6
        for changed, reached in changes:
            before = len(server.records)
            code, output, result = _assess(pool, server.base_url, store, out, *changed)
            assert code == 0 and result is not None, (changed, output)
            # Every answer is a new call, none a stored reply; each reached the endpoint.
            assert result["usage"]["calls"] == 6, changed
            assert result["usage"]["calls_from_store"] == 0, changed
            new = [r for r in server.records[before:] if r.outcome == "ok"]
            assert len(new) == 6 and all(map(reached, new)), changed


def test_resume_refuses_changed_generation_settings(
    calibrated: tuple[Path, ItemParams, Path], tmp_path: Path
) -> None:
    pool, params, template = calibrated
    store, out = tmp_path / "calls.db", tmp_path / "r.json"
    irt = true_irt(params)
    base = [*_settings(template), "--length", "20", "--max-attempts", "1"]
    with LocalServer(live_items(), {"llm": 0.5}, irt=irt, faults=FaultPlan(rate_500=0.2)) as flaky:
        code, output, _ = _assess(pool, flaky.base_url, store, out, *base)
    assert code == 2, output  # stopped part-way, its checkpoint saved
    with LocalServer(live_items(), {"llm": 0.5}, irt=irt) as healthy:
        changed = [*base, "--temperature", "0.6", "--resume"]
        code, output, _ = _assess(pool, healthy.base_url, store, out, *changed)
        assert code == 2
        assert "--resume needs the same generation settings" in output
        assert "temperature 0.3 -> 0.6" in output
        assert not healthy.records
        # A changed length or few-shot count is named too.
        code, output, _ = _assess(
            pool, healthy.base_url, store, out, *base, "--length", "25", "--resume"
        )
        assert code == 2 and "--length 20 -> 25" in output, output
        fewer = [*base, "--few-shot", "1"]  # the later --few-shot wins
        code, output, _ = _assess(pool, healthy.base_url, store, out, *fewer, "--resume")
        assert code == 2 and "--few-shot (the items shown as examples)" in output, output
        assert not healthy.records
        code, output, result = _assess(pool, healthy.base_url, store, out, *base, "--resume")
    assert code == 0 and result is not None, output
    assert result["n_items"] == 20
    assert not {i["id"] for i in result["items"]} & set(result["settings"]["excluded_items"])


def test_few_shot_that_leaves_fewer_items_than_the_length_stops_before_any_call(
    calibrated: tuple[Path, ItemParams, Path], tmp_path: Path
) -> None:
    pool, params, _ = calibrated
    with LocalServer(live_items(), {"llm": 0.5}, irt=true_irt(params)) as server:
        code, output, _ = _assess(
            pool, server.base_url, tmp_path / "c.db", tmp_path / "r.json", "--few-shot", "40"
        )
        assert not server.records
    assert code == 2 and not (tmp_path / "r.json").exists()
    assert "leaves 0 to ask, fewer than --length 6; lower --few-shot or --length" in output


def test_a_misspelt_template_field_stops_before_any_call(
    calibrated: tuple[Path, ItemParams, Path], tmp_path: Path
) -> None:
    pool, params, _ = calibrated
    template = tmp_path / "typo.j2"
    template.write_text("{{ question }}\n{{ instructons }}")
    with LocalServer(live_items(), {"llm": 0.5}, irt=true_irt(params)) as server:
        args = ["--prompt-template", str(template)]
        code, output, _ = _assess(
            pool, server.base_url, tmp_path / "c.db", tmp_path / "r.json", *args
        )
        assert not server.records
    assert code == 2 and "'instructons' is undefined" in output and "instructions" in output


def test_the_api_takes_the_settings_and_gives_each_reply(
    calibrated: tuple[Path, ItemParams, Path], tmp_path: Path
) -> None:
    import cat

    pool, params, _ = calibrated
    keys = {item.id: item.answer for item in live_items()}
    with LocalServer(live_items(), {"llm": 0.5}, irt=true_irt(params)) as server:
        generation = cat.GenerationSettings(temperature=0.1, few_shot=1, stop=["###"])
        examinee = cat.EndpointExaminee(
            "llm", server.base_url, store=tmp_path / "c.db", generation=generation, concurrency=2
        )
        result = cat.assess(pool, examinee, length=8, design="irt", batch_size=4)
        assert all(r.temperature == 0.1 and r.stop == ["###"] for r in server.records)
    assert result.settings.generation == generation.record()
    # the four calls of a batch, two at a time
    assert examinee.budget is not None and examinee.budget.peak == 2
    for item in result.items:
        reply = examinee.reply_of(item.id)
        assert reply is not None
        text, answer = reply
        assert answer is not None and answer in text
        assert item.response == int(answer == keys[item.id])
    assert examinee.reply_of("never-asked") is None
    with pytest.raises(cat.CatError, match="differ"):
        cat.EndpointExaminee("llm", "http://x/v1", temperature=0.5, generation=generation)
