"""What the parameter files (``params.csv``, ``mirt_params.csv``, the polytomous CSV)
share: reading a CSV into a stripped header and numbered rows with one ``ParamsError``
per problem, and writing a number as a cell (empty when it is not finite)."""

from __future__ import annotations

import csv
import math
from pathlib import Path

from irt.errors import ParamsError


def format_cell(x: float) -> str:
    """``x`` exactly (``repr``), or an empty cell for NaN and infinities."""
    return "" if not math.isfinite(x) else repr(float(x))


def read_table(path: str | Path) -> tuple[Path, list[str], list[tuple[int, list[str]]]]:
    """The file, its header (cells stripped) and its non-empty rows after the header,
    each with its 1-based line number."""
    file = Path(path)
    try:
        with file.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
    except (OSError, UnicodeError) as exc:
        raise ParamsError(f"cannot read {file}: {exc}") from exc
    if not rows:
        raise ParamsError(f"{file.name}: empty file")
    header = [h.strip() for h in rows[0]]
    return file, header, [(n, row) for n, row in enumerate(rows[1:], start=2) if row]
