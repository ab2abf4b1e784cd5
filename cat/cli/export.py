"""``cat export``: every call in a run store as JSON lines (``synth.export_calls``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from cat.cli.common import check_writable, counted, handle_errors, progress_bar, say, show_progress


@handle_errors
def export(
    store: Path = typer.Option(
        ..., "--store", help="Run store (SQLite) of cat synth or cat assess."
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        help="Write the lines here (JSONL, replaced whole); default: standard output.",
    ),
    models: list[str] = typer.Option(
        [], "--model", help="Only this model's calls; repeat for several."
    ),
    pool: Path | None = typer.Option(
        None,
        "--pool",
        help="The pool the calls asked (a folder or a pool's name): fills doc and target "
        "from its items and grades calls stored without a grade (by an older store).",
    ),
) -> None:
    """Export every stored call as one JSON line: its prompt, raw reply, parsed answer,
    grade, model, stage, settings and usage, with the fields of lm-evaluation-harness's
    --log_samples files (doc_id, doc, target, arguments, resps, filtered_resps,
    exact_match, doc_hash, prompt_hash, target_hash). One line per call: per item, per
    model, per stage. Without --out the lines go to standard output, for jq and the like.

    Examples:

      cat export --store run.db --out calls.jsonl

      cat export --store run.db --model qwen2.5:7b --pool item_pools/demo > calls.jsonl
    """
    from synth.export_calls import export_calls

    check_writable({"--out": out})
    if out is None:
        _to_stdout(store, models, pool)
        return
    with progress_bar("exporting calls", total=None) as update:
        counts = export_calls(
            store,
            out,
            models=models or None,
            pool=pool,
            progress=lambda done, total: update(completed=done, total=total),
        )
    notes = []
    if counts.graded_here:
        notes.append(f"{counts.graded_here:,} graded from the pool")
    if counts.found_by_question:
        notes.append(f"{counts.found_by_question:,} found by their question")
    if counts.ungraded:
        notes.append(f"{counts.ungraded:,} without a grade")
    noted = f" ({'; '.join(notes)})" if notes else ""
    say(f"{counted(counts.calls, 'call')} written to {out}{noted}")


def _to_stdout(store: Path, models: list[str], pool: Path | None) -> None:
    """The lines on standard output; progress only off a terminal (on stderr), where it
    cannot mix with them. A reader that stops early (``| head``) ends the export quietly."""
    from synth.export_calls import export_calls

    try:
        if show_progress():
            export_calls(store, models=models or None, pool=pool)
            return
        with progress_bar("exporting calls", total=None) as update:
            export_calls(
                store,
                models=models or None,
                pool=pool,
                progress=lambda done, total: update(completed=done, total=total),
            )
    except BrokenPipeError:
        # Python would complain again when it flushes stdout at exit: point it elsewhere.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
