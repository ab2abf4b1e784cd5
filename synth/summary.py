"""After the calls: grade what the store holds, write the matrix and the chosen options,
and sum the run up (participants, reflection, the judge and its agreement with the
reference metric)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from itempool import ItemType, PoolItem, QuestionSet
from synth.agreement import agreement
from synth.export import (
    AnswerKey,
    choices_file,
    graded_answers,
    is_scored,
    summarize_results,
    write_choices,
    write_responses,
)
from synth.judge import JUDGE_PROMPT_VERSION, Judge
from synth.judging import JudgeCounts, judged_points
from synth.names import OPEN_GRADINGS as OPEN_GRADINGS
from synth.report import JudgeAgreement, JudgeSummary, ParticipantSummary, ReflectionFlips
from synth.store import Result, RunStore

#: Where an open item's points come from: the reference metric or the LLM judge.


@dataclass(frozen=True)
class Exported:
    """What ``export_run`` wrote and found."""

    participants: list[ParticipantSummary]
    reflection: ReflectionFlips
    scores: Literal["binary", "points"]
    open_grading: Literal["metric", "judge"]
    judge: JudgeSummary | None
    n_written: int
    notes: list[str] = field(default_factory=list)


def export_run(
    store: RunStore,
    pool: QuestionSet,
    asked: QuestionSet,
    participants: Sequence[str],
    out: Path,
    *,
    judge: Judge | None,
    judge_counts: JudgeCounts | None,
    open_grading: str,
    binary: bool,
) -> Exported:
    """Write the response matrix to ``out`` and the chosen options beside it, from
    ``store``'s results for ``participants``; ``pool`` is the whole pool (types and
    max_scores of every stored item), ``asked`` the items this run asked. The judge's
    figures cover the open answers of ``participants`` to the ``asked`` items."""
    items = {item.id: item for item in pool.items}
    results = store.results()
    judge_points = judged_points(store, judge.model, results, items) if judge else None
    by_judge = open_grading == "judge" and judge_points is not None
    graded = graded_answers(results, items, judge_points if by_judge else None)
    scored = is_scored(graded, asked.items) and not binary
    values = {key: g.value(scored) for key, g in graded.items()}
    item_ids = [item.id for item in asked.items]
    n_written = write_responses(results, participants, item_ids, out, values)
    write_choices(results, participants, item_ids, choices_file(out))
    summary = summarize_results(results, participants, graded)
    notes = []
    if binary and not is_scored(graded, asked.items):
        notes.append("--binary changed nothing: every item scores 0/1")
    summary_judge = None
    if judge is not None and judge_points is not None:
        asked_results = [
            r for r in results if r.participant in set(participants) and r.item_id in set(item_ids)
        ]
        summary_judge = _judge_summary(judge, judge_counts, asked_results, items, judge_points)
        missing = summary_judge.open_answers - summary_judge.judged
        if by_judge and missing:
            notes.append(
                f"{missing} open answer{'s are' if missing != 1 else ' is'} left out of the "
                "matrix: the judge has not scored them (a rerun asks again)"
            )
    return Exported(
        participants=[
            ParticipantSummary(
                name=name,
                answered=row["answered"],
                accuracy=row["accuracy"],
                mean_share=row["mean_share"],
                unparsed=row["unparsed"],
                failed=row["failed"],
            )
            for name, row in summary["participants"].items()
        ],
        reflection=ReflectionFlips(**summary["reflection"]),
        scores="points" if scored else "binary",
        open_grading="judge" if by_judge else "metric",
        judge=summary_judge,
        n_written=n_written,
        notes=notes,
    )


def _judge_summary(
    judge: Judge,
    counts: JudgeCounts | None,
    results: Sequence[Result],
    items: Mapping[str, PoolItem],
    judge_points: Mapping[AnswerKey, int],
) -> JudgeSummary:
    counts = counts or JudgeCounts()
    open_results = [
        r
        for r in results
        if r.status != "failed" and r.item_id in items and items[r.item_id].type is ItemType.OPEN
    ]
    pairs = [
        (judge_points[(r.participant, r.item_id)], r.points, items[r.item_id].max_score)
        for r in open_results
        if (r.participant, r.item_id) in judge_points
        and r.points is not None
        and r.max_score == items[r.item_id].max_score
    ]
    found = agreement([p[0] for p in pairs], [p[1] for p in pairs], [p[2] for p in pairs])
    return JudgeSummary(
        model=judge.model,
        prompt_version=JUDGE_PROMPT_VERSION,
        open_answers=len(open_results),
        judged=sum((r.participant, r.item_id) in judge_points for r in open_results),
        new=counts.new,
        from_store=counts.stored,
        failed=counts.failed,
        refused=counts.refused,
        agreement=JudgeAgreement(
            n=found.n,
            exact=found.exact,
            quadratic_kappa=found.kappa,
            spearman=found.spearman,
        ),
    )
