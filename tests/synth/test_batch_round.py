"""The offline batch path (``--batch-out`` / ``--batch-in``): rounds of request files
answered by a stand-in for ``vllm run-batch``, imported into the store, and the same
responses as an online run at the end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synth.batch_files import MAX_BYTES, read_results, request_line, split_lines
from synth.batch_round import BatchRound, run_batch_round
from synth.errors import SynthError
from synth.job import RunPlan, prepare_run
from synth.local_server.run_batch import main, make_api, run_batch
from synth.store import RunStore
from tests.synth.online_run import MODELS, online_responses


def _plan(pool: Path, tmp: Path, **options: object) -> RunPlan:
    return prepare_run(
        pool,
        "good,bad",
        base_url="http://127.0.0.1:9/v1",  # never called
        store=tmp / "batch.db",
        out=tmp / "batch.jsonl",
        limit=8,
        **options,  # type: ignore[arg-type]
    )


def _answer(pool: Path, files: list[Path], results: Path, **faults: float) -> None:
    """The stand-in engine answers every request file into ``results``."""
    api = make_api(pool, MODELS, 0, {})
    for path in files:
        run_batch(api, path, results / path.name, **faults)  # type: ignore[arg-type]


def _rounds(pool: Path, tmp: Path, **faults: float) -> list[BatchRound]:
    """Rounds until the run is answered (at most 20)."""
    out, results = tmp / "requests", tmp / "results"
    out.mkdir(exist_ok=True)
    results.mkdir(exist_ok=True)
    done = [run_batch_round(_plan(pool, tmp), batch_in=None, batch_out=out)]
    while done[-1].report is None and len(done) < 20:
        _answer(pool, done[-1].files, results, **faults)
        done.append(run_batch_round(_plan(pool, tmp), batch_in=results, batch_out=out))
    return done


def test_the_rounds_give_the_online_runs_responses(en_pool: Path, tmp_path: Path) -> None:
    rounds = _rounds(en_pool, tmp_path)
    # generation (the pairs share the singles'), debate, reflection, then the answers.
    assert [r.remaining for r in rounds[:3]] == [
        {"generation": 16, "debate": 0, "reflection": 0, "judge": 0},
        {"generation": 0, "debate": 16, "reflection": 0, "judge": 0},
        {"generation": 0, "debate": 0, "reflection": 16, "judge": 0},
    ]
    assert [r.imported for r in rounds] == [0, 16, 16, 16]
    last = rounds[-1].report
    assert last is not None and last.n_written == 4 and last.failed_calls == 0
    online = online_responses(en_pool, tmp_path / "online").parent
    assert (tmp_path / "batch.jsonl").read_text() == (online / "responses.jsonl").read_text()
    assert (tmp_path / "batch.choices.jsonl").read_text() == (
        online / "responses.choices.jsonl"
    ).read_text()


def test_every_custom_id_is_its_calls_key_and_none_is_asked_twice(
    en_pool: Path, tmp_path: Path
) -> None:
    _rounds(en_pool, tmp_path)
    ids = [
        json.loads(line)["custom_id"]
        for path in sorted((tmp_path / "requests").iterdir())
        for line in path.read_text().splitlines()
    ]
    assert len(ids) == len(set(ids)) == 48
    with RunStore(tmp_path / "batch.db") as store:
        assert all(store.get_call(key) is not None for key in ids)


def test_left_out_lines_are_asked_again(en_pool: Path, tmp_path: Path) -> None:
    rounds = _rounds(en_pool, tmp_path, drop_rate=0.3)
    last = rounds[-1].report
    assert last is not None and last.failed_calls == 0 and last.n_written == 4
    assert len(rounds) > 4  # some calls took a second round


def test_errors_are_retried_then_recorded_as_failed(en_pool: Path, tmp_path: Path) -> None:
    rounds = _rounds(en_pool, tmp_path, error_rate=1.0)
    # Three rounds of errors, then the walk records the calls as failed.
    assert [r.errors for r in rounds[:4]] == [0, 16, 16, 16]
    last = rounds[-1].report
    # 16 generation calls spent; each fails its single's job and its pair's (shared).
    assert last is not None and last.failed_calls == 32
    assert all(row.failed == 8 and row.answered == 0 for row in last.participants)


def test_calls_remaining_without_batch_out_are_named(en_pool: Path, tmp_path: Path) -> None:
    out = tmp_path / "requests"
    out.mkdir()
    first = run_batch_round(_plan(en_pool, tmp_path), batch_in=None, batch_out=out)
    results = tmp_path / "results"
    results.mkdir()
    _answer(en_pool, first.files, results)
    with pytest.raises(SynthError, match=r"16 calls remain \(debate 16\); give --batch-out"):
        run_batch_round(_plan(en_pool, tmp_path), batch_in=results, batch_out=None)
    # The import was kept: the next round asks for the debate only.
    again = run_batch_round(_plan(en_pool, tmp_path), batch_in=None, batch_out=out)
    assert again.remaining["generation"] == 0 and again.remaining["debate"] == 16


def test_a_bad_result_line_names_its_file_and_line(en_pool: Path, tmp_path: Path) -> None:
    bad = tmp_path / "out.jsonl"
    bad.write_text('{"custom_id": "k", "response": {"status_code": 200, "body": {}}}\n')
    with pytest.raises(SynthError, match=r"out\.jsonl line 1: the response body has no"):
        list(read_results([bad]))
    bad.write_text("\n{not json\n")
    with pytest.raises(SynthError, match=r"out\.jsonl line 2: not JSON"):
        list(read_results([bad]))


def test_files_are_split_at_the_limits() -> None:
    lines = [f'{{"n": {k}}}' for k in range(10)]
    assert [len(c) for c in split_lines(lines, max_requests=4)] == [4, 4, 2]
    size = len(lines[0]) + 1
    assert [len(c) for c in split_lines(lines, max_bytes=3 * size)] == [3, 3, 3, 1]
    with pytest.raises(SynthError, match="above the"):
        split_lines(["x" * 20], max_bytes=10)
    assert MAX_BYTES == 200 * 1024 * 1024


def test_a_request_line_is_a_batch_line() -> None:
    from synth.backend import ChatRequest

    request = ChatRequest("m", (("user", "hi"),), 0.0, 3, None)
    line = json.loads(request_line(request))
    assert line == {
        "custom_id": request.key,
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": {
            "model": "m",
            "messages": [{"role": "user", "content": "hi"}],
            "temperature": 0.0,
            "seed": 3,
        },
    }


def test_importing_the_same_errors_again_spends_no_attempt(en_pool: Path, tmp_path: Path) -> None:
    out, results = tmp_path / "requests", tmp_path / "results"
    out.mkdir()
    results.mkdir()
    first = run_batch_round(_plan(en_pool, tmp_path), batch_in=None, batch_out=out)
    _answer(en_pool, first.files, results, error_rate=1.0)
    for _ in range(4):  # the same error file, imported again and again
        again = run_batch_round(_plan(en_pool, tmp_path), batch_in=results, batch_out=out)
        assert again.report is None and again.remaining["generation"] == 16
    with RunStore(tmp_path / "batch.db") as store:
        assert {count for count, _ in store.batch_errors().values()} == {1}
    # A reply in a later file wins over the error for the same call.
    _answer(en_pool, again.files, results)
    done = run_batch_round(_plan(en_pool, tmp_path), batch_in=results, batch_out=out)
    assert done.imported == 16 and done.remaining["debate"] == 16


def test_run_batch_makes_the_result_files_folder(
    en_pool: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "requests"
    out.mkdir()
    first = run_batch_round(_plan(en_pool, tmp_path), batch_in=None, batch_out=out)
    request = first.files[0]
    result = tmp_path / "results" / "round01" / request.name  # neither folder there yet
    argv = ["-i", str(request), "-o", str(result), "--pool", str(en_pool)]
    assert main([*argv, "--models", "good=0.9,bad=0.3"]) == 0, capsys.readouterr().err
    assert len(result.read_text().splitlines()) == 8
