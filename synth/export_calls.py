"""Every stored call as one JSON line (``cat export``): prompt, raw reply, parsed answer,
grade, model, settings and usage, in the shape of lm-evaluation-harness's
``--log_samples`` files.

One line per call in the run store (``synth.store``), in the order stored: per item, per
model, per stage (generation, debate, reflection, the judge's). A call that several
participants share (a pair's generation is its first agent's single answer) is one line.

The lm-eval fields: ``doc_id`` (the item's 0-based position in the pool given, as
lm-eval numbers a task's documents; without the pool, or for an item not in it, its
id), ``doc`` (the item), ``target`` (its key), ``arguments`` (``{"gen_args_0":
{"arg_0": the prompt as a JSON string of the chat messages, "arg_1": the generation
settings}}``), ``resps`` (``[[reply]]``), ``filtered_resps`` (``[parsed answer]``),
``filter``, ``metrics`` with each metric's value under its name (``exact_match``: the
0/1 grade; ``credit`` where the item gives partial credit), and ``doc_hash``,
``prompt_hash``, ``target_hash`` (sha256 hex as lm-eval computes them). Ours beside
them: ``model``, ``stage``, ``item_id``, ``prompt`` (the messages), ``reply``,
``answer``, ``grade``, ``settings`` (temperature, max_tokens, seed, stop, extra_body as
sent), ``usage`` (tokens, latency, attempts, cost), ``key``, ``prompt_version`` and
``created``.

Given the pool (``pool``), ``doc`` and ``target`` come from its items, and a call stored
without a grade (by a store of schema 2 or older) is graded here as the run would have
graded it; its item is found by the id stored with it, by the results and judgements
that name it, or else by the question text in its prompt. Without the pool they come
from what the store holds: ``doc`` is ``{"id": ...}`` and ``target`` the stored grade's.
Nothing is written back into the store.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from itempool import PoolItem, QuestionSet, read_questions
from itempool.atomic import atomic_text_file
from synth.call_grades import answer_grade, item_target, judge_grade, parsed_answer
from synth.errors import SynthError
from synth.judge import parse_judge_score
from synth.question_match import QuestionIndex
from synth.reasoning import split_reasoning
from synth.scoring import score_reply
from synth.store import CallRecord, RunStore

__all__ = ["FILTER", "ExportCounts", "export_calls", "export_samples", "sample_of"]

#: What lm-eval's ``filter`` names: how the answer was read from the reply.
FILTER = "cat-llm-extract"
#: The stage of a judge's call, and how the store's prompt versions mark its calls.
_JUDGE = "judge"
_JUDGE_VERSION_PREFIX = "judge-"
#: Progress is reported every this many calls.
_PROGRESS_EVERY = 200

#: Called with (calls done, calls in all).
Progress = Callable[[int, int], None]


@dataclass
class ExportCounts:
    """What an export wrote: ``calls`` lines; of them ``graded_here`` graded from the
    pool (stored without a grade), ``found_by_question`` whose item was found by its
    question text, and ``ungraded`` left without a grade (no pool given, or its item
    not found in it)."""

    calls: int = 0
    graded_here: int = 0
    found_by_question: int = 0
    ungraded: int = 0


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class _Items:
    """The pool's items by id and by question, and how its replies are graded."""

    def __init__(self, pool: QuestionSet, order_threshold: float) -> None:
        self.by_id = {item.id: item for item in pool.items}
        self.position = {item.id: k for k, item in enumerate(pool.items)}
        self.language: str = pool.language
        self.order_threshold = order_threshold
        self._index: QuestionIndex | None = None

    def by_question(self, messages: Sequence[dict[str, Any]]) -> PoolItem | None:
        if self._index is None:  # built on first need: most stores name their items
            self._index = QuestionIndex(self.by_id.values())
        return self._index.find(messages)

    def grade(
        self, record: CallRecord, item: PoolItem, stage: str | None
    ) -> tuple[str | None, dict[str, object]]:
        text = split_reasoning(record.reply.text).answer
        if stage == _JUDGE:
            verdict = parse_judge_score(text, item.max_score)
            points = verdict.points
            answer = None if points is None else str(points)
            return answer, judge_grade(points, item.max_score, verdict.problem)
        scored = score_reply(text, item, self.order_threshold, language=self.language)
        return parsed_answer(scored), answer_grade(scored, item)


def sample_of(
    record: CallRecord,
    item: PoolItem | None = None,
    *,
    doc_id: int | None = None,
    item_id: str | None = None,
    stage: str | None = None,
    answer: str | None = None,
    grade: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The export line of one stored call (the module docstring). ``item``: its pool
    item where known, and ``doc_id`` its position in the pool; ``item_id``, ``stage``,
    ``answer`` and ``grade`` replace the record's own where given (found or graded by
    the export)."""
    item_id = item_id or record.item_id
    stage = stage or record.stage
    answer = answer if answer is not None else record.answer
    grade = grade if grade is not None else record.grade
    payload = record.request
    messages = [{"role": m["role"], "content": m["content"]} for m in payload["messages"]]
    settings = {
        "temperature": payload.get("temperature"),
        "max_tokens": payload.get("max_tokens"),
        "seed": payload.get("seed"),
        "stop": payload.get("stop"),
        "extra_body": payload.get("extra_body"),
    }
    if item is not None:
        doc: dict[str, Any] | None = item.model_dump(mode="json", exclude_defaults=True)
        target: str | None = item_target(item)
    else:
        doc = None if item_id is None else {"id": item_id}
        stored_target = None if grade is None else grade.get("target")
        target = None if stored_target is None else str(stored_target)
    context = json.dumps(messages, ensure_ascii=False)
    metrics = _metrics(grade, stage)
    line: dict[str, Any] = {
        "doc_id": item_id if doc_id is None else doc_id,
        "doc": doc,
        "target": target,
        "arguments": {"gen_args_0": {"arg_0": context, "arg_1": _gen_kwargs(settings)}},
        "resps": [[record.reply.text]],
        "filtered_resps": [answer],
        "filter": FILTER,
        "metrics": list(metrics),
        **metrics,
        "doc_hash": None if doc is None else _sha256(json.dumps(doc, indent=2, ensure_ascii=False)),
        "prompt_hash": _sha256(context),
        "target_hash": None if target is None else _sha256(target),
        "model": record.model,
        "stage": stage,
        "item_id": item_id,
        "prompt": messages,
        "reply": record.reply.text,
        "reasoning": record.reply.reasoning,
        "finish_reason": record.reply.finish_reason,
        "answer": answer,
        "grade": grade,
        "settings": settings,
        "usage": {
            "prompt_tokens": record.reply.prompt_tokens,
            "completion_tokens": record.reply.completion_tokens,
            "reasoning_tokens": record.reply.reasoning_tokens,
            "latency": record.reply.latency,
            "attempts": record.reply.attempts,
            "cost": record.cost,
        },
        "key": record.key,
        "prompt_version": record.prompt_version,
        "created": record.created,
    }
    return line


def _gen_kwargs(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings under lm-eval's ``generate_until`` names (``until``,
    ``max_gen_toks``), with the extra body's fields beside them."""
    kwargs: dict[str, Any] = dict(settings["extra_body"] or {})
    kwargs.update(
        until=list(settings["stop"] or []),
        max_gen_toks=settings["max_tokens"],
        temperature=settings["temperature"],
        seed=settings["seed"],
    )
    return kwargs


def _metrics(grade: dict[str, Any] | None, stage: str | None) -> dict[str, float]:
    """lm-eval's per-sample metrics of an answer's grade: ``exact_match`` (0/1) and,
    where the item gives partial credit, ``credit``; none for a judge's call or an
    ungraded one."""
    if grade is None or stage == _JUDGE or "correct" not in grade:
        return {}
    metrics = {"exact_match": float(bool(grade["correct"]))}
    if grade.get("credit") is not None:
        metrics["credit"] = float(grade["credit"])
    return metrics


def export_samples(
    store: RunStore,
    *,
    models: Sequence[str] | None = None,
    pool: QuestionSet | None = None,
    counts: ExportCounts | None = None,
    progress: Progress | None = None,
) -> Iterator[dict[str, Any]]:
    """The export line of every call in ``store`` (of ``models`` only, where given), in
    the order stored, read a slice at a time; ``counts`` is filled as they are made."""
    counts = counts if counts is not None else ExportCounts()
    total = store.count_calls(models)
    purposes = store.call_purposes()
    items = None
    if pool is not None:
        run = store.get_meta("run")
        threshold = run.get("order_threshold", 0.8) if isinstance(run, dict) else 0.8
        items = _Items(pool, float(threshold))
    for record in store.iter_calls(models):
        item_id, stage = record.item_id, record.stage
        if item_id is None or stage is None:
            known = purposes.get(record.key)
            if known is not None:
                item_id, stage = item_id or known[0], stage or known[1]
        if stage is None and record.prompt_version.startswith(_JUDGE_VERSION_PREFIX):
            stage = _JUDGE
        item = None
        if items is not None:
            item = items.by_id.get(item_id) if item_id is not None else None
            if item is None and item_id is None:
                item = items.by_question(record.request["messages"])
                if item is not None:
                    item_id = item.id
                    counts.found_by_question += 1
        answer, grade = record.answer, record.grade
        if grade is None and item is not None and items is not None:
            answer, grade = items.grade(record, item, stage)
            counts.graded_here += 1
        if grade is None:
            counts.ungraded += 1
        counts.calls += 1
        position = None if item is None or items is None else items.position[item.id]
        yield sample_of(
            record,
            item,
            doc_id=position,
            item_id=item_id,
            stage=stage,
            answer=answer,
            grade=grade,
        )
        if progress is not None and (counts.calls % _PROGRESS_EVERY == 0 or counts.calls == total):
            progress(counts.calls, total)


def _check_selection(
    run_store: RunStore, store: str | Path, models: Sequence[str] | None, pool: QuestionSet | None
) -> None:
    """Refuse a model with no stored call, and a pool that holds none of the calls'
    items (another pool's store): either export would be empty or unfilled, silently."""
    if models:
        known = run_store.call_models()
        missing = [m for m in models if m not in known]
        if missing:
            have = ", ".join(known[:10]) + (", ..." if len(known) > 10 else "") or "none"
            raise SynthError(f"{store}: no stored call of model {missing[0]!r}; its models: {have}")
    if pool is not None:
        asked = run_store.call_items(models)
        if asked and not asked & {item.id for item in pool.items}:
            example = sorted(asked)[0]
            raise SynthError(
                f"{store}: none of the {len(asked):,} items its calls asked (e.g. {example!r}) "
                f"is in pool {pool.name}: give the pool the calls were made on"
            )


def export_calls(
    store: str | Path,
    out: str | Path | None = None,
    *,
    models: Sequence[str] | None = None,
    pool: str | Path | QuestionSet | None = None,
    progress: Progress | None = None,
    stream: TextIO | None = None,
) -> ExportCounts:
    """Write every call of the run store at ``store`` as JSON lines: to ``out``
    (replaced atomically: a reader never sees half of it), else to ``stream`` (standard
    output by default) line by line. ``models`` keeps those models' calls only;
    ``pool`` (a pool folder or name, or its questions) fills ``doc`` and ``target`` and
    grades the calls stored without a grade. Raises ``SynthError`` when ``store`` is
    missing or not a run store."""
    questions = pool if isinstance(pool, QuestionSet) or pool is None else read_questions(pool)
    counts = ExportCounts()
    with RunStore.existing(store) as run_store:
        _check_selection(run_store, store, models, questions)
        lines = (
            json.dumps(sample, ensure_ascii=False) + "\n"
            for sample in export_samples(
                run_store, models=models, pool=questions, counts=counts, progress=progress
            )
        )
        if out is not None:
            # Line by line into a file that replaces ``out`` at the end: a big store is
            # never held in memory, and a reader never sees half an export.
            with atomic_text_file(Path(out)) as fh:
                fh.writelines(lines)
        else:
            target = stream if stream is not None else sys.stdout
            for line in lines:
                target.write(line)
            target.flush()
    return counts
