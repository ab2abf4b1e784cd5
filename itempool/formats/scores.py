"""Read and write continuous scores in [0, 1] (``irt.continuous_responses``) as the
JSONL and wide CSV response files of ``itempool.formats.responses``, optionally gzipped.

JSONL: one subject a line, a number in [0, 1] per answered item, an unanswered item left
out of its line, as in the 0/1 and scored files:

    {"subject_id": "qwen2.5-7b", "responses": {"q0001": 0.73, "q0002": 0.0}}

Wide CSV: a header ``subject_id,<item ids>``, one subject a row, cells such as ``0.73``;
an empty cell, ``NA`` or ``NaN`` is an unanswered item. Both are written with ``repr``
of each float, so a written file reads back to the very same floats.

The reader is as strict as the others: every problem is one ``ResponseDataError`` whose
one-line message names the file and the line, and for a bad score the subject and the
item. JSON ``null`` (and ``NaN``) are refused rather than read as missing, as the 0/1
and scored readers refuse them: a JSONL file has one spelling of "not answered", the
absent key. ``true``/``false`` count as 1/0 in both layouts (as in the other files), so
any 0/1 response file reads as continuous scores.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection
from pathlib import Path
from typing import Any, ClassVar, Self, TextIO, cast

import numpy as np
from pydantic import model_validator

from irt.continuous_responses import ContinuousResponses
from irt.errors import ResponseDataError
from irt.types import FloatArray
from itempool.formats.responses import read_text_file, write_text_file

# The 0/1 and scored readers' own helpers (private names of the package's private
# modules), reused so that all three kinds of file are checked and worded alike.
from itempool.formats.responses_csv import parse_csv_rows, quote
from itempool.formats.responses_jsonl import (
    ParsedResponses,
    Scale,
    SubjectResponses,
    as_json,
    parse_jsonl_rows,
)

__all__ = [
    "ContinuousSubjectResponses",
    "read_continuous_responses",
    "write_continuous_csv",
    "write_continuous_jsonl",
]

_NUMBER_TYPES = {int, float, bool}

_PROBLEM = "scores must be numbers in [0, 1]"
_LEAVE_OUT = " (leave the item out when it was not answered)"
_CSV_PROBLEM = f"{_PROBLEM} (empty, NA or NaN for missing)"

# CSV cells: the missing spellings of the 0/1 files (any case, blanks around them) and
# the decimal numbers float() reads, without its extras (inf, nan, 1_000).
_MISSING_CELLS = frozenset({"", "na", "nan"})
_BOOLEAN_CELLS = {"true": 1.0, "false": 0.0}
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
# The fast path's spellings: mapped so that float() takes them, checked again after it.
_AS_FLOAT = {"": "nan", "NA": "nan"}
_EXACT_MISSING = frozenset({"", "NA", "NaN"})


def ids_only_scale() -> Scale:
    """A JSONL line's scale that checks its item ids only, leaving the scores to the
    line's own validator (shared with ``itempool.formats.mixed_responses``)."""
    return _IDS_ONLY


def _ids_only(answers: Collection[object]) -> bool:
    del answers
    return True


def _no_problem(answer: object) -> str | None:
    del answer
    return None


# ``SubjectResponses``' own check then sees to the line's item ids only; the scores are
# checked by ``ContinuousSubjectResponses._scores_in_range``, which knows the subject.
# ``dtype`` is not used (this module stores the scores itself) but the field wants one.
_IDS_ONLY = Scale(
    cast("type[np.integer[Any]]", np.float64), "score in [0, 1]", _ids_only, _no_problem
)


class ContinuousSubjectResponses(SubjectResponses):
    """One line of a JSONL file of continuous scores: ``responses`` maps item ids to
    numbers in [0, 1] (JSON ``true``/``false`` count as 1/0). ``null``, ``NaN``,
    ``Infinity``, strings and numbers outside [0, 1] are refused, naming the subject and
    the item: an item not answered is left out of the line."""

    _scale: ClassVar[Scale] = _IDS_ONLY

    @model_validator(mode="after")
    def _scores_in_range(self) -> Self:
        answers = self.responses
        if _all_scores(answers.values()):
            return self
        for item, answer in answers.items():
            problem = _score_problem(answer)
            if problem is not None:
                raise ValueError(
                    f"score of subject {self.subject_id!r} on item {item!r} is "
                    f"{as_json(answer)}; {problem}"
                )
        return self  # numbers of other types (numpy's, from a Python caller) in range


def _all_scores(answers: Collection[object]) -> bool:
    """Whether every answer is a number in [0, 1], checked in C (NaN and ±inf fail)."""
    if not set(map(type, answers)) <= _NUMBER_TYPES:
        return False
    try:
        x = np.fromiter(cast(Collection[float], answers), dtype=np.float64, count=len(answers))
    except OverflowError:  # an integer too large for a float
        return False
    return bool(((x >= 0) & (x <= 1)).all())


def _score_problem(answer: object) -> str | None:
    """Why one JSON answer is refused, None if it is a score."""
    if isinstance(answer, int | float) and 0 <= answer <= 1:
        return None
    if answer is None or (isinstance(answer, float) and math.isnan(answer)):
        return _PROBLEM + _LEAVE_OUT
    return _PROBLEM


def read_continuous_responses(path: str | Path, *, id_column: bool = True) -> ContinuousResponses:
    """Load continuous scores from ``.jsonl``, ``.jsonl.gz``, ``.csv`` or ``.csv.gz``.

    JSONL holds one subject a line, ``{"subject_id": ..., "responses": {item: score}}``,
    scores JSON numbers in [0, 1] (``true``/``false`` = 1/0); an unanswered item is left
    out (``null`` and ``NaN`` are refused); items keep the order in which they first
    appear. Wide CSV has a header row of item ids, one subject a row, and cells that are
    decimal numbers in [0, 1] (``0.73``, ``1``, ``7.3e-1``; ``True``/``False`` = 1/0) or
    empty, ``NA``, ``NaN`` for missing. ``id_column`` says whether the first CSV column
    holds subject ids; without one the subjects are named ``s0001``, ``s0002``, ...
    (JSONL ignores it).

    Raises:
        ResponseDataError: the file is missing, unreadable or malformed: one line naming
            the file, and the line, subject and item of a bad score.
    """
    path = Path(path)

    def parse(fh: TextIO, suffix: str) -> ParsedResponses:
        if suffix.startswith(".jsonl"):
            return _parse_jsonl(fh, path.name)
        return _parse_csv(fh, path.name, id_column)

    parsed = read_text_file(path, parse)
    try:
        return ContinuousResponses(parsed.subject_ids, parsed.item_ids, parsed.values)
    except ResponseDataError as exc:
        raise ResponseDataError(f"{path.name}: {exc}") from exc


def write_continuous_jsonl(responses: ContinuousResponses, path: str | Path) -> None:
    """Write scores as JSONL (gzipped if ``path`` ends in ``.gz``), each as ``repr``
    writes it, so that ``read_continuous_responses`` gives back the same floats.

    Missing answers are left out, as the format wants: an item nobody answered is lost,
    and items come back in the order they first appear line by line.

    Raises:
        ResponseDataError: an id cannot be stored, or the file cannot be written.
    """
    write_text_file(responses, Path(path), _write_jsonl_lines)


def write_continuous_csv(responses: ContinuousResponses, path: str | Path) -> None:
    """Write scores as wide CSV with a ``subject_id`` column (gzipped if ``.gz``), each
    as ``repr`` writes it (the same floats read back); missing answers are empty cells.

    Raises:
        ResponseDataError: an id cannot be stored, or the file cannot be written.
    """
    write_text_file(responses, Path(path), _write_csv_rows)


def _parse_jsonl(fh: TextIO, name: str) -> ParsedResponses:
    return parse_jsonl_rows(fh, name, ContinuousSubjectResponses, np.float64, np.nan)


def _parse_csv(fh: TextIO, name: str, id_column: bool) -> ParsedResponses:
    def convert(cells: list[str], items: list[str], where: str, sid: str) -> FloatArray:
        scores = _fast_scores(cells)
        return _loose_scores(cells, items, where, sid) if scores is None else scores

    return parse_csv_rows(fh, name, id_column, convert, np.float64)


def _fast_scores(cells: list[str]) -> FloatArray | None:
    """The row's scores when every cell is spelled as we, pandas or R write them; None
    sends the row to ``_loose_scores``, which accepts more spellings or names the bad
    cell. float() runs in C here; what it takes beyond decimals (``inf``, ``-nan``,
    ``1_000``) is caught after it."""
    try:
        x = np.fromiter(map(float, map(_AS_FLOAT.get, cells, cells)), np.float64, len(cells))
    except ValueError:
        return None
    missing = np.isnan(x)
    if not (missing | ((x >= 0) & (x <= 1))).all() or "_" in "".join(cells):
        return None
    if missing.any() and not all(cells[k] in _EXACT_MISSING for k in np.flatnonzero(missing)):
        return None
    return x


def _loose_scores(cells: list[str], items: list[str], where: str, sid: str) -> FloatArray:
    scores: list[float] = []
    for item, cell in zip(items, cells, strict=True):
        score = _cell_score(cell)
        if score is None:
            raise ResponseDataError(
                f"{where}: score of subject {sid!r} on item {item!r} is {cell!r}; {_CSV_PROBLEM}"
            )
        scores.append(score)
    return np.array(scores, dtype=np.float64)


def _cell_score(cell: str) -> float | None:
    """One cell's score (NaN for missing), None if it is none."""
    return parse_cell(cell)


def parse_cell(cell: str, upper: float = 1.0) -> float | None:
    """One CSV cell's score in [0, ``upper``] (NaN for missing; shared with
    ``itempool.formats.mixed_responses``), None if it is none."""
    text = cell.strip()
    low = text.lower()
    if low in _MISSING_CELLS:
        return math.nan
    if low in _BOOLEAN_CELLS:
        return _BOOLEAN_CELLS[low]
    if _DECIMAL.fullmatch(text) is None:
        return None
    score = float(text)
    return score if 0 <= score <= upper else None


def _write_jsonl_lines(responses: ContinuousResponses, fh: TextIO) -> None:
    """One line per subject, leaving out the items it did not answer; json writes each
    float as ``repr`` does."""
    items = np.array(responses.item_ids, dtype=object)
    for sid, row in zip(responses.subject_ids, responses.values, strict=True):
        seen = ~np.isnan(row)
        answers = dict(zip(items[seen].tolist(), row[seen].tolist(), strict=True))
        record = {"subject_id": sid, "responses": answers}
        fh.write(json.dumps(record, ensure_ascii=False) + "\n")


def _write_csv_rows(responses: ContinuousResponses, fh: TextIO) -> None:
    """The header and one row per subject: ``repr`` of each score, missing ones empty."""
    fh.write(",".join(map(quote, ["subject_id", *responses.item_ids])) + "\n")
    for sid, row in zip(responses.subject_ids, responses.values.tolist(), strict=True):
        cells = ["" if text == "nan" else text for text in map(repr, row)]
        fh.write(",".join([quote(sid), *cells]) + "\n")
