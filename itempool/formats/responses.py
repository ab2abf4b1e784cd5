"""Read and write response matrices as JSONL or wide CSV, optionally gzipped.

Every problem with a file surfaces as one ``ResponseDataError`` whose one-line message
names the file and, where there is one, the line: the CLI prints it as it is.
"""

from __future__ import annotations

import csv
import gzip
import io
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol, TextIO, TypeVar

import numpy as np

from irt.errors import ResponseDataError
from irt.polytomous_responses import PolytomousResponses
from irt.responses import ResponseMatrix
from itempool.formats.responses_csv import parse_csv, write_csv_rows
from itempool.formats.responses_jsonl import (
    MAX_SCORE,
    ParsedResponses,
    ScoredSubjectResponses,
    SubjectResponses,
    parse_jsonl,
    write_jsonl_lines,
)

__all__ = [
    "ScoredSubjectResponses",
    "SubjectResponses",
    "read_responses",
    "read_scored_responses",
    "write_csv",
    "write_jsonl",
    "write_scored_csv",
    "write_scored_jsonl",
]

# (file, file name for messages, id_column, scored) -> what the file holds
_Parser = Callable[[TextIO, str, bool, bool], ParsedResponses]
_T = TypeVar("_T")


class _Identified(Protocol):
    """What a writer checks before writing: the ids of a response matrix of any kind."""

    @property
    def subject_ids(self) -> tuple[str, ...]: ...
    @property
    def item_ids(self) -> tuple[str, ...]: ...


_Table = TypeVar("_Table", bound=_Identified)

# Longest suffixes first, so that ".jsonl.gz" is not taken for a plain ".gz".
_PARSERS: dict[str, tuple[_Parser, bool]] = {
    ".jsonl.gz": (parse_jsonl, True),
    ".csv.gz": (parse_csv, True),
    ".jsonl": (parse_jsonl, False),
    ".csv": (parse_csv, False),
}

# What can go wrong below the parsers: the file system, gzip framing, text decoding.
_FOREIGN_ERRORS = (OSError, EOFError, zlib.error, UnicodeError, csv.Error)


def read_responses(path: str | Path, *, id_column: bool = True) -> ResponseMatrix:
    """Load a response matrix from ``.jsonl``, ``.jsonl.gz``, ``.csv`` or ``.csv.gz``.

    JSONL holds one subject a line, ``{"subject_id": ..., "responses": {item: 0|1}}``;
    items keep the order in which they first appear. Wide CSV has a header row of item
    ids, one subject a row, and cells ``0``/``1`` (empty or ``NA`` = missing; ``NaN`` is
    refused, naming its line and column: it is a value some step failed to compute, not
    an unanswered item, and JSONL refuses ``NaN`` and ``"nan"`` alike).
    ``id_column`` says whether the first CSV column holds subject ids; without one the
    subjects are named ``s0001``, ``s0002``, ... (JSONL ignores it).

    Raises:
        ResponseDataError: the file is missing, unreadable or malformed.
    """
    parsed, name = _parse(Path(path), id_column, scored=False)
    try:
        values = np.asarray(parsed.values, dtype=np.int8)  # as stored: no copy
        return ResponseMatrix(parsed.subject_ids, parsed.item_ids, values)
    except ResponseDataError as exc:
        raise ResponseDataError(f"{name}: {exc}") from exc


def read_scored_responses(
    path: str | Path, *, id_column: bool = True, n_categories: Mapping[str, int] | None = None
) -> PolytomousResponses:
    """Load ordered scores 0..m_j from the same files as ``read_responses``.

    JSONL answers are whole numbers 0 or more (``true``/``false`` count as 1/0; ``2.0``,
    negative numbers, ``null`` and strings are refused); CSV cells are whole numbers
    (``2`` or ``2.0``, as pandas writes a column with gaps) or empty or ``NA`` for
    missing (``NaN`` is refused, as in ``read_responses``). A 0/1 file reads as scores
    with two categories an item.

    An item's number of categories is its highest score in the file + 1 (at least 2),
    unless ``n_categories`` (item id -> count) gives it, as it must for an item whose
    top score nobody reached. Every item it names must be in the file.

    Raises:
        ResponseDataError: the file is missing, unreadable or malformed, or a score is
            not below the count ``n_categories`` gives its item (naming file, line,
            subject and item).
    """
    path = Path(path)
    given = _given_categories(n_categories)
    parsed, name = _parse(path, id_column, scored=True)
    counts = _category_counts(parsed, given, name)
    values = np.asarray(parsed.values, dtype=np.int16)  # as stored: no copy
    try:
        return PolytomousResponses(parsed.subject_ids, parsed.item_ids, values, counts)
    except ResponseDataError as exc:
        raise ResponseDataError(f"{name}: {exc}") from exc


def _parse(path: Path, id_column: bool, *, scored: bool) -> tuple[ParsedResponses, str]:
    """What the file holds, and its name for messages."""

    def parse(fh: TextIO, suffix: str) -> ParsedResponses:
        return _PARSERS[suffix][0](fh, path.name, id_column, scored)

    return read_text_file(path, parse), path.name


def read_text_file(path: Path, parse: Callable[[TextIO, str], _T]) -> _T:
    """``parse(text, suffix)`` of the response file ``path`` (shared with
    ``itempool.formats.scores``): ``suffix`` is its type, ``.jsonl``, ``.jsonl.gz``,
    ``.csv`` or ``.csv.gz``, and ``text`` the open file, gunzipped and decoded. A missing
    or unreadable file, broken gzip or text that is not UTF-8 becomes one
    ``ResponseDataError`` naming the file; those ``parse`` raises pass as they are."""
    suffix = _suffix(path)
    gzipped = _PARSERS[suffix][1]
    if not path.exists():
        raise ResponseDataError(f"no such file: {path}")
    try:
        with _open_text(path, gzipped, write=False) as fh:
            return parse(fh, suffix)
    except ResponseDataError:
        raise
    except FileNotFoundError as exc:
        raise ResponseDataError(f"no such file: {path}") from exc
    except _FOREIGN_ERRORS as exc:
        raise ResponseDataError(f"{path.name}: cannot read the file ({_describe(exc)})") from exc


def _given_categories(n_categories: Mapping[str, int] | None) -> dict[str, int]:
    if n_categories is None:
        return {}
    if not isinstance(n_categories, Mapping):
        raise ResponseDataError(
            f"n_categories must map item ids to counts, got {type(n_categories).__name__}"
        )
    for item, count in n_categories.items():
        if not isinstance(count, int | np.integer) or isinstance(count, bool):
            raise ResponseDataError(
                f"n_categories of item {item!r} is {count!r}, not a whole number"
            )
        if not 2 <= count <= MAX_SCORE + 1:
            raise ResponseDataError(
                f"n_categories of item {item!r} is {count}; it must be 2..{MAX_SCORE + 1}"
            )
    return {item: int(count) for item, count in n_categories.items()}


def _category_counts(parsed: ParsedResponses, given: dict[str, int], name: str) -> tuple[int, ...]:
    """Each item's number of categories, given or read off the data; () leaves them to
    ``PolytomousResponses``. A score at or above its given count names its line: where
    a pool or params file states an item's scores, a score beyond them is a grading
    error, not a category the data found."""
    if not given:
        return ()
    items = parsed.item_ids
    column = {item: j for j, item in enumerate(items)}
    unknown = given.keys() - column.keys()
    if unknown:
        raise ResponseDataError(
            f"{name}: n_categories names item {min(unknown)!r}, which the file does not hold"
        )
    values = parsed.values
    counts = np.maximum(values.max(axis=0, initial=0).astype(np.int_) + 1, 2)
    for item, count in given.items():
        counts[column[item]] = count
    bad = values >= counts
    if bad.any():
        r, j = (int(k) for k in np.argwhere(bad)[0])
        raise ResponseDataError(
            f"{name} line {parsed.lines[r]}: item {items[j]!r} allows scores "
            f"0..{counts[j] - 1}, got {int(values[r, j])} (subject {parsed.subject_ids[r]!r})"
        )
    return tuple(int(k) for k in counts)


def write_jsonl(matrix: ResponseMatrix, path: str | Path) -> None:
    """Write ``matrix`` as JSONL (gzipped if ``path`` ends in ``.gz``).

    Missing answers are left out, as the format wants. So an item nobody answered is
    lost, and the items come back in the order they first appear line by line, which is
    the matrix's own order whenever the first subject answered everything.

    Raises:
        ResponseDataError: an id cannot be stored, or the file cannot be written.
    """
    write_text_file(matrix, Path(path), write_jsonl_lines)


def write_csv(matrix: ResponseMatrix, path: str | Path) -> None:
    """Write ``matrix`` as wide CSV with a ``subject_id`` column (gzipped if ``.gz``).

    Missing answers become empty cells; ``read_responses`` gives back an equal matrix.

    Raises:
        ResponseDataError: an id cannot be stored, or the file cannot be written.
    """
    write_text_file(matrix, Path(path), write_csv_rows)


def write_scored_jsonl(responses: PolytomousResponses, path: str | Path) -> None:
    """Write scores as JSONL (gzipped if ``path`` ends in ``.gz``), as ``write_jsonl``
    does answers: unanswered items are left out of a line.

    The numbers of categories are not stored: ``read_scored_responses`` reads each item's
    off its highest score unless given ``n_categories``.

    Raises:
        ResponseDataError: an id cannot be stored, or the file cannot be written.
    """
    write_text_file(responses, Path(path), write_jsonl_lines)


def write_scored_csv(responses: PolytomousResponses, path: str | Path) -> None:
    """Write scores as wide CSV with a ``subject_id`` column (gzipped if ``.gz``);
    missing answers become empty cells. The numbers of categories are not stored (see
    ``write_scored_jsonl``).

    Raises:
        ResponseDataError: an id cannot be stored, or the file cannot be written.
    """
    write_text_file(responses, Path(path), write_csv_rows)


def write_text_file(matrix: _Table, path: Path, writer: Callable[[_Table, TextIO], None]) -> None:
    """``writer(matrix, text)`` into ``path`` opened as text, gzipped if it ends in
    ``.gz`` (shared with ``itempool.formats.scores``), after refusing blank ids."""
    _check_writable(matrix)
    try:
        with _open_text(path, path.name.lower().endswith(".gz"), write=True) as fh:
            writer(matrix, fh)
    except _FOREIGN_ERRORS as exc:
        raise ResponseDataError(f"{path.name}: cannot write the file ({_describe(exc)})") from exc


def _check_writable(matrix: _Identified) -> None:
    # The readers reject blank ids, so writing one would produce a file we cannot read.
    for kind, ids in (("subject", matrix.subject_ids), ("item", matrix.item_ids)):
        for x in ids:
            if not x.strip():
                raise ResponseDataError(f"cannot write a blank {kind} id {x!r}")


def _suffix(path: Path) -> str:
    name = path.name.lower()
    for suffix in _PARSERS:
        if name.endswith(suffix):
            return suffix
    accepted = ", ".join(sorted(_PARSERS, key=len))
    raise ResponseDataError(
        f"{path.name}: unknown response file type; accepted suffixes are {accepted}"
    )


@contextmanager
def _open_text(path: Path, gzipped: bool, *, write: bool) -> Iterator[TextIO]:
    # newline="" lets the csv module see quoted line breaks; utf-8-sig drops the BOM that
    # spreadsheet programs put in front of CSV files.
    encoding = "utf-8" if write else "utf-8-sig"
    if not gzipped:
        with open(path, "w" if write else "r", encoding=encoding, newline="") as fh:
            yield fh
        return
    # mtime=0 keeps the bytes of a written file reproducible, so outputs diff cleanly.
    with (
        gzip.GzipFile(path, "wb" if write else "rb", mtime=0) as raw,
        io.TextIOWrapper(raw, encoding=encoding, newline="") as fh,
    ):
        yield fh


def _describe(exc: BaseException) -> str:
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return " ".join(f"{type(exc).__name__}: {text}".split())
