"""JSONL response files: one subject a line (used through ``itempool.formats.responses``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple, Protocol, TextIO

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, SkipValidation, ValidationError, field_validator

from irt.errors import ResponseDataError
from irt.responses import MISSING
from irt.types import IntArray

_ANSWER_TYPES = {int, bool}

#: The highest score a file may hold: scores are stored as int16, and an item's number
#: of categories (top score + 1) must fit as well.
MAX_SCORE = int(np.iinfo(np.int16).max) - 1


class ParsedResponses(NamedTuple):
    """What a parser read (shared with ``itempool.formats.responses_csv`` and
    ``itempool.formats.scores``): ``values`` (N, J) of the scale's dtype with its missing
    value for no answer, and the file line of each subject."""

    subject_ids: tuple[str, ...]
    item_ids: tuple[str, ...]
    values: npt.NDArray[Any]
    lines: list[int]


class ResponseTable(Protocol):
    """What the writers need: a binary or a scored response matrix."""

    @property
    def subject_ids(self) -> tuple[str, ...]: ...
    @property
    def item_ids(self) -> tuple[str, ...]: ...
    @property
    def values(self) -> npt.NDArray[np.integer[Any]]: ...


@dataclass(frozen=True)
class Scale:
    """Which answers a line may hold, and how they are stored."""

    dtype: type[np.integer[Any]]
    expected: str  # what an answer is, for the message about a non-object
    # True when every answer is allowed, checked in C: the fast path for a whole line.
    fits: Callable[[Collection[object]], bool]
    # Why one answer is refused (None if it is fine); run only to name the culprit.
    problem: Callable[[object], str | None]


def _binary_fits(answers: Collection[object]) -> bool:
    # Types first: 1.0 == 1 would pass the value test, and a list is unhashable.
    return set(map(type, answers)) <= _ANSWER_TYPES and set(answers) <= {0, 1}


def _binary_problem(answer: object) -> str | None:
    if type(answer) not in _ANSWER_TYPES or answer not in (0, 1):
        return "only 0 or 1 allowed"
    return None


def _scored_fits(answers: Collection[Any]) -> bool:
    if not set(map(type, answers)) <= _ANSWER_TYPES:
        return False
    return not answers or (min(answers) >= 0 and max(answers) <= MAX_SCORE)


def _scored_problem(answer: object) -> str | None:
    if type(answer) is float:
        return "whole numbers only"
    if not isinstance(answer, int):  # null, a string, a list or an object
        return "scores must be whole numbers 0 or more"
    if answer < 0:
        return "scores must be 0 or more (leave the item out when it was not answered)"
    if answer > MAX_SCORE:
        return f"scores above {MAX_SCORE} are not supported"
    return None


BINARY = Scale(np.int8, "0 or 1", _binary_fits, _binary_problem)
SCORED = Scale(np.int16, "score", _scored_fits, _scored_problem)


class SubjectResponses(BaseModel):
    """One line of a JSONL response file.

    ``responses`` maps item ids to 1 (right) or 0 (wrong); JSON ``true``/``false`` are
    taken as 1/0, anything else (``0.5``, ``2``, ``"1"``, ``null``) is refused.
    """

    model_config = ConfigDict(extra="forbid")
    _scale: ClassVar[Scale] = BINARY

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
    def _allowed_answers(cls, value: object) -> object:
        scale = cls._scale
        if not isinstance(value, dict):
            raise ValueError(
                f"responses must be an object of item id -> {scale.expected}, "
                f"got {type(value).__name__}"
            )
        # The scale's check runs in C; the per-item loop below only runs to name the culprit.
        if scale.fits(value.values()):
            if not set(map(type, value)) <= {str}:
                raise ValueError("item ids must be strings")
            if not all(map(str.strip, value)):
                raise ValueError("an item id is empty")
            return value
        for item, answer in value.items():
            problem = scale.problem(answer)
            if problem is not None:
                raise ValueError(f"response to item {item!r} is {as_json(answer)}; {problem}")
        raise AssertionError("unreachable")  # pragma: no cover


class ScoredSubjectResponses(SubjectResponses):
    """One line of a JSONL file of ordered scores: ``responses`` maps item ids to whole
    numbers 0 or more (JSON ``true``/``false`` count as 1/0); ``2.0``, ``-1``, ``null``
    and ``"2"`` are refused."""

    _scale: ClassVar[Scale] = SCORED


def as_json(value: object) -> str:
    # The file's spelling (null, "1") says more than Python's repr (None, '1').
    try:
        return json.dumps(value)
    except (TypeError, ValueError):  # a Python caller passed something JSON cannot hold
        return repr(value)


def parse_jsonl(
    fh: TextIO, name: str, id_column: bool = True, scored: bool = False
) -> ParsedResponses:
    """Parse an open JSONL file of 0/1 answers, or of scores if ``scored``; ``name`` is
    the file name for messages.

    ``id_column`` exists to share the CSV parser's signature and is ignored.
    """
    del id_column
    model = ScoredSubjectResponses if scored else SubjectResponses
    return parse_jsonl_rows(fh, name, model, model._scale.dtype, MISSING)


def parse_jsonl_rows(
    fh: TextIO,
    name: str,
    model: type[SubjectResponses],
    dtype: npt.DTypeLike,
    missing: float,
) -> ParsedResponses:
    """Parse an open JSONL file whose lines ``model`` validates (0/1 answers, scores,
    continuous scores) into values of ``dtype``, ``missing`` where a subject left an
    item out; a repeated subject is refused with the line of its first occurrence."""
    subject_ids: list[str] = []
    first_line: dict[str, int] = {}
    index: dict[str, int] = {}  # item id -> column, in order of first appearance
    rows: list[tuple[IntArray, npt.NDArray[Any]] | None] = []
    prev_keys: list[str] = []
    prev_cols: IntArray = np.empty(0, dtype=np.intp)
    for line_no, line in enumerate(fh, start=1):
        if not line.strip():
            continue
        subject = parse_line(line, name, line_no, model)
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
            prev_cols = columns(keys, index)
            prev_keys = keys
        answers = np.fromiter(subject.responses.values(), dtype=dtype, count=len(keys))
        rows.append((prev_cols, answers))
    values = np.full((len(subject_ids), len(index)), missing, dtype=dtype)
    for r, row in enumerate(rows):
        assert row is not None
        cols, answers = row
        values[r, cols] = answers
        rows[r] = None  # each line's copy goes as the table fills: one table's worth at most
    return ParsedResponses(tuple(subject_ids), tuple(index), values, list(first_line.values()))


def stack_rows(
    rows: list[npt.NDArray[Any] | None], width: int, dtype: npt.DTypeLike
) -> npt.NDArray[Any]:
    """The rows read as one (len(rows), ``width``) table; each row is let go as it is
    copied, so that reading never holds two copies of a large file's answers."""
    values = np.empty((len(rows), width), dtype=dtype)
    for r, row in enumerate(rows):
        values[r] = row
        rows[r] = None
    return values


def write_jsonl_lines(matrix: ResponseTable, fh: TextIO) -> None:
    """Write one line per subject, leaving out the items it did not answer."""
    items = np.array(matrix.item_ids, dtype=object)
    for sid, row in zip(matrix.subject_ids, matrix.values, strict=True):
        seen = row != MISSING
        responses = dict(zip(items[seen].tolist(), row[seen].tolist(), strict=True))
        record = {"subject_id": sid, "responses": responses}
        fh.write(json.dumps(record, ensure_ascii=False) + "\n")


def columns(keys: list[str], index: dict[str, int]) -> IntArray:
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


def parse_line(
    line: str, name: str, line_no: int, model: type[SubjectResponses]
) -> SubjectResponses:
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
        return model.model_validate(obj)
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
