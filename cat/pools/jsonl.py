"""Reading the JSONL files ``cat`` takes as input (questions, lm-eval samples, item
scenarios, chosen options): each non-blank line's number and value, a line that is not
JSON stopping the command with its file and line."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from cat.errors import CatError
from itempool.problems import json_lines


def read_json_lines(name: str, lines: Iterable[str]) -> Iterator[tuple[int, Any]]:
    """(line number, value) for each non-blank line of the file called ``name``;
    ``CatError`` ``name:LINE: not valid JSON (…)`` at the first line that is not JSON."""
    for line_no, value, not_json in json_lines(lines):
        if not_json is not None:
            raise CatError(f"{name}:{line_no}: not valid JSON ({not_json})")
        yield line_no, value
