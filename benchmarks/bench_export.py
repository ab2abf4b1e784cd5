"""``cat export`` at scale: every call of a big run store as JSON lines.

Builds a run store of ``--calls`` calls on the English demo pool (2,400 items, each
asked of several models), as today's runs write it (item, stage and grade stored with
each call) and as an older store holds it (none of them, and no results naming the
calls), then times the export of each: the first as it is, the second with ``--pool``,
which finds every call's item by the question in its prompt and grades its reply.

    python benchmarks/bench_export.py                  # 100,000 calls
    python benchmarks/bench_export.py --calls 10000    # a quick look
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from pathlib import Path

from itempool import read_questions
from synth.backend import ChatReply, ChatRequest
from synth.export_calls import export_calls
from synth.prompts import Style, generation
from synth.store import RunStore

POOL = Path(__file__).resolve().parents[1] / "item_pools" / "demo-en"


def build(path: Path, n_calls: int) -> None:
    """A store of ``n_calls`` graded calls: each item asked of model m0, m1, ... in turn."""
    questions = read_questions(POOL)
    items = questions.items
    with RunStore(path) as store, store.transaction():
        for k in range(n_calls):
            item = items[k % len(items)]
            model = f"m{k // len(items)}"
            request = ChatRequest(
                model,
                generation(item, "en", Style.DIRECT),
                item_id=item.id,
                stage="assess",
            )
            letter = "ABCD"[k % 4]
            reply = ChatReply(f"Checking each option in turn.\n\nAnswer: {letter}", 120, 12, 0.4)
            store.put_call(request, reply, 0.0001, "2")
            # The grade the run stores (synth.call_grades), made without parsing the reply.
            correct = letter == item.answer
            grade = {"status": "ok", "correct": correct, "points": int(correct)}
            store.set_call_grade(
                request.key, letter, {**grade, "max_score": 1, "target": item.answer}
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "run.db"
        t0 = time.perf_counter()
        build(store, args.calls)
        size = store.stat().st_size / 1e6
        built = time.perf_counter() - t0
        print(f"store of {args.calls:,} calls built in {built:.1f} s ({size:.0f} MB)")
        out = Path(tmp) / "calls.jsonl"
        t0 = time.perf_counter()
        counts = export_calls(store, out)
        seconds = time.perf_counter() - t0
        print(
            f"export: {counts.calls:,} calls in {seconds:.1f} s "
            f"({counts.calls / seconds:,.0f} calls/s, {out.stat().st_size / 1e6:.0f} MB written)"
        )
        with sqlite3.connect(store) as db:  # as an older store holds the calls
            db.execute("UPDATE calls SET item_id=NULL, stage=NULL, answer=NULL, grade=NULL")
        t0 = time.perf_counter()
        counts = export_calls(store, out, pool=POOL)
        seconds = time.perf_counter() - t0
        print(
            f"export --pool of an older store: {counts.calls:,} calls in {seconds:.1f} s "
            f"({counts.calls / seconds:,.0f} calls/s; {counts.found_by_question:,} found by "
            f"their question, {counts.graded_here:,} graded)"
        )


if __name__ == "__main__":
    main()
