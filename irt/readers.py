"""Read and write response matrices as JSONL or wide CSV, optionally gzipped.

Every problem with a file surfaces as one ``ResponseDataError`` whose one-line message
names the file and, where there is one, the line: the CLI prints it as it is.
"""

from __future__ import annotations

import csv
import gzip
import io
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from irt._csv_format import parse_csv, write_csv_rows
from irt._jsonl_format import SubjectResponses, parse_jsonl, write_jsonl_lines
from irt.errors import ResponseDataError
from irt.responses import ResponseMatrix

__all__ = ["SubjectResponses", "read_responses", "write_csv", "write_jsonl"]

_Parser = Callable[[TextIO, str, bool], ResponseMatrix]

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
    ids, one subject a row, and cells ``0``/``1`` (empty, ``NA`` or ``NaN`` = missing).
    ``id_column`` says whether the first CSV column holds subject ids; without one the
    subjects are named ``s0001``, ``s0002``, ... (JSONL ignores it).

    Raises:
        ResponseDataError: the file is missing, unreadable or malformed.
    """
    path = Path(path)
    suffix = _suffix(path)
    parser, gzipped = _PARSERS[suffix]
    if not path.exists():
        raise ResponseDataError(f"no such file: {path}")
    try:
        with _open_text(path, gzipped, write=False) as fh:
            return parser(fh, path.name, id_column)
    except ResponseDataError:
        raise
    except FileNotFoundError as exc:
        raise ResponseDataError(f"no such file: {path}") from exc
    except _FOREIGN_ERRORS as exc:
        raise ResponseDataError(f"{path.name}: cannot read the file ({_describe(exc)})") from exc


def write_jsonl(matrix: ResponseMatrix, path: str | Path) -> None:
    """Write ``matrix`` as JSONL (gzipped if ``path`` ends in ``.gz``).

    Missing answers are left out, as the format wants. So an item nobody answered is
    lost, and the items come back in the order they first appear line by line, which is
    the matrix's own order whenever the first subject answered everything.

    Raises:
        ResponseDataError: an id cannot be stored, or the file cannot be written.
    """
    _write(matrix, Path(path), write_jsonl_lines)


def write_csv(matrix: ResponseMatrix, path: str | Path) -> None:
    """Write ``matrix`` as wide CSV with a ``subject_id`` column (gzipped if ``.gz``).

    Missing answers become empty cells; ``read_responses`` gives back an equal matrix.

    Raises:
        ResponseDataError: an id cannot be stored, or the file cannot be written.
    """
    _write(matrix, Path(path), write_csv_rows)


def _write(
    matrix: ResponseMatrix, path: Path, writer: Callable[[ResponseMatrix, TextIO], None]
) -> None:
    _check_writable(matrix)
    try:
        with _open_text(path, path.name.lower().endswith(".gz"), write=True) as fh:
            writer(matrix, fh)
    except _FOREIGN_ERRORS as exc:
        raise ResponseDataError(f"{path.name}: cannot write the file ({_describe(exc)})") from exc


def _check_writable(matrix: ResponseMatrix) -> None:
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
