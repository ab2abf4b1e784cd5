"""What one ``cat synth`` run did and wrote: ``SynthesisReport`` and its parts (the run
summary; ``cat synth --report`` writes it as JSON)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ParticipantSummary(_Model):
    """One participant's exported answers: ``accuracy`` is the share correct (0/1
    reading), ``mean_share`` the mean of points / max_score (equal to the accuracy on a
    0/1 pool); both None without any answer. ``unparsed`` and ``failed`` count answers
    that could not be read (scored 0) and calls that failed (left missing)."""

    name: str
    answered: int
    accuracy: float | None
    mean_share: float | None
    unparsed: int
    failed: int


class ReflectionFlips(_Model):
    """How reflection changed the pairs' first answers (by the reference grading)."""

    right_to_wrong: int
    wrong_to_right: int
    pairs_graded: int


class StoreTotals(_Model):
    """Everything the run store holds, this run and earlier ones."""

    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: float
    failed_calls: int

    @property
    def tokens(self) -> int:
        """Prompt and completion tokens together."""
        return self.prompt_tokens + self.completion_tokens


class BatchCalls(_Model):
    """The stored calls that batches answered (``--batch``, ``--batch-in``): ``cost`` at
    batch prices, ``online_cost`` what the same calls cost online (both over the calls
    with a price, 0 without ``--prices``)."""

    calls: int
    cost: float
    online_cost: float


class JudgeAgreement(_Model):
    """The judge's points against the reference metric's on the same open answers
    (``synth.agreement``): ``n`` answers, ``exact`` share with equal points,
    ``quadratic_kappa`` (quadratic-weighted Cohen's kappa) and ``spearman`` (ρ) of the
    points as shares of max_score; None where undefined (no answers, constant scores)."""

    n: int
    exact: float | None
    quadratic_kappa: float | None
    spearman: float | None


class JudgeSummary(_Model):
    """The LLM judge of open answers: its model and prompt version; of the
    ``open_answers`` graded, ``judged`` hold a valid judgement (``new`` this run,
    ``from_store`` earlier); ``failed`` failed this run (``refused``: the score could not
    be read or was out of range), to be asked again by the next run."""

    model: str
    prompt_version: str
    open_answers: int
    judged: int
    new: int
    from_store: int
    failed: int
    refused: int
    agreement: JudgeAgreement


class SynthesisReport(_Model):
    """What one run did and wrote.

    ``n_answers`` is participants × items. Of those, ``stored_answers`` were already
    graded in the store (``regraded_answers`` of them graded again from their stored
    replies: a store from before scores, or a changed max_score); the rest took
    ``new_calls`` (paid now: ``tokens`` and ``cost``; the judge's calls included) and
    stage calls the store answered (``stored_calls``, see ``RunProgress``), and
    ``failed_calls`` spent their retry budget (the answer stays missing; a rerun tries
    again). ``store_totals`` covers this run and every earlier one.

    ``scores`` says what the matrix holds: "binary" (0/1) or "points" (0..max_score per
    item; ``max_score`` is the highest). ``open_grading`` says whether open items' points
    come from the reference metric or the judge (``judge``, when one was given and the
    items asked include open ones). ``notes`` are worth reading but did not stop the run.
    ``batch`` counts the stored calls answered by batches and their cost (None when
    batches answered none).
    """

    pool: str
    language: str
    n_items: int
    n_open_items: int
    max_score: int
    n_answers: int
    participants: list[ParticipantSummary]
    reflection: ReflectionFlips
    new_calls: int
    stored_calls: int
    stored_answers: int
    regraded_answers: int
    failed_calls: int
    tokens: int
    cost: float
    seconds: float
    store_totals: StoreTotals
    scores: Literal["binary", "points"]
    open_grading: Literal["metric", "judge"]
    judge: JudgeSummary | None
    notes: list[str]
    responses: Path
    choices: Path
    store: Path
    report: Path | None
    n_written: int
    batch: BatchCalls | None = None

    @property
    def all_from_store(self) -> bool:
        """True when nothing was asked: every answer came from the store."""
        return self.new_calls == 0 and self.failed_calls == 0
