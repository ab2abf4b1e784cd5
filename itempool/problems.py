"""How the pool checks report what they find: one ``Problem`` per file and line."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from itempool.item_files import read_text


@dataclass(frozen=True)
class Problem:
    """Something wrong in a pool file; ``line`` is None when it concerns the whole file.
    A ``warning`` is worth a look but does not stop the pool from loading."""

    file: str
    line: int | None
    message: str
    warning: bool = False

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {'warning: ' if self.warning else ''}{self.message}"


def describe_errors(exc: ValidationError) -> str:
    """A pydantic error as one line: ``field: message; field: message``."""
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


def numbered_csv_rows(fh: TextIO) -> Iterator[tuple[int, list[str]]]:
    """Each non-blank CSV record with the number of the line it starts on."""
    # Quoted cells may span lines, and the reader's own counter gives the record's end.
    reader = csv.reader(fh)
    start = 1
    for row in reader:
        if row:
            yield start, row
        start = reader.line_num + 1


def split_lines(text: str) -> list[str]:
    """The lines of a JSONL (or CSV) text: split at ``\\n`` only, a ``\\r`` before it
    dropped. ``str.splitlines`` also splits at U+0085, U+2028 and the like, which a JSON
    string may hold unescaped (MMLU-Pro's questions do)."""
    lines = text.split("\n")
    if lines and not lines[-1]:
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def read_lines(path: Path, problems: list[Problem]) -> list[str] | None:
    """The file's lines (``split_lines``; a BOM dropped; gunzipped when its name ends in
    ``.gz``), or None with the reason added to ``problems``."""
    try:
        return split_lines(read_text(path))
    except (OSError, UnicodeError) as exc:
        problems.append(Problem(path.name, None, f"cannot read it ({exc})"))
        return None


def json_lines(lines: Iterable[str]) -> Iterator[tuple[int, Any, str | None]]:
    """For each non-blank line of a JSONL text: its number, its value, and None; or, where
    the line is not JSON, its number, None and the parser's message. (``json.loads``,
    unlike pydantic's parser, reads NaN, which the checks then report.)"""
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield line_no, json.loads(line), None
        except json.JSONDecodeError as exc:
            yield line_no, None, exc.msg
