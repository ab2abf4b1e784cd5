"""Wide CSV response files: a header of item ids, one subject a row (used through
``itempool.formats.responses``)."""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import chain
from typing import Any, TextIO

import numpy as np
import numpy.typing as npt

from irt.errors import ResponseDataError
from irt.responses import MISSING
from itempool.formats.responses_jsonl import MAX_SCORE, ParsedResponses, ResponseTable, stack_rows

# The spellings written by us, pandas and R; looked up as they are, which is the fast path.
# NaN is not among them: pandas writes a missing answer as an empty cell and R as NA, so a
# NaN cell is a number some step failed to compute (a grader's 0/0), not an unanswered
# item, and reading it as missing would drop an answer without a word.
_CODES: dict[str, int] = {
    "0": 0,
    "1": 1,
    "0.0": 0,
    "1.0": 1,
    "False": 0,
    "True": 1,
    "": MISSING,
    "NA": MISSING,
}
# Scores as written by us ("2") and by pandas for a column with gaps ("2.0"); larger
# scores go through the loose path, which is slower but finds them all the same.
_SCORE_CODES: dict[str, int] = {
    **_CODES,
    **{text: k for k in range(1000) for text in (str(k), f"{k}.0")},
}
_WHOLE = re.compile(r"([0-9]+)(?:\.0+)?", re.ASCII)


@dataclass(frozen=True)
class Scale:
    """Which cells a row may hold, and how they are stored."""

    dtype: type[np.integer[Any]]
    codes: dict[str, int]  # exact spellings: one dict lookup a cell, the fast path
    loose: Callable[[str], int | None]  # tried for the rest (blanks, letter case, ...)
    expected: str  # what a cell may be, for the message about one that is not


def _lowercase_lookup(codes: dict[str, int]) -> Callable[[str], int | None]:
    table = {key.lower(): code for key, code in codes.items()}
    return lambda cell: table.get(cell.strip().lower())


_loose_binary = _lowercase_lookup(_CODES)


def _loose_score(cell: str) -> int | None:
    code = _loose_binary(cell)
    if code is not None:
        return code
    whole = _WHOLE.fullmatch(cell.strip())
    if whole is None or int(whole[1]) > MAX_SCORE:
        return None
    return int(whole[1])


_NAN_HINT = " (NaN is not read as missing: leave the cell empty or write NA)"

_BINARY = Scale(np.int8, _CODES, _loose_binary, "0, 1 or empty")
_SCORED = Scale(np.int16, _SCORE_CODES, _loose_score, f"a whole number 0..{MAX_SCORE} or empty")

# The errors for an empty and for a repeated id, by what the id names (``claim``).
SUBJECT_ID = (
    "{name} line {at}: the subject id is empty",
    "{name} line {at}: duplicated subject id {key!r} (first on line {first})",
)
_ITEM_ID = (
    "{name} line 1: column {at} has no item id",
    "{name} line 1: duplicated item column {key!r} (columns {first} and {at})",
)


def parse_csv(
    fh: TextIO, name: str, id_column: bool = True, scored: bool = False
) -> ParsedResponses:
    """Parse an open wide CSV file of 0/1 answers, or of scores if ``scored``; ``name``
    is the file name for messages."""
    scale = _SCORED if scored else _BINARY
    lookup = scale.codes.get

    def convert(cells: list[str], items: list[str], where: str, sid: str) -> npt.NDArray[Any]:
        try:  # the exact spellings, straight into the row
            return np.fromiter(map(lookup, cells), dtype=scale.dtype, count=len(cells))
        except TypeError:  # a cell not among them (None): the loose path names it
            return np.array(_loose_codes(cells, items, where, scale), dtype=scale.dtype)

    fast = None if scored else binary_cells
    return parse_csv_rows(fh, name, id_column, convert, scale.dtype, fast)


#: A row's cells as values: (cells, item ids, "FILE line N" for messages, subject id).
RowConverter = Callable[[list[str], list[str], str, str], npt.NDArray[Any]]
#: A row's cells, as the text after the subject id, straight to values; None where the
#: text holds anything but the plainest cells (the row then goes through csv).
FastConverter = Callable[[str, int], npt.NDArray[Any] | None]

_COMMA, _ZERO, _ONE = ord(","), ord("0"), ord("1")


def binary_cells(text: str, n_items: int) -> npt.NDArray[np.int8] | None:
    """The cells of a row of 0, 1 and empty cells, read as bytes by numpy: a 10,000 x
    30,000 file reads in seconds instead of the csv module's quarter of a minute.
    None for any other row (a quote, a space, "1.0", "NA", too few or many cells)."""
    try:
        buf = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    except UnicodeEncodeError:
        return None
    commas = np.flatnonzero(buf == _COMMA)
    if commas.size != n_items - 1:
        return None
    starts = np.empty(n_items, dtype=np.intp)
    starts[0] = 0
    starts[1:] = commas + 1
    ends = np.empty(n_items, dtype=np.intp)
    ends[:-1] = commas
    ends[-1] = buf.size
    length = ends - starts
    if int(length.max()) > 1:
        return None
    given = length == 1
    chars = buf[starts[given]]
    if bool(((chars != _ZERO) & (chars != _ONE)).any()):
        return None
    out = np.full(n_items, MISSING, dtype=np.int8)
    out[given] = chars - _ZERO
    return out


def _records(
    fh: TextIO, line: int, id_column: bool, n_items: int, fast: FastConverter | None
) -> Iterator[tuple[int, list[str] | tuple[str, npt.NDArray[Any]]]]:
    """The records after the header (which ended on line ``line``), each with the line
    it ends on: a row of cells from csv, or (subject id, values) where ``fast`` read the
    line itself. A line with a quote always goes to csv, which may join it with the
    next ones (a quoted cell can hold a line break)."""
    for raw in fh:
        line += 1
        if fast is not None and '"' not in raw:
            text = raw.rstrip("\r\n")
            if not text:
                continue
            comma = text.find(",") if id_column else -1
            if not id_column or comma >= 0:
                values = fast(text[comma + 1 :], n_items)
                if values is not None:
                    yield line, (text[:comma] if id_column else "", values)
                    continue
        reader = csv.reader(chain([raw], fh))
        row = next(reader, [])
        line += reader.line_num - 1
        if row:  # a blank line; csv gives [] for it
            yield line, row


def parse_csv_rows(
    fh: TextIO,
    name: str,
    id_column: bool,
    convert: RowConverter,
    dtype: npt.DTypeLike,
    fast: FastConverter | None = None,
) -> ParsedResponses:
    """Parse an open wide CSV file: the header's item ids and one subject a row, each
    row's cells turned into values of ``dtype`` by ``convert`` (which names a bad cell),
    or by ``fast`` from the line's text where it can. Without ``id_column`` the subjects
    are named ``s0001``, ``s0002``, ..."""
    reader = csv.reader(fh)
    header = next(reader, None)
    if header is None:
        raise ResponseDataError(f"{name}: the file is empty")
    items = header_item_ids(header[1:] if id_column else header, name, offset=int(id_column))
    width = len(header)
    subject_ids: list[str] = []
    lines: list[int] = []
    first_line: dict[str, int] = {}
    rows: list[npt.NDArray[Any] | None] = []
    for line, record in _records(fh, reader.line_num, id_column, len(items), fast):
        values: npt.NDArray[Any] | None = None
        if isinstance(record, tuple):
            given_id, values = record
        elif len(record) != width:
            raise ResponseDataError(
                f"{name} line {line}: {len(record)} cells, but the header has {width}"
            )
        else:
            given_id, cells = (record[0], record[1:]) if id_column else ("", record)
        if id_column:
            sid = given_id
            claim(first_line, sid, line, name, SUBJECT_ID)
        else:
            sid = f"s{len(subject_ids) + 1:04d}"
        subject_ids.append(sid)
        lines.append(line)
        if values is None:
            values = convert(cells, items, f"{name} line {line}", sid)
        rows.append(values)
    values = stack_rows(rows, len(items), dtype)
    return ParsedResponses(tuple(subject_ids), tuple(items), values, lines)


def write_csv_rows(matrix: ResponseTable, fh: TextIO) -> None:
    """Write the header and one row per subject; missing answers are empty cells."""
    # Indexed by the stored code; MISSING (-1) picks the empty cell at the end.
    text = [*map(str, range(int(matrix.values.max(initial=0)) + 1)), ""]
    fh.write(",".join(map(quote, ["subject_id", *matrix.item_ids])) + "\n")
    for sid, row in zip(matrix.subject_ids, matrix.values.tolist(), strict=True):
        fh.write(",".join([quote(sid), *(text[code] for code in row)]) + "\n")


def quote(field: str) -> str:
    # Not csv.writer: with "\n" line ends it leaves a bare "\r" unquoted, which the
    # reader then takes for a line break.
    if any(c in field for c in ',"\r\n'):
        return '"' + field.replace('"', '""') + '"'
    return field


def header_item_ids(names: list[str], name: str, offset: int) -> list[str]:
    if not names:
        raise ResponseDataError(f"{name} line 1: the header names no item columns")
    first_column: dict[str, int] = {}
    for k, item in enumerate(names, start=offset + 1):
        claim(first_column, item, k, name, _ITEM_ID)
    return names


def claim(seen: dict[str, int], key: str, at: int, name: str, messages: tuple[str, str]) -> None:
    """Record that id ``key`` stands at ``at`` (a line or a column) of file ``name``; an
    empty or repeated id is an error, worded by ``messages`` (see ``SUBJECT_ID``)."""
    empty, repeated = messages
    if not key.strip():
        raise ResponseDataError(empty.format(name=name, at=at))
    if key in seen:
        raise ResponseDataError(repeated.format(name=name, at=at, key=key, first=seen[key]))
    seen[key] = at


def _loose_codes(cells: list[str], items: list[str], where: str, scale: Scale) -> list[int]:
    codes: list[int] = []
    for item, cell in zip(items, cells, strict=True):
        code = scale.codes.get(cell)
        if code is None:
            code = scale.loose(cell)
        if code is None:
            raise ResponseDataError(
                f"{where}, column {item!r}: value {cell!r} is not {scale.expected}"
                + (_NAN_HINT if cell.strip().lstrip("+-").lower() == "nan" else "")
            )
        codes.append(code)
    return codes
