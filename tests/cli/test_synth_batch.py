"""``cat synth --batch-out`` / ``--batch-in`` through the command line, answered by the
``vllm run-batch`` stand-in run as a program (as the README runs it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from openai.resources.batches import Batches
from typer.testing import CliRunner

from cat.cli.app import app
from itempool.formats.responses import read_responses
from synth.local_server import LocalServer
from synth.local_server.batches import BatchFaults
from tests.synth.pools import EN_ITEMS

runner = CliRunner()


def _args(pool: Path, tmp: Path, url: str | None) -> list[str]:
    """``cat synth`` of good and bad on the pool's first 6 items, at ``url`` (None: no
    --base-url)."""
    args = ["synth", "--pool", str(pool), "--agents", "good,bad", "--limit", "6"]
    args += [*(["--base-url", url] if url is not None else []), "--store", str(tmp / "run.db")]
    return [*args, "--out", str(tmp / "responses.jsonl")]


def _synth(pool: Path, tmp: Path, *extra: str) -> str:
    result = runner.invoke(app, [*_args(pool, tmp, "http://127.0.0.1:9/v1"), *extra])
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def _run_batch(pool: Path, request: Path, result: Path) -> None:
    command = [sys.executable, "-m", "synth.local_server.run_batch", "-i", str(request)]
    command += ["-o", str(result), "--pool", str(pool), "--models", "good=0.9,bad=0.3"]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "answered, 0 errors, 0 left out" in done.stdout


def test_three_rounds_then_the_responses(en_pool: Path, tmp_path: Path) -> None:
    requests, results = tmp_path / "requests", tmp_path / "results"
    requests.mkdir()
    results.mkdir()
    said = _synth(en_pool, tmp_path, "--batch-out", str(requests))
    assert "round 1: 12 calls remain (generation 12)" in said
    assert not (tmp_path / "responses.jsonl").exists()
    for stage, n in (("debate", 2), ("reflection", 3)):
        for request in sorted(requests.glob(f"round0{n - 1}-*.jsonl")):
            _run_batch(en_pool, request, results / request.name)
        said = _synth(en_pool, tmp_path, "--batch-in", str(results), "--batch-out", str(requests))
        assert f"round {n}: 12 calls remain ({stage} 12)" in said
    for request in sorted(requests.glob("round03-*.jsonl")):
        _run_batch(en_pool, request, results / request.name)
    said = _synth(en_pool, tmp_path, "--batch-in", str(results))
    assert "every stage is answered: responses written" in said
    assert "4 participants written to" in said
    matrix = read_responses(tmp_path / "responses.jsonl")
    assert matrix.n_subjects == 4 and matrix.n_items == 6


def test_batch_out_makes_its_folder(en_pool: Path, tmp_path: Path) -> None:
    requests = tmp_path / "batches" / "run1"  # neither folder there yet
    said = _synth(en_pool, tmp_path, "--batch-out", str(requests))
    assert "round 1: 12 calls remain (generation 12)" in said
    names = sorted(p.name for p in requests.iterdir())
    assert names == ["round01-bad-001.jsonl", "round01-good-001.jsonl"]


def test_a_file_in_the_batch_out_folders_place_is_refused(en_pool: Path, tmp_path: Path) -> None:
    args = ["synth", "--pool", str(en_pool), "--agents", "good", "--base-url", "http://x/v1"]
    args += ["--store", str(tmp_path / "r.db"), "--out", str(tmp_path / "r.jsonl")]
    (tmp_path / "batches").write_text("")
    result = runner.invoke(app, [*args, "--batch-out", str(tmp_path / "batches")])
    assert result.exit_code != 0
    assert result.output.strip().splitlines() == [
        f"error: --batch-out {tmp_path / 'batches'}: not a folder"
    ]
    assert not (tmp_path / "r.db").exists()


def test_batch_files_need_no_base_url(en_pool: Path, tmp_path: Path) -> None:
    """The README's offline run: no endpoint named, and neither the requests' nor the
    results' folder made beforehand (the vllm run-batch stand-in makes the latter)."""
    requests, results = tmp_path / "batches", tmp_path / "results"
    offline = _args(en_pool, tmp_path, None)
    result = runner.invoke(app, [*offline, "--batch-out", str(requests)])
    assert result.exit_code == 0, result.output
    for n in (1, 2, 3):
        for request in sorted(requests.glob(f"round0{n}-*.jsonl")):
            _run_batch(en_pool, request, results / request.name)
        more = ["--batch-out", str(requests)] if n < 3 else []
        result = runner.invoke(app, [*offline, "--batch-in", str(results), *more])
        assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "every stage is answered: responses written" in said
    assert "4 participants written to" in said


def test_calls_made_online_still_need_a_url(en_pool: Path, tmp_path: Path) -> None:
    for how in ([], ["--batch", "--poll-seconds", "0"], ["--batch-cancel"]):
        result = runner.invoke(app, [*_args(en_pool, tmp_path, None), *how])
        assert result.exit_code != 0
        assert result.output.strip().splitlines() == [
            "error: agent good has no URL: give --base-url or good@URL"
        ]
    assert not (tmp_path / "run.db").exists()


def test_batch_through_the_api_with_prices(en_pool: Path, tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(
        '{"good": {"input": 2.0, "output": 8.0}, "bad": {"input": 1.0, "output": 4.0}}'
    )
    with LocalServer(EN_ITEMS, {"good": 0.9, "bad": 0.3}) as server:
        args = [*_args(en_pool, tmp_path, server.base_url), "--prices", str(prices)]
        result = runner.invoke(app, [*args, "--batch", "--poll-seconds", "0"])
        assert result.exit_code == 0, result.output
        again = runner.invoke(app, [*args, "--batch", "--poll-seconds", "0"])
        assert len(server.batches.submitted) == 36
    said = " ".join(result.output.split())
    assert "round 1: 12 requests (generation 12) in 2 batches: 2 validating" in said
    assert "round 1 ended (2 completed): 12 results imported, 0 errors" in said
    assert "round 3: 12 requests (reflection 12) in 2 batches" in said
    assert "Batch API: 3 rounds, 6 batches created (36 requests); 36 results imported" in said
    assert "the 36 calls answered by batches cost" in said and "(50% saved)" in said
    assert "4 participants written to" in said
    assert "Batch API: nothing left to ask" in again.output


def test_batch_and_batch_files_do_not_mix(en_pool: Path, tmp_path: Path) -> None:
    args = ["synth", "--pool", str(en_pool), "--agents", "good", "--base-url", "http://x/v1"]
    args += ["--store", str(tmp_path / "r.db"), "--out", str(tmp_path / "r.jsonl")]
    result = runner.invoke(app, [*args, "--batch", "--batch-out", str(tmp_path)])
    assert result.exit_code != 0
    assert "--batch runs through the Batch API; --batch-out/--batch-in through files" in (
        result.output
    )
    assert not (tmp_path / "r.db").exists()


def test_max_batch_lines_splits_the_files(en_pool: Path, tmp_path: Path) -> None:
    requests = tmp_path / "requests"
    requests.mkdir()
    said = _synth(en_pool, tmp_path, "--batch-out", str(requests), "--max-batch-lines", "4")
    assert "round 1: 12 calls remain (generation 12)" in said
    sizes = sorted(len(p.read_text().splitlines()) for p in requests.iterdir())
    assert sizes == [2, 2, 4, 4]  # 6 a model: 4 + 2


def test_batches_over_the_providers_limit_are_named(en_pool: Path, tmp_path: Path) -> None:
    faults = BatchFaults(max_enqueued=4)
    with LocalServer(EN_ITEMS, {"good": 0.9, "bad": 0.3}, batch_faults=faults) as server:
        args = [*_args(en_pool, tmp_path, server.base_url), "--max-batch-lines", "3"]
        result = runner.invoke(app, [*args, "--batch", "--poll-seconds", "0"])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert (
        "round 1 ended (2 completed, 2 failed): 6 results imported, 0 errors; 2 batches "
        "over the provider's limit of requests in flight, asked again"
    ) in said
    assert "4 participants written to" in said


def test_batch_cancel_cancels_the_batches_in_flight(
    en_pool: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def stop(self: Batches, batch_id: str, **kwargs: object) -> None:
        raise KeyboardInterrupt  # Ctrl-C at the first poll, the batches created

    with LocalServer(EN_ITEMS, {"good": 0.9, "bad": 0.3}) as server:
        args = _args(en_pool, tmp_path, server.base_url)
        with monkeypatch.context() as patch:
            patch.setattr(Batches, "retrieve", stop)
            stopped = runner.invoke(app, [*args, "--batch", "--poll-seconds", "0"])
        assert stopped.exit_code != 0
        result = runner.invoke(app, [*args, "--batch-cancel"])
        assert result.exit_code == 0, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 3 and all(line.endswith(": cancelling") for line in lines[:2])
        assert lines[2].startswith("2 batches asked to cancel; run the same command with")
        done = runner.invoke(app, [*args, "--batch", "--poll-seconds", "0"])
        assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())
    assert "round 1 ended (2 cancelled): 0 results imported, 12 errors" in said
    assert "4 participants written to" in said
