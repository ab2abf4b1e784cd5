"""``cat compare`` through the command line: simulated models, two RESULT.json files, two
live models behind the local test server, and its one-line errors."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cat.cli.app import app
from cat.pools.loading import load_pool
from irt.models import ItemParams
from synth.local_server import LocalServer
from tests.cat.scored_pools import make_scored_pool

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
DEMO_EN = ROOT / "item_pools" / "demo-en"


def _run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["compare", *args])
    return result.exit_code, result.output


def _one_line_error(code: int, output: str) -> str:
    assert code == 2, output
    lines = output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), output
    return lines[0]


def test_two_simulated_models(tmp_path: Path) -> None:
    out = tmp_path / "compare.json"
    code, output = _run(
        "--pool", str(DEMO_EN), "--model", "sim:1.5", "--model", "sim:-0.5", "--out", str(out)
    )
    assert code == 0, output
    assert "A better: sim:1.5" in output and "posterior only" in output
    result = json.loads(out.read_text())
    assert result["decision"] == "A better" and result["n_items"] == len(result["items"])
    assert {"difference", "detectable_difference", "a", "b", "shared", "settings"} <= set(result)
    assert result["settings"]["margin"] == 0.01 and result["settings"]["seed"] == 0


def test_two_result_files(tmp_path: Path) -> None:
    paths = []
    for theta in ("1.5", "-0.5"):
        path = tmp_path / f"sim{theta}.json"
        code, output = runner.invoke(
            app,
            ["assess", "--pool", str(DEMO_EN), "--model", f"sim:{theta}", "--length", "30",
             "--out", str(path)],
        ).exit_code, ""  # fmt: skip
        assert code == 0, output
        paths.append(str(path))
    code, output = _run("--results", *paths, "--out", str(tmp_path / "c.json"))
    assert code == 0, output
    assert "A better" in output
    result = json.loads((tmp_path / "c.json").read_text())
    assert result["source"] == "results" and result["a"]["result"] == paths[0]


def test_results_compared_outside_the_folder_they_were_made_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The runs record the pool as given, relative to where they ran.
    monkeypatch.chdir(ROOT)
    paths = [str(tmp_path / f"r{k}.json") for k in range(2)]
    for theta, path in zip(("1.0", "-1.0"), paths, strict=True):
        args = ["assess", "--pool", "item_pools/demo-en", "--model", f"sim:{theta}"]
        done = runner.invoke(app, [*args, "--length", "20", "--out", path])
        assert done.exit_code == 0, done.output
    assert json.loads(Path(paths[0]).read_text())["pool"]["path"] == "item_pools/demo-en"
    monkeypatch.chdir(tmp_path)
    code, output = _run("--results", *paths)
    assert code == 0, output
    assert "sim:1.0 (A) vs sim:-1.0 (B) on demo-en" in output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--pool", str(DEMO_EN), "--model", "sim:1"], "give --model twice"),
        (["--pool", str(DEMO_EN), "--model", "llm", "--model", "llm"], "two different models"),
        (["--results", "a.json", "a.json"], "a.json twice: compare the results of two runs"),
        (["--results", "a.json"], "--results takes 2 values"),
        (
            ["--pool", str(DEMO_EN), "--model", "sim:1", "--model", "sim:0", "--few-shot", "2"],
            "--few-shot set how a live model is asked; sim: makes no call",
        ),
        (["--model", "sim:1", "--model", "sim:0"], "give --pool"),
        (
            ["--model", "sim:1", "--model", "sim:0", "--results", "a.json", "b.json"],
            "not both",
        ),
        (["--pool", str(DEMO_EN), "--model", "sim:1", "--model", "sim:x"], "sim:THETA"),
        (
            ["--pool", str(DEMO_EN), "--model", "sim:1", "--model", "sim:0", "--out", "no/x.json"],
            "--out no/x.json",
        ),
        (
            ["--pool", str(DEMO_EN), "--model", "sim:1", "--model", "sim:0", "--min-length", "300"],
            "minimum length",
        ),
        (["--results", "missing-a.json", "missing-b.json"], "cannot read"),
    ],
)
def test_errors_are_one_line(args: list[str], message: str) -> None:
    assert message in _one_line_error(*_run(*args))


def test_a_pool_of_scored_items_is_refused(tmp_path: Path) -> None:
    pool = make_scored_pool(tmp_path / "scored", n_items=20, n_refs=10)
    line = _one_line_error(*_run("--pool", str(pool), "--model", "sim:1", "--model", "sim:0"))
    assert "pools of 0/1 items" in line


def test_two_live_models_answer_the_same_items_and_a_rerun_pays_nothing(tmp_path: Path) -> None:
    pool = load_pool(DEMO_EN)
    params = pool.params
    assert isinstance(params, ItemParams)
    irt = {
        i: (float(a), float(b), float(c))
        for i, a, b, c in zip(params.item_ids, params.a, params.b, params.c, strict=True)
    }
    store, out = tmp_path / "calls.db", tmp_path / "compare.json"
    with LocalServer(pool.items, {"strong": 1.5, "weak": -0.5}, irt=irt) as server:
        args = [
            "--pool", str(DEMO_EN), "--model", "strong",
            # B at its own endpoint (the same server here): MODEL@URL.
            "--model", f"weak@{server.base_url}",
            "--base-url", server.base_url, "--store", str(store), "--out", str(out),
            "--max-length", "60", "--batch-size", "3",
        ]  # fmt: skip
        code, output = _run(*args)
        assert code == 0, output
        first = json.loads(out.read_text())
        asked = Counter((r.model, r.item_id) for r in server.records if r.outcome == "ok")
        items = {item["id"] for item in first["items"]}
        assert {i for (_, i) in asked} == items  # the same items for both
        assert all(asked[("strong", i)] == asked[("weak", i)] == 1 for i in items)
        assert first["decision"] == "A better" and first["better"] == "strong"
        assert first["a"]["usage"]["calls"] == len(items) == first["b"]["usage"]["calls"]
        assert first["settings"]["base_url_b"] == server.base_url
        truth = first["truth"]
        assert truth is None  # live models: their true accuracy is unknown
        code, output = _run(*args)
        assert code == 0, output
        again = json.loads(out.read_text())
        assert again["a"]["usage"]["calls"] == 0 == again["b"]["usage"]["calls"]
        assert again["a"]["usage"]["calls_from_store"] == len(items)
        assert [i["id"] for i in again["items"]] == [i["id"] for i in first["items"]]
