"""Worked examples: solved questions shown before each question, as a protocol names them.

A JSONL file in the pool (``protocol.examples``), one example a line::

    {"id": "val-0", "scenario": "math", "question": "...", "options": {"A": "0", ...},
     "answer": "A", "worked": "Let's think step by step. ... The answer is (A)."}

``worked`` is the solved answer as the references saw it (MMLU-Pro's ``cot_content``).
Examples are not pool items: they are never asked, and a pool item of the same id is
left out of an assessment all the same.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from itempool.errors import PoolFormatError
from itempool.problems import describe_errors

__all__ = ["WorkedExample", "read_worked_examples"]


class WorkedExample(BaseModel):
    """One solved question (module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    scenario: str = ""
    question: str = Field(min_length=1)
    options: dict[str, str] = Field(default_factory=dict)
    answer: str = ""
    worked: str = Field(min_length=1)


def read_worked_examples(path: Path) -> tuple[WorkedExample, ...]:
    """The examples of ``path``, in file order; ``PoolFormatError`` naming the line of
    the first bad one, a repeated id or an unreadable file."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise PoolFormatError(f"{path}: cannot read the worked examples ({exc})") from exc
    examples: list[WorkedExample] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            example = WorkedExample.model_validate(json.loads(line))
        except json.JSONDecodeError as exc:
            raise PoolFormatError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
        except ValidationError as exc:
            raise PoolFormatError(f"{path}:{number}: {describe_errors(exc)}") from exc
        if example.id in seen:
            raise PoolFormatError(f"{path}:{number}: example id {example.id!r} repeats")
        seen.add(example.id)
        examples.append(example)
    if not examples:
        raise PoolFormatError(f"{path}: no worked examples")
    return tuple(examples)
