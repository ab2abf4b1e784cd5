"""From the run store to the response matrix (DESIGN.md JSONL) and a run summary.

Each graded answer has ``points`` 0..max_score and a 0/1 ``correct`` (``graded_answers``;
an unparsed answer scores 0). A pool whose items all score 0/1 gets the 0/1 matrix it
always got; with any item above 1 the matrix holds the points (0..max_score, read by
``itempool.formats.responses.read_scored_responses``), or ``correct`` when asked for
0/1. A continuous
item (``PoolItem.continuous``) holds its reference metric's credit in [0, 1] uncut. A failed call
leaves the item missing for that participant, never a silent 0; so does, when the judge
grades open items, an open answer the judge has not scored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from itempool import ItemType, PoolItem
from itempool.atomic import write_text_atomic as write_text_atomic  # synth.job's too
from synth.scoring import OPEN_PASS
from synth.store import Result

#: (participant, item id)
AnswerKey = tuple[str, str]


@dataclass(frozen=True)
class Graded:
    """One answer as exported: ``points`` of ``max_score``, its 0/1 reading, and (for
    a continuous item, whose matrix cell holds it) the reference metric's ``credit``
    in [0, 1]."""

    points: int
    correct: bool
    max_score: int
    credit: float | None = None

    def value(self, scored: bool) -> float:
        """The matrix cell: the credit of a continuous item, else the points (on a
        scored matrix) or the 0/1 reading."""
        if not scored:
            return int(self.correct)
        return self.credit if self.credit is not None else self.points

    @property
    def share(self) -> float:
        """points / max_score (the credit of a continuous item)."""
        return self.credit if self.credit is not None else self.points / self.max_score


def graded_answers(
    results: Sequence[Result],
    items: Mapping[str, PoolItem],
    judge_points: Mapping[AnswerKey, int] | None = None,
) -> dict[AnswerKey, Graded]:
    """The exported grade of every answer that is not failed.

    Choice items and, without ``judge_points``, open items take the stored reference
    grading (``synth.scoring``). With ``judge_points`` (the judge grades open items), an
    open item in ``items`` takes the judge's points, is correct when they are at least
    half its max_score, and is left out when the judge has not scored it. A result stored
    before grading had points (and not graded again) keeps its 0/1 ``correct``."""
    out = {}
    for r in results:
        if r.status == "failed":
            continue
        key = (r.participant, r.item_id)
        item = items.get(r.item_id)
        if item is not None and item.continuous:
            # A similarity kept uncut: the reference metric's credit, never a judge's
            # points (a judge scores on the item's points scale, which it lacks).
            credit = r.credit if r.credit is not None else float(r.correct)
            out[key] = Graded(int(r.correct), r.correct, 1, credit)
            continue
        if judge_points is not None and item is not None and item.type is ItemType.OPEN:
            if key not in judge_points:
                continue
            points = judge_points[key]
            out[key] = Graded(points, points >= OPEN_PASS * item.max_score, item.max_score)
            continue
        points = r.points if r.points is not None else int(r.correct)
        out[key] = Graded(points, r.correct, r.max_score or 1)
    return out


def is_scored(graded: Mapping[AnswerKey, Graded], items: Sequence[PoolItem] = ()) -> bool:
    """Whether the matrix holds scores (0..max_score, or in [0, 1] for a continuous
    item) rather than 0/1: any item scores above 1 or is continuous."""
    return any(g.max_score > 1 or g.credit is not None for g in graded.values()) or any(
        i.max_score > 1 or i.continuous for i in items
    )


def write_responses(
    results: Sequence[Result],
    participants: Sequence[str],
    items: Sequence[str],
    path: Path,
    values: Mapping[AnswerKey, float] | None = None,
) -> int:
    """Write one JSONL line per participant with any graded answer, items in pool order;
    returns the number of subjects written. The file is replaced atomically.

    ``values`` gives the number written per (participant, item): points or 0/1, from
    ``graded_answers``; by default each result's stored 0/1 ``correct``."""
    if values is None:
        graded = [r for r in results if r.status != "failed"]
        values = {(r.participant, r.item_id): int(r.correct) for r in graded}
    return _write_by_subject(dict(values), "responses", participants, items, path)


def choices_file(out: Path) -> Path:
    """Where the chosen options go beside the responses: ``run.jsonl`` → ``run.choices.jsonl``."""
    name = out.name.removesuffix(".jsonl")
    return out.with_name(f"{name}.choices.jsonl")


def write_choices(
    results: Sequence[Result], participants: Sequence[str], items: Sequence[str], path: Path
) -> int:
    """Write each participant's parsed final answers (option letters) as JSONL lines
    ``{"subject_id", "choices"}``, for the answer-key check of ``cat pool fit``; returns
    the number of subjects written. Unparsed and failed answers are left out, and so are
    open items' answers (free text, no letters)."""
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
    write_text_atomic(path, "".join(line + "\n" for line in lines))
    return len(lines)


def summarize_results(
    results: Sequence[Result],
    participants: Sequence[str],
    graded: Mapping[AnswerKey, Graded] | None = None,
) -> dict[str, Any]:
    """Per participant: answered, accuracy (share of answers correct), mean share
    (points / max_score, averaged over the answers), unparsed, failed; for pairs, how
    reflection changed the first answer (right → wrong and wrong → right, by the
    reference grading). ``graded`` (from ``graded_answers``) says which answers are
    exported and how they score; by default every result that is not failed, 0/1."""
    if graded is None:
        graded = graded_answers(results, {})
    rows: dict[str, dict[str, Any]] = {
        name: {"answered": 0, "correct": 0, "share": 0.0, "unparsed": 0, "failed": 0}
        for name in participants
    }
    flips = {"right_to_wrong": 0, "wrong_to_right": 0, "pairs_graded": 0}
    for r in results:
        row = rows.get(r.participant)
        if row is None:
            continue
        if r.status == "failed":
            row["failed"] += 1
            continue
        row["unparsed"] += int(r.status == "unparsed")
        g = graded.get((r.participant, r.item_id))
        if g is not None:
            row["answered"] += 1
            row["correct"] += int(g.correct)
            row["share"] += g.share
        if len(r.stages) == 3:
            first = bool(r.stages[0].get("correct"))
            flips["pairs_graded"] += 1
            flips["right_to_wrong"] += int(first and not r.correct)
            flips["wrong_to_right"] += int(not first and r.correct)
    for row in rows.values():
        row["accuracy"] = row["correct"] / row["answered"] if row["answered"] else None
        row["mean_share"] = row.pop("share") / row["answered"] if row["answered"] else None
    return {"participants": rows, "reflection": flips}
