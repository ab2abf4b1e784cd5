"""Read a mixed pool's answers (``irt.mixed``) from one response file: whole scores
0..m for its discrete items and numbers in [0, 1] for its continuous ones, in the JSONL
and wide CSV layouts of ``itempool.formats.responses`` (optionally gzipped).

    {"subject_id": "qwen2.5-7b", "responses": {"calc01": 3, "explain07": 0.62}}

The file alone cannot say which item is which (a similarity of exactly 1 is a whole
number), so the caller names the continuous items and each discrete item's number of
scores, as a pool's ``items.jsonl`` does. Every problem is one ``ResponseDataError``
naming the file and line, and for a bad score the subject and the item.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import ClassVar, Self, TextIO

import numpy as np
from pydantic import model_validator

from irt.continuous_responses import ContinuousResponses
from irt.errors import ResponseDataError
from irt.mixed import MixedResponses
from irt.polytomous_responses import PolytomousResponses
from irt.types import FloatArray
from itempool.formats.responses import read_text_file
from itempool.formats.responses_csv import parse_csv_rows
from itempool.formats.responses_jsonl import (
    ParsedResponses,
    Scale,
    SubjectResponses,
    as_json,
    parse_jsonl_rows,
)
from itempool.formats.scores import ids_only_scale, parse_cell

__all__ = ["read_mixed_responses"]

_PROBLEM = "scores must be numbers 0 or more"


class _NumberResponses(SubjectResponses):
    """One JSONL line of a mixed file: item ids to finite numbers 0 or more (which
    item takes which is checked once the columns are known)."""

    _scale: ClassVar[Scale] = ids_only_scale()

    @model_validator(mode="after")
    def _numbers(self) -> Self:
        for item, answer in self.responses.items():
            if not _is_number(answer):
                raise ValueError(
                    f"score of subject {self.subject_id!r} on item {item!r} is "
                    f"{as_json(answer)}; {_PROBLEM}"
                )
        return self


def _is_number(answer: object) -> bool:
    return (
        isinstance(answer, int | float)
        and not (isinstance(answer, float) and not math.isfinite(answer))
        and answer >= 0
    )


def read_mixed_responses(
    path: str | Path,
    *,
    continuous: Collection[str],
    n_categories: Mapping[str, int],
    id_column: bool = True,
) -> MixedResponses:
    """The answers in ``path`` split into a mixed pool's parts: the items in
    ``continuous`` (scores in [0, 1]) and those in ``n_categories`` (item id → number
    of scores, whole scores 0..count − 1). An item of the file in neither is refused,
    and so is a score off its item's scale.

    Raises:
        ResponseDataError: the file is missing, unreadable or malformed, or a score is
            off its item's scale (one line naming the file and line).
    """
    path = Path(path)
    name = path.name

    def parse(fh: TextIO, suffix: str) -> ParsedResponses:
        if suffix.startswith(".jsonl"):
            return parse_jsonl_rows(fh, name, _NumberResponses, np.float64, np.nan)
        return parse_csv_rows(fh, name, id_column, _csv_row, np.float64)

    parsed = read_text_file(path, parse)
    wanted = set(continuous)
    unknown = [i for i in parsed.item_ids if i not in wanted and i not in n_categories]
    if unknown:
        raise ResponseDataError(
            f"{name}: {len(unknown)} answered item(s) are not in the pool "
            f"(e.g. {', '.join(unknown[:3])})"
        )
    cont_cols = [j for j, item in enumerate(parsed.item_ids) if item in wanted]
    disc_cols = [j for j, item in enumerate(parsed.item_ids) if item not in wanted]
    values = parsed.values
    for j in cont_cols:
        _check_column(parsed, name, j, values[:, j] <= 1, "a continuous item's score is in [0, 1]")
    for j in disc_cols:
        item = parsed.item_ids[j]
        top = n_categories[item] - 1
        column = values[:, j]
        whole = column == np.round(column)
        _check_column(parsed, name, j, whole, f"item {item!r} takes whole scores 0..{top}")
        _check_top(parsed, name, j, top)
    subjects = parsed.subject_ids
    discrete = None
    if disc_cols:
        ids = [parsed.item_ids[j] for j in disc_cols]
        discrete = PolytomousResponses.from_array(
            values[:, disc_cols], subjects, ids, n_categories=[n_categories[i] for i in ids]
        )
    cont = None
    if cont_cols:
        ids = [parsed.item_ids[j] for j in cont_cols]
        cont = ContinuousResponses.from_array(values[:, cont_cols], subjects, ids)
    if discrete is None and cont is None:
        raise ResponseDataError(f"{name}: no answers")
    return MixedResponses(discrete, cont)


def _check_column(parsed: ParsedResponses, name: str, j: int, fine: object, rule: str) -> None:
    column = parsed.values[:, j]
    bad = ~np.asarray(fine) & ~np.isnan(column)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ResponseDataError(
            f"{name} line {parsed.lines[row]}: score of subject {parsed.subject_ids[row]!r} "
            f"on item {parsed.item_ids[j]!r} is {column[row]:g}; {rule}"
        )


def _check_top(parsed: ParsedResponses, name: str, j: int, top: int) -> None:
    """Refuse a score above the top one the pool gives item ``j``, as
    ``itempool.formats.responses.read_scored_responses`` words it."""
    above = np.flatnonzero(parsed.values[:, j] > top)  # NaN (missing) compares False
    if above.size:
        row = int(above[0])
        raise ResponseDataError(
            f"{name} line {parsed.lines[row]}: item {parsed.item_ids[j]!r} allows scores "
            f"0..{top}, got {parsed.values[row, j]:g} (subject {parsed.subject_ids[row]!r})"
        )


def _csv_row(cells: list[str], items: list[str], where: str, sid: str) -> FloatArray:
    scores = []
    for item, cell in zip(items, cells, strict=True):
        score = parse_cell(cell, upper=math.inf)
        if score is None:
            raise ResponseDataError(
                f"{where}: score of subject {sid!r} on item {item!r} is {cell!r}; {_PROBLEM} "
                "(empty, NA or NaN for missing)"
            )
        scores.append(score)
    return np.array(scores, dtype=np.float64)
