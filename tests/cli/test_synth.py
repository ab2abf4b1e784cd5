"""``cat synth`` through the command line, against the local server over real HTTP."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cat.cli.app import app
from cat.pools.fit import read_choices
from itempool import PoolItem
from itempool.formats.responses import read_responses, read_scored_responses
from synth.local_server import LocalServer
from tests.synth.pools import EN_ITEMS, OPEN_ITEMS, write_pool

runner = CliRunner()
SECRET = "sk-test-DO-NOT-LEAK-4f9c2e"


def _args(pool: Path, url: str, tmp: Path, *extra: str) -> list[str]:
    return [
        "synth",
        "--pool",
        str(pool),
        "--agents",
        "good,bad",
        "--base-url",
        url,
        "--store",
        str(tmp / "run.db"),
        "--out",
        str(tmp / "responses.jsonl"),
        *extra,
    ]


def test_synth_writes_the_matrix_and_never_the_key(
    en_pool: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with LocalServer(EN_ITEMS, {"good": 0.9, "bad": 0.3}) as server:
        result = runner.invoke(app, _args(en_pool, server.base_url, tmp_path, "--limit", "12"))
    assert result.exit_code == 0, result.output
    matrix = read_responses(tmp_path / "responses.jsonl")
    assert set(matrix.subject_ids) == {"good", "bad", "good>bad", "bad>good"}
    assert matrix.n_items == 12 and matrix.observed.all()
    choices = read_choices(tmp_path / "responses.choices.jsonl")
    assert set(choices) == set(matrix.subject_ids)
    assert all(len(picked) == 12 for picked in choices.values())
    assert "Synthesis" in result.output and "new calls" in result.output
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in result.output
    with sqlite3.connect(tmp_path / "run.db") as db:
        (meta,) = db.execute("SELECT value FROM meta WHERE name='run'").fetchone()
    assert json.loads(meta)["seed"] == 0 and json.loads(meta)["prompt_version"]


def test_a_rerun_says_every_answer_came_from_the_store(en_pool: Path, tmp_path: Path) -> None:
    lines = []
    with LocalServer(EN_ITEMS, {"good": 0.9, "bad": 0.3}) as server:
        for limit in ("2", "5", "5"):
            args = _args(en_pool, server.base_url, tmp_path, "--limit", limit)
            result = runner.invoke(app, args)
            assert result.exit_code == 0, result.output
            lines.append(next(line for line in result.output.splitlines() if "new calls" in line))
        n_calls = len(server.completed_keys())
    # 4 participants; per item 2 generations (shared with the pairs) + 2 x (debate, reflection)
    assert lines[0].startswith("12 new calls (0 failed; 0 of 8 answers from the store) in ")
    assert lines[1].startswith("18 new calls (0 failed; 8 of 20 answers from the store) in ")
    assert lines[2].startswith("no new calls: all 20 answers came from the store in ")
    assert "store total 30 calls" in lines[2] and n_calls == 30


def test_a_broken_pool_fails_in_one_line_naming_file_and_line(
    en_pool: Path, tmp_path: Path
) -> None:
    with (en_pool / "items.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"id": "en999", "question": "no options, no answer"\n')
    result = runner.invoke(app, _args(en_pool, "http://127.0.0.1:9/v1", tmp_path))
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: ") and result.output.count("\n") == 1
    assert "items.jsonl:31: not valid JSON" in result.output
    assert not (tmp_path / "run.db").exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"pool": "missing"}, "missing: no such folder"),
        ({"agents": "good@http://127.0.0.1:9/v1,bad"}, "agent bad has no URL"),
        ({"url": "unreachable"}, "cannot reach"),
        ({"extra": ["--participants", "trios"]}, "--participants takes"),
        ({"extra": ["--styles", "poetic"]}, "--styles takes"),
    ],
)
def test_bad_input_fails_before_any_call(
    en_pool: Path, tmp_path: Path, change: dict[str, object], message: str
) -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1" if change.get("url") else "http://127.0.0.1:9/v1"
    pool = tmp_path / "missing" if change.get("pool") else en_pool
    extra = change.get("extra", [])
    assert isinstance(extra, list)
    args = _args(pool, url, tmp_path, *extra)
    if "agents" in change:
        args[args.index("--agents") + 1] = str(change["agents"])
        args.remove("--base-url")
        args.remove(url)
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert not (tmp_path / "run.db").exists()


def test_remote_endpoint_without_key_fails_early(
    en_pool: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = runner.invoke(app, _args(en_pool, "https://api.example.com/v1", tmp_path))
    assert result.exit_code == 2 and "OPENAI_API_KEY" in result.output


@pytest.mark.slow
def test_kill_9_halfway_then_rerun_repeats_no_completed_call(tmp_path: Path) -> None:
    items = [
        PoolItem(
            id=f"c{k:04d}",
            question=f"Crash-test question {k}: pick the option that is right.",
            options={"A": "one", "B": "two", "C": "three", "D": "four"},
            answer="ABCD"[k % 4],
        )
        for k in range(400)
    ]
    pool = write_pool(tmp_path / "pool", items)
    script = Path(sys.executable).parent / "cat"
    env = {**os.environ, "OPENAI_API_KEY": ""}
    with LocalServer(items, {"x": 0.6, "y": 0.4}) as server:
        args = [str(script), *_args(pool, server.base_url, tmp_path, "--agents", "x,y")]
        args[args.index("--agents") + 1] = "x,y"  # the later --agents wins either way
        args += ["--participants", "singles", "--concurrency", "4"]
        proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        stored = 0
        while time.monotonic() < deadline and proc.poll() is None:
            if (tmp_path / "run.db").exists():
                try:
                    with sqlite3.connect(tmp_path / "run.db", timeout=1) as db:
                        (stored,) = db.execute("SELECT COUNT(*) FROM calls").fetchone()
                except sqlite3.OperationalError:
                    stored = 0
            if stored >= 400:
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the run ended before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        with sqlite3.connect(tmp_path / "run.db") as db:
            kept = {k for (k,) in db.execute("SELECT key FROM calls")}
        assert 0 < len(kept) < 800
        again = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stderr
        counts = Counter(server.completed_keys())
    assert len(counts) == 800
    # A completed call stored before the kill is never asked again; only the calls in
    # flight at the kill (answered by the server, not yet stored: at most 4) may be.
    repeated = {k for k, n in counts.items() if n > 1}
    assert not repeated & kept
    assert len(repeated) <= 4 and max(counts.values()) <= 2
    with sqlite3.connect(tmp_path / "run.db") as db:
        (n_calls,) = db.execute("SELECT COUNT(*) FROM calls").fetchone()
        (n_results,) = db.execute(
            "SELECT COUNT(*) FROM results WHERE status != 'failed'"
        ).fetchone()
    assert n_calls == 800 and n_results == 800
    matrix = read_responses(tmp_path / "responses.jsonl")
    assert matrix.n_subjects == 2 and matrix.observed.all()


def test_order_threshold_decides_what_passes(tmp_path: Path) -> None:
    items = [
        PoolItem(
            id=f"o{k}",
            type="order",
            question=f"Put these doses in increasing order (set {k}).",
            options={
                "A": f"{k + 3} mg",
                "B": f"{k + 1} mg",
                "C": f"{k + 4} mg",
                "D": f"{k + 2} mg",
            },
            answer="BDAC",
        )
        for k in range(8)
    ]
    pool = write_pool(tmp_path / "pool", items)
    accuracy = {}
    with LocalServer(items, {"w": 0.0}) as server:
        for threshold in ("0.8", "-1"):
            out = tmp_path / f"r{threshold}.jsonl"
            args = [
                "synth",
                "--pool",
                str(pool),
                "--agents",
                "w",
                "--base-url",
                server.base_url,
                "--store",
                str(tmp_path / f"s{threshold}.db"),
                "--out",
                str(out),
                "--participants",
                "singles",
                "--order-threshold",
                threshold,
            ]
            result = runner.invoke(app, args)
            assert result.exit_code == 0, result.output
            accuracy[threshold] = float(read_responses(out).values.mean())
    assert accuracy == {"0.8": 0.0, "-1": 1.0}  # every wrong order still passes at tau >= -1


def test_open_items_with_a_judge_print_the_agreement_and_write_the_summary(
    tmp_path: Path,
) -> None:
    pool = write_pool(tmp_path / "open-pool", OPEN_ITEMS)
    report = tmp_path / "summary.json"
    with LocalServer(OPEN_ITEMS, {"good": 1.0, "bad": 0.0}, judges={"j": "fair"}) as server:
        args = _args(pool, server.base_url, tmp_path, "--judge-model", "j", "--report", str(report))
        result = runner.invoke(app, args)
        summary = json.loads(report.read_text())
        again = runner.invoke(app, [*args, "--open-grading", "judge"])
    assert result.exit_code == 0, result.output
    assert "mean share" in result.output
    assert "judge j (prompt 1): 16 of 16 open answers judged (16 new, 0 from the store)" in (
        result.output
    )
    assert (
        "judge vs metric on 16 open answers: exact agreement 1.000, quadratic-weighted kappa "
        "1.000, Spearman rho 1.000" in result.output
    )
    assert "(scores 0..4; open items by the metric; chosen options: " in result.output
    assert summary["scores"] == "points" and summary["open_grading"] == "metric"
    assert summary["judge"]["model"] == "j" and summary["judge"]["prompt_version"] == "1"
    assert set(summary["judge"]["agreement"]) == {"n", "exact", "quadratic_kappa", "spearman"}
    assert {"accuracy", "mean_share"} <= set(summary["participants"][0])
    assert again.exit_code == 0, again.output
    assert "(16 new" not in again.output and "0 new, 16 from the store" in again.output
    assert "open items by the judge" in again.output
    assert json.loads(report.read_text())["open_grading"] == "judge"
    counts = {item.id: item.max_score + 1 for item in OPEN_ITEMS}
    matrix = read_scored_responses(tmp_path / "responses.jsonl", n_categories=counts)
    assert matrix.n_subjects == 4 and matrix.observed.all()
    good = matrix.values[matrix.subject_ids.index("good")]
    assert good.tolist() == [item.max_score for item in OPEN_ITEMS]


def test_binary_and_bad_open_grading(tmp_path: Path) -> None:
    pool = write_pool(tmp_path / "open-pool", OPEN_ITEMS)
    with LocalServer(OPEN_ITEMS, {"good": 0.7, "bad": 0.2}) as server:
        result = runner.invoke(app, _args(pool, server.base_url, tmp_path, "--binary"))
        bad = runner.invoke(app, _args(pool, server.base_url, tmp_path, "--open-grading", "x"))
        lonely = runner.invoke(
            app, _args(pool, server.base_url, tmp_path, "--open-grading", "judge")
        )
    assert result.exit_code == 0, result.output
    assert "scores 0.." not in result.output and "open items by the metric" in result.output
    assert set(read_responses(tmp_path / "responses.jsonl").values.ravel()) <= {0, 1}
    assert bad.exit_code == 2 and "--open-grading takes metric or judge; got 'x'" in bad.output
    assert lonely.exit_code == 2 and "needs a judge model (--judge-model)" in lonely.output


def test_help_names_the_graded_options() -> None:
    result = runner.invoke(app, ["synth", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for flag in ("--judge-model", "--open-grading", "--binary", "--report"):
        assert flag in result.output
