"""Wide CSV response files: a header of item ids, one subject a row (used through
``irt.readers``)."""

from __future__ import annotations

import csv
from typing import TextIO

import numpy as np
import numpy.typing as npt

from irt.errors import ResponseDataError
from irt.responses import MISSING, ResponseMatrix

# The spellings written by us, pandas and R; looked up as they are, which is the fast path.
_CODES: dict[str, int] = {
    "0": 0,
    "1": 1,
    "0.0": 0,
    "1.0": 1,
    "False": 0,
    "True": 1,
    "": MISSING,
    "NA": MISSING,
    "NaN": MISSING,
}
# Tried only for cells the exact table does not know: stray blanks, other letter cases.
_LOOSE_CODES: dict[str, int] = {key.lower(): code for key, code in _CODES.items()}
_TEXT = ("0", "1", "")  # indexed by the stored code; MISSING (-1) picks the last

# The errors for an empty and for a repeated id, by what the id names (``_claim``).
_SUBJECT_ID = (
    "{name} line {at}: the subject id is empty",
    "{name} line {at}: duplicated subject id {key!r} (first on line {first})",
)
_ITEM_ID = (
    "{name} line 1: column {at} has no item id",
    "{name} line 1: duplicated item column {key!r} (columns {first} and {at})",
)


def parse_csv(fh: TextIO, name: str, id_column: bool = True) -> ResponseMatrix:
    """Parse an open wide CSV file; ``name`` is the file name for messages."""
    reader = csv.reader(fh)
    header = next(reader, None)
    if header is None:
        raise ResponseDataError(f"{name}: the file is empty")
    items = _item_ids(header[1:] if id_column else header, name, offset=int(id_column))
    width = len(header)
    subject_ids: list[str] = []
    first_line: dict[str, int] = {}
    rows: list[npt.NDArray[np.int8]] = []
    lookup = _CODES.get
    for row in reader:
        if not row:  # a blank line; csv gives [] for it
            continue
        line = reader.line_num
        if len(row) != width:
            raise ResponseDataError(
                f"{name} line {line}: {len(row)} cells, but the header has {width}"
            )
        if id_column:
            sid = row[0]
            _claim(first_line, sid, line, name, _SUBJECT_ID)
            cells = row[1:]
        else:
            sid = f"s{len(subject_ids) + 1:04d}"
            cells = row
        codes = list(map(lookup, cells))
        if None in codes:
            codes = list(_loose_codes(cells, items, f"{name} line {line}"))
        subject_ids.append(sid)
        rows.append(np.array(codes, dtype=np.int8))
    values = np.array(rows, dtype=np.int8).reshape(len(rows), len(items))
    try:
        return ResponseMatrix(tuple(subject_ids), tuple(items), values)
    except ResponseDataError as exc:
        raise ResponseDataError(f"{name}: {exc}") from exc


def write_csv_rows(matrix: ResponseMatrix, fh: TextIO) -> None:
    """Write the header and one row per subject; missing answers are empty cells."""
    fh.write(",".join(map(_quote, ["subject_id", *matrix.item_ids])) + "\n")
    for sid, row in zip(matrix.subject_ids, matrix.values.tolist(), strict=True):
        fh.write(",".join([_quote(sid), *(_TEXT[code] for code in row)]) + "\n")


def _quote(field: str) -> str:
    # Not csv.writer: with "\n" line ends it leaves a bare "\r" unquoted, which the
    # reader then takes for a line break.
    if any(c in field for c in ',"\r\n'):
        return '"' + field.replace('"', '""') + '"'
    return field


def _item_ids(names: list[str], name: str, offset: int) -> list[str]:
    if not names:
        raise ResponseDataError(f"{name} line 1: the header names no item columns")
    first_column: dict[str, int] = {}
    for k, item in enumerate(names, start=offset + 1):
        _claim(first_column, item, k, name, _ITEM_ID)
    return names


def _claim(seen: dict[str, int], key: str, at: int, name: str, messages: tuple[str, str]) -> None:
    """Record that id ``key`` stands at ``at`` (a line or a column) of file ``name``; an
    empty or repeated id is an error, worded by ``messages`` (see ``_SUBJECT_ID``)."""
    empty, repeated = messages
    if not key.strip():
        raise ResponseDataError(empty.format(name=name, at=at))
    if key in seen:
        raise ResponseDataError(repeated.format(name=name, at=at, key=key, first=seen[key]))
    seen[key] = at


def _loose_codes(cells: list[str], items: list[str], where: str) -> list[int]:
    codes: list[int] = []
    for item, cell in zip(items, cells, strict=True):
        code = _CODES.get(cell)
        if code is None:
            code = _LOOSE_CODES.get(cell.strip().lower())
        if code is None:
            raise ResponseDataError(
                f"{where}, column {item!r}: value {cell!r} is not 0, 1 or empty"
            )
        codes.append(code)
    return codes
