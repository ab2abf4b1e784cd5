"""JSONL response files: one subject a line (used through ``irt.readers``)."""

from __future__ import annotations

import json
from typing import Any, TextIO

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, SkipValidation, ValidationError, field_validator

from irt.errors import ResponseDataError
from irt.responses import MISSING, ResponseMatrix
from irt.types import IntArray

_ANSWER_TYPES = {int, bool}


class SubjectResponses(BaseModel):
    """One line of a JSONL response file.

    ``responses`` maps item ids to 1 (right) or 0 (wrong); JSON ``true``/``false`` are
    taken as 1/0, anything else (``0.5``, ``2``, ``"1"``, ``null``) is refused.
    """

    model_config = ConfigDict(extra="forbid")

    subject_id: str
    # The validator below has checked every value already; letting pydantic check them
    # again would copy a dict of 10,000+ entries per line for nothing.
    responses: SkipValidation[dict[str, int]]

    @field_validator("subject_id", mode="before")
    @classmethod
    def _non_blank_id(cls, value: object) -> object:
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"subject_id must be a non-empty string, got {value!r}")
        return value

    @field_validator("responses", mode="before")
    @classmethod
    def _zero_or_one(cls, value: object) -> object:
        if not isinstance(value, dict):
            raise ValueError(
                f"responses must be an object of item id -> 0 or 1, got {type(value).__name__}"
            )
        answers = value.values()
        # Set comparisons run in C; the per-item loop below only runs to name the culprit.
        # Types first: 1.0 == 1 would pass the value test, and a list is unhashable.
        if set(map(type, answers)) <= _ANSWER_TYPES and set(answers) <= {0, 1}:
            if not set(map(type, value)) <= {str}:
                raise ValueError("item ids must be strings")
            if not all(map(str.strip, value)):
                raise ValueError("an item id is empty")
            return value
        for item, answer in value.items():
            if type(answer) not in _ANSWER_TYPES or answer not in (0, 1):
                raise ValueError(
                    f"response to item {item!r} is {_as_json(answer)}; only 0 or 1 allowed"
                )
        raise AssertionError("unreachable")  # pragma: no cover


def _as_json(value: object) -> str:
    # The file's spelling (null, "1") says more than Python's repr (None, '1').
    try:
        return json.dumps(value)
    except (TypeError, ValueError):  # a Python caller passed something JSON cannot hold
        return repr(value)


def parse_jsonl(fh: TextIO, name: str, id_column: bool = True) -> ResponseMatrix:
    """Parse an open JSONL file; ``name`` is the file name for messages.

    ``id_column`` exists to share the CSV parser's signature and is ignored.
    """
    del id_column
    subject_ids: list[str] = []
    first_line: dict[str, int] = {}
    index: dict[str, int] = {}  # item id -> column, in order of first appearance
    rows: list[tuple[IntArray, npt.NDArray[np.int8]]] = []
    prev_keys: list[str] = []
    prev_cols: IntArray = np.empty(0, dtype=np.intp)
    for line_no, line in enumerate(fh, start=1):
        if not line.strip():
            continue
        subject = _parse_line(line, name, line_no)
        sid = subject.subject_id
        if sid in first_line:
            raise ResponseDataError(
                f"{name} line {line_no}: duplicated subject id {sid!r} "
                f"(first on line {first_line[sid]})"
            )
        first_line[sid] = line_no
        subject_ids.append(sid)
        keys = list(subject.responses)
        # Subjects usually share one item list; reusing its columns skips the dict lookups.
        if keys != prev_keys:
            prev_cols = _columns(keys, index)
            prev_keys = keys
        answers = np.fromiter(subject.responses.values(), dtype=np.int8, count=len(keys))
        rows.append((prev_cols, answers))
    values = np.full((len(subject_ids), len(index)), MISSING, dtype=np.int8)
    for r, (cols, answers) in enumerate(rows):
        values[r, cols] = answers
    try:
        return ResponseMatrix(tuple(subject_ids), tuple(index), values)
    except ResponseDataError as exc:
        raise ResponseDataError(f"{name}: {exc}") from exc


def write_jsonl_lines(matrix: ResponseMatrix, fh: TextIO) -> None:
    """Write one line per subject, leaving out the items it did not answer."""
    items = np.array(matrix.item_ids, dtype=object)
    for sid, row in zip(matrix.subject_ids, matrix.values, strict=True):
        seen = row != MISSING
        responses = dict(zip(items[seen].tolist(), row[seen].tolist(), strict=True))
        record = {"subject_id": sid, "responses": responses}
        fh.write(json.dumps(record, ensure_ascii=False) + "\n")


def _columns(keys: list[str], index: dict[str, int]) -> IntArray:
    """Columns of ``keys``, adding unseen items to ``index`` at the end."""
    cols = list(map(index.get, keys))  # C speed for the usual case: all seen before
    if None in cols:
        cols = [index.setdefault(k, len(index)) for k in keys]
    return np.array(cols, dtype=np.intp)


class _DuplicateKeyError(ValueError):
    """A JSON object repeats a key (``json`` would silently keep the last value)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKeyError(key)
            seen.add(key)
    return obj


def _parse_line(line: str, name: str, line_no: int) -> SubjectResponses:
    where = f"{name} line {line_no}"
    try:
        obj = json.loads(line, object_pairs_hook=_unique_keys)
    except _DuplicateKeyError as exc:
        raise ResponseDataError(f"{where}: key {exc.args[0]!r} appears twice") from exc
    except json.JSONDecodeError as exc:
        raise ResponseDataError(f"{where}: not valid JSON ({exc.msg})") from exc
    except (ValueError, RecursionError) as exc:  # e.g. a number too long to convert
        raise ResponseDataError(f"{where}: not valid JSON ({exc})") from exc
    if not isinstance(obj, dict):
        raise ResponseDataError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    try:
        return SubjectResponses.model_validate(obj)
    except ValidationError as exc:
        raise ResponseDataError(f"{where}: {_first_error(exc)}") from exc


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(part) for part in err["loc"])
    if err["type"] == "value_error":
        return str(err["ctx"]["error"])
    if err["type"] == "extra_forbidden":
        return f"unexpected key {loc!r} (allowed: subject_id, responses)"
    if err["type"] == "missing":
        return f"missing key {loc!r}"
    return f"{loc}: {err['msg']}"
