"""From the run store to the response matrix (DESIGN.md JSONL) and a run summary.

A graded answer (right, wrong or unparsed, which counts as wrong) is 1/0; a failed call
leaves the item missing for that participant, never a silent 0.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from synth.store import Result


def write_responses(
    results: Sequence[Result], participants: Sequence[str], items: Sequence[str], path: Path
) -> int:
    """Write one JSONL line per participant with any graded answer, items in pool order;
    returns the number of subjects written. The file is replaced atomically."""
    graded = [r for r in results if r.status != "failed"]
    values = {(r.participant, r.item_id): int(r.correct) for r in graded}
    return _write_by_subject(values, "responses", participants, items, path)


def choices_file(out: Path) -> Path:
    """Where the chosen options go beside the responses: ``run.jsonl`` → ``run.choices.jsonl``."""
    name = out.name.removesuffix(".jsonl")
    return out.with_name(f"{name}.choices.jsonl")


def write_choices(
    results: Sequence[Result], participants: Sequence[str], items: Sequence[str], path: Path
) -> int:
    """Write each participant's parsed final answers (option letters) as JSONL lines
    ``{"subject_id", "choices"}``, for the answer-key check of ``cat pool fit``; returns
    the number of subjects written. Unparsed and failed answers are left out."""
    parsed = [r for r in results if r.status == "ok" and r.answer]
    values = {(r.participant, r.item_id): str(r.answer) for r in parsed}
    return _write_by_subject(values, "choices", participants, items, path)


def _write_by_subject(
    values: dict[tuple[str, str], Any],
    field: str,
    participants: Sequence[str],
    items: Sequence[str],
    path: Path,
) -> int:
    by_subject: dict[str, dict[str, Any]] = {name: {} for name in participants}
    for (participant, item), value in values.items():
        if participant in by_subject:
            by_subject[participant][item] = value
    position = {item: k for k, item in enumerate(items)}
    lines = []
    for name in participants:
        answers = by_subject[name]
        if answers:
            ordered = dict(sorted(answers.items(), key=lambda kv: position.get(kv[0], len(items))))
            lines.append(json.dumps({"subject_id": name, field: ordered}, ensure_ascii=False))
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write("".join(line + "\n" for line in lines))
    os.replace(tmp, path)
    return len(lines)


def summarize_results(results: Sequence[Result], participants: Sequence[str]) -> dict[str, Any]:
    """Per participant: answered, accuracy, unparsed, failed; for pairs, how reflection
    changed the first answer (right → wrong and wrong → right)."""
    rows: dict[str, dict[str, Any]] = {
        name: {"answered": 0, "correct": 0, "unparsed": 0, "failed": 0} for name in participants
    }
    flips = {"right_to_wrong": 0, "wrong_to_right": 0, "pairs_graded": 0}
    for r in results:
        row = rows.get(r.participant)
        if row is None:
            continue
        if r.status == "failed":
            row["failed"] += 1
            continue
        row["answered"] += 1
        row["correct"] += int(r.correct)
        row["unparsed"] += int(r.status == "unparsed")
        if len(r.stages) == 3:
            first = bool(r.stages[0].get("correct"))
            flips["pairs_graded"] += 1
            flips["right_to_wrong"] += int(first and not r.correct)
            flips["wrong_to_right"] += int(not first and r.correct)
    for row in rows.values():
        row["accuracy"] = row["correct"] / row["answered"] if row["answered"] else None
    return {"participants": rows, "reflection": flips}
