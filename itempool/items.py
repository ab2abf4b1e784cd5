"""One question of a pool (a line of ``items.jsonl``, DESIGN.md "Item pool"), and the
questions with what asking them needs (``QuestionSet``)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class ItemType(StrEnum):
    """How a question is answered: one option, several options, or an order of options."""

    SINGLE = "single"
    MULTI = "multi"
    ORDER = "order"


class PoolItem(BaseModel):
    """One question. ``answer`` is a letter ("B"), letters ("BD", multi) or an order
    of letters ("CABD", order), always among ``options``' keys."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    scenario: str = ""
    type: ItemType = ItemType.SINGLE
    question: str = Field(min_length=1)
    options: dict[str, str]
    answer: str = Field(min_length=1)
    meta: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _answer_among_options(self) -> PoolItem:
        if len(self.options) < 2:
            raise ValueError("an item needs at least two options")
        unknown = [letter for letter in self.answer if letter not in self.options]
        if unknown:
            raise ValueError(f"answer {self.answer!r} names options not offered: {unknown}")
        if self.type is ItemType.SINGLE and len(self.answer) != 1:
            raise ValueError(f"a single-choice answer is one letter, got {self.answer!r}")
        if len(set(self.answer)) != len(self.answer):
            raise ValueError(f"answer {self.answer!r} repeats a letter")
        return self


class QuestionSet(BaseModel):
    """A pool's name and language (prompts are chosen by it) with its questions: what
    asking a model needs. ``itempool.read_questions`` reads one from a pool folder."""

    model_config = ConfigDict(frozen=True)

    name: str
    language: Literal["zh", "en"]
    items: tuple[PoolItem, ...]
