"""The leaderboard as a file: JSON (``Leaderboard.model_dump``, keys in
``cat.leaderboards.result``) or CSV, by the file's suffix.

The CSV has one row per leaderboard row, the columns of ``CSV_COLUMNS`` and then one
column ``settings.KEY`` per setting that differs between the runs; a cell is empty where
a value does not apply (a reference's interval, a simulated model's tokens), ``flags``
are joined by "; ", and a setting that is not a string or number is written as JSON.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Literal

from cat.arguments import PathArg, api_errors, as_path
from cat.errors import CatError
from cat.leaderboards.result import Leaderboard

__all__ = ["CSV_COLUMNS", "table_format", "write_leaderboard"]

CSV_COLUMNS = (
    "rank",
    "kind",
    "label",
    "model",
    "accuracy",
    "low",
    "high",
    "true_accuracy",
    "theta",
    "se",
    "p_above_next",
    "n_items",
    "stop_reason",
    "flags",
    "calls",
    "calls_from_store",
    "prompt_tokens",
    "completion_tokens",
    "cost",
    "seed",
    "package_version",
    "source",
)


def table_format(path: PathArg) -> Literal["csv", "json"]:
    """ "csv" or "json" by ``path``'s suffix; ``CatError`` for any other."""
    suffix = as_path(path, "path").suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix == ".json":
        return "json"
    raise CatError(f"{path}: the table is written as .csv or .json, not {suffix or 'no suffix'}")


@api_errors
def write_leaderboard(board: Leaderboard, path: PathArg) -> Path:
    """Write ``board`` to ``path`` as CSV or JSON, by its suffix; return the path."""
    if not isinstance(board, Leaderboard):
        raise CatError(f"board must be a Leaderboard (cat.leaderboard), got {type(board).__name__}")
    out = as_path(path, "path")
    if table_format(out) == "json":
        board.write_json(out)
        return out
    keys = board.differing_settings
    with out.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*CSV_COLUMNS, *(f"settings.{key}" for key in keys)])
        for row in board.rows:
            data = row.model_dump(mode="json")
            own = row.settings or {}
            writer.writerow(
                [_cell(data[column]) for column in CSV_COLUMNS]
                + [_cell(own.get(key)) for key in keys]
            )
    return out


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "; ".join(value)  # flags
    return json.dumps(value, sort_keys=True)
