"""``cat pool create``: a benchmark file in each common shape becomes a calibrated pool
in one command against the local test server, and a kill -9 loses nothing: the rerun
asks no stored call again and ends with the same pool."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cat.cli.app import app
from cat.pools.creation import RESPONSES, STATE, STORE, WORK_FOLDER
from cat.pools.importer import import_questions
from itempool import load_pool, read_questions
from synth.local_server import LocalServer
from synth.local_server.simulator import random_item_params
from tests.cat.pools.benchmark_files import SHAPES, mmlu_parquet

runner = CliRunner()
ITEMS = 30
THETAS = {"strong": 1.2, "medium": 0.2, "weak": -0.8}


def _models(folder: Path) -> Path:
    path = folder / "models.txt"
    path.write_text("# the references\nstrong\nmedium\nweak  # the smallest\n")
    return path


def _server(source: Path, language: str, folder: Path) -> LocalServer:
    """The test server, knowing the benchmark's keys (its own import of the file)."""
    import_questions(source, {}, folder / "key", "key", language)
    items = list(read_questions(folder / "key").items)
    return LocalServer(items, THETAS, irt=random_item_params(items, 0))


def _args(source: Path, out: Path, language: str, url: str) -> list[str]:
    models = _models(source.parent)
    return [
        "pool",
        "create",
        str(source),
        "--out",
        str(out),
        "--language",
        language,
        "--reference-models",
        str(models),
        "--base-url",
        url,
        "--concurrency",
        "1",
        "--participants",
        "singles",  # pairs are cat synth's to test; three subjects calibrate fast
    ]


def _stage(out: Path) -> str | None:
    try:
        return str(json.loads((out / WORK_FOLDER / STATE).read_text())["stage"])
    except (OSError, ValueError, KeyError):
        return None


def _stored(out: Path) -> int:
    try:
        with sqlite3.connect(out / WORK_FOLDER / STORE, timeout=1) as db:
            (n,) = db.execute("SELECT COUNT(*) FROM calls").fetchone()
    except sqlite3.OperationalError:
        return 0
    return int(n)


def _kill_when(proc: subprocess.Popen[bytes], ready: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None and not ready():
        time.sleep(0.01)
    assert proc.poll() is None, "the run ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


@pytest.mark.slow
@pytest.mark.parametrize(("shape", "write", "language"), SHAPES, ids=[s[0] for s in SHAPES])
def test_each_shape_to_a_calibrated_pool_through_a_kill_9(
    tmp_path: Path, shape: str, write: Callable[[Path, int], Path], language: str
) -> None:
    source = write(tmp_path, ITEMS)
    out = tmp_path / "pools" / shape
    script = Path(sys.executable).parent / "cat"
    env = {**os.environ, "OPENAI_API_KEY": ""}
    with _server(source, language, tmp_path) as server:
        args = [str(script), *_args(source, out, language, server.base_url)]
        proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _kill_when(proc, lambda: _stored(out) >= 30)
        assert _stage(out) == "imported"
        kept = _stored(out)
        again = subprocess.run(args, env=env, capture_output=True, text=True, timeout=180)
        assert again.returncode == 0, again.stderr
        counts = Counter(server.completed_keys())
    assert "going on with" in again.stdout and "Synthesis" in again.stdout
    assert _stage(out) == "calibrated"
    # One call in flight at the kill may be asked twice; a stored one never.
    assert sum(n - 1 for n in counts.values()) <= 1 and kept >= 30
    assert _stored(out) == len(counts)
    pool = load_pool(out)
    assert len(pool.items) == ITEMS and pool.manifest.language == language
    assert pool.params is not None and len(pool.references) == 3
    assert pool.manifest.protocol is not None and pool.manifest.calibration is not None
    answers = (out / WORK_FOLDER / RESPONSES).read_text(encoding="utf-8").splitlines()
    assert len(answers) == 3


@pytest.mark.slow
def test_a_kill_9_during_the_calibration_asks_nothing_again(tmp_path: Path) -> None:
    source = mmlu_parquet(tmp_path, ITEMS)
    out = tmp_path / "pool"
    script = Path(sys.executable).parent / "cat"
    env = {**os.environ, "OPENAI_API_KEY": ""}
    with _server(source, "en", tmp_path) as server:
        args = [str(script), *_args(source, out, "en", server.base_url)]
        proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # The matrix is written when every call is answered; the calibration follows.
        _kill_when(proc, lambda: (out / WORK_FOLDER / RESPONSES).exists())
        asked = len(server.completed_keys())
        assert _stage(out) == "imported"
        again = subprocess.run(args, env=env, capture_output=True, text=True, timeout=180)
        assert again.returncode == 0, again.stderr
        assert len(server.completed_keys()) == asked
    assert "no new calls" in again.stdout and _stage(out) == "calibrated"
    assert load_pool(out).params is not None


def test_the_output_names_each_step_and_the_next_command(tmp_path: Path) -> None:
    source = mmlu_parquet(tmp_path, 12)
    out = tmp_path / "pool"
    with _server(source, "en", tmp_path) as server:
        args = _args(source, out, "en", server.base_url)
        result = runner.invoke(app, args)
        rerun = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "columns found: question=question, options=choices" in text
    assert "imported 12 questions" in text and "Synthesis" in text and "3PL calibration" in text
    assert f"next: cat assess --pool {out} --model MODEL --base-url URL" in text
    assert rerun.exit_code == 0 and "made already" in rerun.output
    assert len(load_pool(out).references) == 3


@pytest.mark.parametrize(
    ("models", "extra", "message"),
    [
        ("strong\nweak\n", ["--participants", "trios"], "--participants takes singles, pairs"),
        ("strong\n", ["--participants", "singles,pairs"], "pairs need two reference models"),
        ("", [], "no model"),
        # An endpoint that does not answer is told before the folder is made.
        ("strong\nweak\n", [], "cannot reach http://127.0.0.1:9/v1"),
        ("strong@ftp://x\nweak\n", [], "base URL must start with http(s)://"),
    ],
)
def test_bad_input_fails_before_anything_is_written(
    tmp_path: Path, models: str, extra: list[str], message: str
) -> None:
    source = mmlu_parquet(tmp_path, 4)
    args = _args(source, tmp_path / "pool", "en", "http://127.0.0.1:9/v1") + extra
    (tmp_path / "models.txt").write_text(models)
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
    assert not (tmp_path / "pool").exists()


def test_a_model_without_an_endpoint_is_named(tmp_path: Path) -> None:
    source = mmlu_parquet(tmp_path, 4)
    args = _args(source, tmp_path / "pool", "en", "x")
    del args[args.index("--base-url") : args.index("--base-url") + 2]
    (tmp_path / "models.txt").write_text("strong@http://127.0.0.1:9/v1\nweak\n")
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert "give --base-url, or MODEL@URL" in result.output and "(weak has no URL)" in result.output


def test_a_dry_run_counts_the_calls_and_makes_nothing(tmp_path: Path) -> None:
    source = mmlu_parquet(tmp_path, 12)
    out = tmp_path / "pool"
    with _server(source, "en", tmp_path) as server:
        args = [*_args(source, out, "en", server.base_url), "--max-tokens", "20"]
        planned = runner.invoke(app, [*args, "--dry-run"])
        assert planned.exit_code == 0, planned.output
        assert server.completed_keys() == [] and not out.exists()
        made = runner.invoke(app, args)
        assert made.exit_code == 0, made.output
        asked = len(server.completed_keys())
        again = runner.invoke(app, [*args, "--dry-run"])
    text = " ".join(planned.output.split())
    assert "36 calls to make" in text and "a reply 20 tokens: max_tokens" in text
    assert asked == 36  # three references alone, twelve questions
    assert "0 calls to make" in " ".join(again.output.split())
