"""0/1 pools after issue 15: the same bytes out, and old run stores resume without a call.

``data/legacy`` holds what the code before issue 15 wrote for the test pools (good = 0.9,
bad = 0.3, singles and pairs, server seed 0): the response matrices, the chosen options,
and the whole run store of ``MIXED_ITEMS`` (single, multi and order items) as an SQL dump.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from itempool import PoolItem
from synth.job import run_synthesis
from synth.local_server import LocalServer
from synth.store import RunStore
from tests.synth.pools import EN_ITEMS, MIXED_ITEMS, ZH_ITEMS, write_pool
from tests.synth.test_store import LEGACY, v1_store

MODELS = {"good": 0.9, "bad": 0.3}
POOLS = {"en": (EN_ITEMS, "en"), "zh": (ZH_ITEMS, "zh"), "mixed": (MIXED_ITEMS, "en")}


def _same_bytes(out: Path, name: str) -> None:
    assert out.read_bytes() == (LEGACY / f"{name}.jsonl").read_bytes()
    choices = out.with_name(f"{out.stem}.choices.jsonl")
    assert choices.read_bytes() == (LEGACY / f"{name}.choices.jsonl").read_bytes()


@pytest.mark.parametrize("name", sorted(POOLS))
def test_a_0_1_pool_gives_the_same_bytes_as_before(name: str, tmp_path: Path) -> None:
    items, language = POOLS[name]
    pool = write_pool(tmp_path / f"{name}-pool", items, language)
    out = tmp_path / f"{name}.jsonl"
    with LocalServer(items, MODELS) as server:
        report = run_synthesis(
            pool, "good,bad", base_url=server.base_url, store=tmp_path / "run.db", out=out
        )
    _same_bytes(out, name)
    assert report.scores == "binary" and report.max_score == 1 and report.judge is None
    assert all(row.mean_share == row.accuracy for row in report.participants)


def test_a_schema_1_store_resumes_without_asking_and_writes_the_same_bytes(
    tmp_path: Path,
) -> None:
    pool = write_pool(tmp_path / "mixed-pool", MIXED_ITEMS)
    store = v1_store(tmp_path / "old.db")
    out = tmp_path / "mixed.jsonl"
    with LocalServer(MIXED_ITEMS, MODELS) as server:
        report = run_synthesis(pool, "good,bad", base_url=server.base_url, store=store, out=out)
        asked = len(server.records)
    assert asked == 0 and report.new_calls == 0 and report.all_from_store
    assert report.stored_answers == 48 == report.regraded_answers
    _same_bytes(out, "mixed")
    with RunStore(store) as again:
        results = {(r.participant, r.item_id): r for r in again.results()}
    by_id = {item.id: item for item in MIXED_ITEMS}
    for (_, item_id), r in results.items():
        assert r.max_score == 1 and r.points == int(r.correct) and r.reply_hash
        item: PoolItem = by_id[item_id]
        if item.type == "multi" and r.answer and not r.correct:
            assert r.credit is not None and 0.0 <= r.credit < 1.0  # F1, kept beside the 0/1
    # graded once: a second run finds nothing to grade again
    with LocalServer(MIXED_ITEMS, MODELS) as server:
        second = run_synthesis(pool, "good,bad", base_url=server.base_url, store=store, out=out)
    assert second.regraded_answers == 0 and second.new_calls == 0
    _same_bytes(out, "mixed")


def test_raising_an_items_max_score_regrades_from_the_stored_replies(tmp_path: Path) -> None:
    store = v1_store(tmp_path / "old.db")
    scored = [
        item.model_copy(update={"max_score": 3}) if item.type != "single" else item
        for item in MIXED_ITEMS
    ]
    pool = write_pool(tmp_path / "mixed-pool", scored)
    out = tmp_path / "mixed.jsonl"
    with LocalServer(MIXED_ITEMS, MODELS) as server:
        report = run_synthesis(pool, "good,bad", base_url=server.base_url, store=store, out=out)
        asked = len(server.records)
    assert asked == 0 and report.regraded_answers == 48
    assert report.scores == "points" and report.max_score == 3
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT max_score, points FROM results").fetchall()
    assert {m for m, _ in rows} == {1, 3} and max(p for _, p in rows) == 3
