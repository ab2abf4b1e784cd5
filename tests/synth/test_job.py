"""``run_synthesis``: the whole ``cat synth`` job as one library call, against the local
server over real HTTP."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from itempool.formats.responses import read_responses
from synth.errors import SynthError
from synth.export import choices_file
from synth.job import SynthesisReport, run_synthesis
from synth.local_server import LocalServer
from synth.prompts import Style
from synth.runner import RunProgress
from tests.synth.pools import EN_ITEMS

MODELS = {"good": 0.9, "bad": 0.3}


def _synth(pool: Path, url: str, tmp: Path, **options: object) -> SynthesisReport:
    options = {"store": tmp / "run.db", "out": tmp / "responses.jsonl", **options}
    return run_synthesis(pool, "good,bad", base_url=url, **options)  # type: ignore[arg-type]


def test_report_says_what_the_run_did_and_wrote(en_pool: Path, tmp_path: Path) -> None:
    seen: list[RunProgress] = []
    with LocalServer(EN_ITEMS, MODELS) as server:
        report = _synth(en_pool, server.base_url, tmp_path, limit=10, progress=seen.append)
        n_completed = len(server.completed_keys())
    assert report.pool == "en-pool" and report.language == "en"
    assert report.n_items == 10 and report.n_answers == 40 and report.n_written == 4
    # per item: 2 generations (the pairs share them) + 2 pairs x (debate, reflection)
    assert report.new_calls == 60 == n_completed == report.store_totals.calls
    assert report.stored_answers == 0 and report.failed_calls == 0
    assert report.tokens == report.store_totals.tokens > 0
    assert report.cost == 0.0 and report.seconds > 0
    assert seen and seen[-1].done == seen[-1].total == (2 + 2 * 3) * 10
    by_name = {row.name: row for row in report.participants}
    assert list(by_name) == ["good", "bad", "good>bad", "bad>good"]
    assert all(row.answered == 10 and row.failed == 0 for row in by_name.values())
    assert by_name["good"].accuracy is not None and by_name["bad"].accuracy is not None
    assert by_name["good"].accuracy > by_name["bad"].accuracy
    assert report.reflection.pairs_graded == 20
    assert report.responses == tmp_path / "responses.jsonl"
    assert report.choices == choices_file(report.responses) == tmp_path / "responses.choices.jsonl"
    assert report.choices.is_file() and report.store == tmp_path / "run.db"
    matrix = read_responses(report.responses)
    assert set(matrix.subject_ids) == set(by_name) and matrix.n_items == 10
    with sqlite3.connect(tmp_path / "run.db") as db:
        (meta,) = db.execute("SELECT value FROM meta WHERE name='run'").fetchone()
    run = json.loads(meta)
    assert run["participants"] == list(by_name) and run["seed"] == 0
    assert run["package_version"] and run["prompt_version"]
    # The report is the edge: typed, strict, and dumps to JSON.
    assert SynthesisReport.model_validate_json(report.model_dump_json()) == report


def test_a_rerun_counts_the_answers_reused_from_the_store(en_pool: Path, tmp_path: Path) -> None:
    with LocalServer(EN_ITEMS, MODELS) as server:
        first = _synth(en_pool, server.base_url, tmp_path, limit=4)
        again = _synth(en_pool, server.base_url, tmp_path, limit=6)
        last = _synth(en_pool, server.base_url, tmp_path, limit=6)
        n_completed = len(server.completed_keys())
    assert (first.new_calls, first.stored_answers, first.all_from_store) == (24, 0, False)
    assert (again.new_calls, again.stored_answers, again.all_from_store) == (12, 16, False)
    assert (last.new_calls, last.stored_answers, last.all_from_store) == (0, 24, True)
    assert last.stored_calls == 0 and last.tokens == 0
    assert n_completed == 36 == last.store_totals.calls
    assert last.participants == again.participants  # the same answers, from the store


def test_calls_stored_without_their_answers_are_not_paid_again(
    en_pool: Path, tmp_path: Path
) -> None:
    with LocalServer(EN_ITEMS, MODELS) as server:
        _synth(en_pool, server.base_url, tmp_path, limit=3)
        with sqlite3.connect(tmp_path / "run.db") as db:  # as if killed before grading
            db.execute("DELETE FROM results")
        again = _synth(en_pool, server.base_url, tmp_path, limit=3)
        n_completed = len(server.completed_keys())
    assert n_completed == 18 and again.new_calls == 0 and again.all_from_store
    assert again.stored_answers == 0 and again.stored_calls == (2 + 2 * 3) * 3


def test_styles_and_kinds_name_the_participants(en_pool: Path, tmp_path: Path) -> None:
    with LocalServer(EN_ITEMS, MODELS) as server:
        report = _synth(
            en_pool,
            server.base_url,
            tmp_path,
            limit=2,
            participants=["singles"],
            styles=[Style.DIRECT, Style.COT],
        )
    assert [row.name for row in report.participants] == ["good", "bad", "good+cot", "bad+cot"]
    assert report.reflection.pairs_graded == 0


def test_a_broken_pool_is_a_synth_error_naming_file_and_line(en_pool: Path, tmp_path: Path) -> None:
    with (en_pool / "items.jsonl").open("a", encoding="utf-8") as fh:
        fh.write("{not json\n")
    with pytest.raises(SynthError, match=r"items\.jsonl:31: not valid JSON") as caught:
        _synth(en_pool, "http://127.0.0.1:9/v1", tmp_path)
    assert type(caught.value.__cause__).__name__ == "PoolFormatError"
    assert not (tmp_path / "run.db").exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"out": Path("/nowhere/responses.jsonl")}, "folder /nowhere does not exist"),
        ({"limit": 0}, "limit must be at least 1"),
        ({"order_threshold": 1.5}, "Kendall tau in"),
        ({"timeout": 0.0}, "timeout must be positive"),
        ({"participants": ["trios"]}, "participants must be among"),
        ({"concurrency": 0}, "concurrency must be at least 1"),
        ({"max_attempts": 0}, "max_attempts must be at least 1"),
    ],
)
def test_bad_settings_fail_before_the_store_is_made(
    en_pool: Path, tmp_path: Path, options: dict[str, object], message: str
) -> None:
    # An unused local port: every check above comes before reaching the endpoint.
    with pytest.raises(SynthError, match=message):
        _synth(en_pool, "http://127.0.0.1:9/v1", tmp_path, **options)
    assert not (tmp_path / "run.db").exists()


def test_synth_job_does_not_import_cat() -> None:
    code = "import sys, synth.job; print(sorted(m for m in sys.modules if m.startswith('cat')))"
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == "[]"
