"""One question of a pool (a line of ``items.jsonl``, DESIGN.md "Item pool"), and the
questions with what asking them needs (``QuestionSet``)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from itempool.languages import LanguageCode


class ItemType(StrEnum):
    """How a question is answered: one option, several options, an order of options,
    or free text (``open``)."""

    SINGLE = "single"
    MULTI = "multi"
    ORDER = "order"
    OPEN = "open"


#: The top score of an open item that does not give one: scores 0..4.
OPEN_MAX_SCORE = 4


class NumericAnswer(BaseModel):
    """The number an open item's answer must end on: right when within ``abs_tol`` of
    ``value`` or within ``rel_tol`` times its size (either suffices)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: float = Field(allow_inf_nan=False)
    abs_tol: float = Field(0.0, ge=0, allow_inf_nan=False)
    rel_tol: float = Field(0.0, ge=0, allow_inf_nan=False)


class PoolItem(BaseModel):
    """One question. For a choice item (single, multi, order) ``answer`` is a letter
    ("B"), letters ("BD", multi) or an order of letters ("CABD", order), always among
    ``options``' keys. An ``open`` item has no options: it is answered in free text and
    graded against its ``references`` (one or more reference answers), its
    ``numeric_answer`` (a number with a tolerance), or both; ``rubric`` tells a judge
    what a good answer holds.

    ``max_score``: the item's scores are 0..max_score. A single choice is right or
    wrong (1). A multi or order item scores 1 when right (the 0/1 threshold) unless it
    gives more: its partial credit (set-overlap F1, Kendall τ) then becomes a graded
    score. An open item scores 0..4 unless told otherwise, or, with ``continuous``,
    keeps its grade in [0, 1] uncut (a similarity such as ROUGE-L, fitted by a
    continuous model: ``irt.continuous``); its top score is then 1.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    scenario: str = ""
    type: ItemType = ItemType.SINGLE
    question: str = Field(min_length=1)
    options: dict[str, str] = Field(default_factory=dict)
    answer: str = ""
    references: tuple[str, ...] = ()
    rubric: str | None = None
    numeric_answer: NumericAnswer | None = None
    max_score: int = Field(1, ge=1, le=100)
    continuous: bool = False
    meta: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _default_max_score(cls, data: Any) -> Any:
        # An open item left without a top score gets OPEN_MAX_SCORE, the others 1.
        if isinstance(data, dict) and data.get("max_score") is None and "max_score" in data:
            raise ValueError("max_score must be a whole number from 1 to 100, not null")
        if isinstance(data, dict) and "max_score" not in data:
            is_open = data.get("type") in (ItemType.OPEN, ItemType.OPEN.value)
            points = is_open and data.get("continuous") is not True
            return {**data, "max_score": OPEN_MAX_SCORE if points else 1}
        return data

    @model_validator(mode="after")
    def _answer_among_options(self) -> PoolItem:
        if self.type is ItemType.OPEN:
            return self._check_open()
        if self.continuous:
            raise ValueError(f"continuous is for open items, not {self.type.value} ones")
        for name in ("references", "rubric", "numeric_answer"):
            if getattr(self, name):
                raise ValueError(f"{name} is for open items, not {self.type.value} ones")
        if len(self.options) < 2:
            raise ValueError("an item needs at least two options")
        if not self.answer:
            raise ValueError(f"a {self.type.value} item needs its answer")
        unknown = [letter for letter in self.answer if letter not in self.options]
        if unknown:
            raise ValueError(f"answer {self.answer!r} names options not offered: {unknown}")
        if self.type is ItemType.SINGLE and len(self.answer) != 1:
            raise ValueError(f"a single-choice answer is one letter, got {self.answer!r}")
        if self.type is ItemType.SINGLE and self.max_score != 1:
            raise ValueError(f"a single-choice item scores 0 or 1, not up to {self.max_score}")
        if len(set(self.answer)) != len(self.answer):
            raise ValueError(f"answer {self.answer!r} repeats a letter")
        return self

    def _check_open(self) -> PoolItem:
        if self.options or self.answer:
            raise ValueError(
                "an open item has no options and no answer letter: give its references "
                "and/or numeric_answer"
            )
        if not self.references and self.numeric_answer is None:
            raise ValueError("an open item needs references, a numeric_answer, or both")
        if any(not text.strip() for text in self.references):
            raise ValueError("a reference answer is empty")
        if self.continuous and self.max_score != 1:
            raise ValueError(
                f"a continuous item is scored in [0, 1]; its max_score is 1, not {self.max_score}"
            )
        return self


class QuestionSet(BaseModel):
    """A pool's name and language (prompts are chosen by it) with its questions: what
    asking a model needs. ``itempool.read_questions`` reads one from a pool folder."""

    model_config = ConfigDict(frozen=True)

    name: str
    language: LanguageCode
    items: tuple[PoolItem, ...]
