"""``cat synth`` with generation settings, against the local server: each setting reaches
the endpoint (its request log), is recorded in the store, and a changed one never reuses
a stored answer."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from cat.cli.app import app
from synth.local_server import LocalServer
from synth.store import RunStore
from tests.synth.pools import EN_ITEMS

runner = CliRunner()
TEMPLATE = (
    "Item {{ id }} ({{ scenario }}): {{ question }}\n"
    "{% for l, t in choices %}{{ l }}. {{ t }}\n{% endfor %}{{ instructions }}"
)


def _synth(pool: Path, url: str, store: Path, *extra: str) -> tuple[int, str]:
    args = [
        "synth",
        "--pool",
        str(pool),
        "--agents",
        "good,bad",
        "--base-url",
        url,
        "--store",
        str(store),
        "--out",
        str(store.with_suffix(".jsonl")),
        "--limit",
        "6",
        *extra,
    ]
    result = runner.invoke(app, args)
    return result.exit_code, result.output


def test_every_setting_reaches_the_endpoint_is_recorded_and_asks_anew(
    en_pool: Path, tmp_path: Path
) -> None:
    template = tmp_path / "prompt.j2"
    template.write_text(TEMPLATE)
    settings = [
        "--temperature",
        "0.4",
        "--max-tokens",
        "77",
        "--system-prompt",
        "Answer like a pharmacist.",
        "--prompt-template",
        str(template),
        "--few-shot",
        "2",
        "--stop",
        "###",
        "--stop",
        "END",
        "--extra-body",
        '{"reasoning_effort": "low", "top_k": 3}',
    ]
    with LocalServer(EN_ITEMS, {"good": 0.9, "bad": 0.3}) as server:
        code, output = _synth(en_pool, server.base_url, tmp_path / "a.db", *settings)
        assert code == 0, output
        records = [r for r in server.records if r.outcome == "ok"]
        # 6 items x (2 singles + 2 pairs of 3 stages), the pairs' generation shared
        assert len(records) == 6 * (2 + 2 * 2)
        for record in records:
            assert record.temperature == 0.4 and record.max_tokens == 77
            assert record.stop == ["###", "END"] and record.seed == 0
            assert record.extra == {"reasoning_effort": "low", "top_k": 3}
            assert record.system == "Answer like a pharmacist."
        with RunStore(tmp_path / "a.db") as store:
            run = store.get_meta("run")
            calls = list(store.iter_calls())
        assert run["generation"] == {
            "temperature": 0.4,
            "max_tokens": 77,
            "system_prompt": "Answer like a pharmacist.",
            "prompt_template": str(template),
            "prompt_template_sha256": run["generation"]["prompt_template_sha256"],
            "few_shot": 2,
            "stop": ["###", "END"],
            "extra_body": {"reasoning_effort": "low", "top_k": 3},
            "examples": None,
            "examples_sha256": None,
            "few_shot_select": "seeded",
            "extractor": "builtin",
            "mode": "generate",
            "choices": "texts",
            "endpoint": "chat",
        }
        first = [c for c in calls if c.stage == "generation"]
        debates = [c for c in calls if c.stage == "debate"]
        # the first answer: system, two solved examples, the templated question
        for call in first:
            roles = [m["role"] for m in call.request["messages"]]
            assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
            asked = call.request["messages"][-1]["content"]
            assert asked.startswith(f"Item {call.item_id} (")
            assert call.request["messages"][2]["content"].startswith("Answer: ")
        # a pair's review keeps its own prompt, under the run's system message
        assert debates and all(len(c.request["messages"]) == 2 for c in debates)
        assert all(
            c.request["messages"][0]["content"] == "Answer like a pharmacist." for c in debates
        )

        # The same store does not take other settings: its answers would be reused.
        code, output = _synth(en_pool, server.base_url, tmp_path / "a.db", "--temperature", "0.5")
        assert code == 2 and "other generation settings" in output
        assert "temperature 0.4 -> 0.5" in output

        # Each setting changed alone reaches the endpoint, and every call it makes is
        # another call than those stored before: none of them could be reused.
        stored = {c.key for c in calls}
        for k, (changed, reached) in enumerate(
            (
                (["--temperature", "0.5"], lambda r: r.temperature == 0.5),
                (["--max-tokens", "78"], lambda r: r.max_tokens == 78),
                (["--system-prompt", "Be brief."], lambda r: r.system == "Be brief."),
                (["--few-shot", "1"], lambda r: True),
                (["--stop", "###"], lambda r: r.stop == ["###"]),
                (["--extra-body", '{"top_k": 3}'], lambda r: r.extra == {"top_k": 3}),
            )
        ):
            option = changed[0]
            at = settings.index(option)
            others = settings[:at] + settings[at + 2 :]
            if option == "--stop":
                others = [s for s in others if s not in ("--stop", "END")]
            before = len(server.records)
            store = tmp_path / f"b{k}.db"
            # The singles only: the pairs' calls follow the same settings (above).
            args = [*others, *changed, "--participants", "singles"]
            code, output = _synth(en_pool, server.base_url, store, *args)
            assert code == 0, (option, output)
            new = [r for r in server.records[before:] if r.outcome == "ok"]
            assert len(new) == 6 * 2 and all(map(reached, new)), option
            with RunStore(store) as opened:
                assert not {c.key for c in opened.iter_calls()} & stored, option
        with RunStore(tmp_path / "b3.db") as opened:
            shots = [c for c in opened.iter_calls() if c.stage == "generation"]
        assert shots and all(len(c.request["messages"]) == 4 for c in shots)  # one example


def test_a_misspelt_template_field_stops_the_run_before_any_call(
    en_pool: Path, tmp_path: Path
) -> None:
    template = tmp_path / "bad.j2"
    template.write_text("{{ question }}\n{{ choice }}")
    with LocalServer(EN_ITEMS, {"good": 0.9, "bad": 0.3}) as server:
        code, output = _synth(
            en_pool, server.base_url, tmp_path / "c.db", "--prompt-template", str(template)
        )
        assert not server.records
    assert code == 2
    assert "'choice' is undefined" in output and str(template) in output
