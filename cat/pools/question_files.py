"""The rows of a benchmark's question file, whatever its format: CSV, JSONL or a JSON
list (each optionally .gz), Parquet, Arrow, a folder of Parquet files (what a Hugging
Face hub download leaves in its cache), or a dataset folder written by ``datasets``'
``save_to_disk`` (one dataset, or a dataset dict whose ``split`` is read).

Parquet and Arrow are read with pyarrow (``pip install pyarrow``), imported only for
them. Every row is a dict of the file's columns, with where it is, for messages as
``FILE:WHERE``: a line number ("12") in a text file, "record 12" in a JSON list, "row 12"
in a table.
"""

from __future__ import annotations

import csv
import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from cat.errors import CatError
from cat.pools.jsonl import read_json_lines
from itempool.problems import numbered_csv_rows

__all__ = ["QuestionTable", "read_question_table"]

_TEXT = (".csv", ".jsonl", ".json")
_ARROW = (".parquet", ".arrow")


@dataclass
class QuestionTable:
    """The file's ``columns`` (in its order) and its ``rows``: (where, record), read as
    they are iterated (a big file is never held whole)."""

    name: str
    columns: list[str]
    rows: Iterator[tuple[str, dict[str, Any]]]


def read_question_table(path: Path, split: str | None = None) -> QuestionTable:
    """The question rows of ``path`` (see the module notes); ``split`` picks one split of
    a dataset dict folder ("test" by default, where it has one)."""
    if path.is_dir():
        return _dataset_folder(path, split)
    if not path.is_file():
        raise CatError(f"no such file: {path}")
    if split is not None:
        raise CatError(f"--split {split}: {path.name} is one file; a split is of a dataset folder")
    name = path.name.lower().removesuffix(".gz")
    if name.endswith(_ARROW):
        return _arrow_table(path.name, [path])
    if not name.endswith(_TEXT):
        raise CatError(
            f"{path.name}: questions must be .csv, .jsonl, .json (optionally .gz), .parquet "
            "or .arrow, or a dataset folder (datasets' save_to_disk, or Parquet files)"
        )
    return _text_table(path, name)


def _open_text(path: Path) -> TextIO:
    if path.name.lower().endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8-sig", newline="")
    return path.open(encoding="utf-8-sig", newline="")


def _text_table(path: Path, name: str) -> QuestionTable:
    """A CSV's header and rows, or JSON records (JSONL, or one list of objects)."""
    try:
        with _open_text(path) as fh:
            if name.endswith(".csv"):
                records = list(_csv_records(path.name, fh))
            elif name.endswith(".jsonl"):
                records = [(str(n), r) for n, r in read_json_lines(path.name, fh)]
            else:
                records = _json_list(path.name, fh)
    except (OSError, EOFError, UnicodeError, csv.Error) as exc:
        raise CatError(f"{path.name}: cannot read the file ({exc})") from exc
    for where, record in records:
        if not isinstance(record, dict):
            raise CatError(f"{path.name}:{where}: expected a JSON object")
    if not records:
        raise CatError(f"{path.name}: no questions")
    columns = list(dict.fromkeys(key for _, record in records[:50] for key in record))
    return QuestionTable(path.name, columns, iter(records))


def _csv_records(name: str, fh: TextIO) -> Iterator[tuple[str, dict[str, Any]]]:
    rows = numbered_csv_rows(fh)
    first = next(rows, None)
    if first is None:
        raise CatError(f"{name}: empty file")
    header = [h.strip() for h in first[1]]
    for line_no, row in rows:
        if len(row) != len(header):
            raise CatError(f"{name}:{line_no}: {len(row)} cells, expected {len(header)}")
        yield str(line_no), dict(zip(header, row, strict=True))


def _json_list(name: str, fh: TextIO) -> list[tuple[str, Any]]:
    try:
        data = json.load(fh)
    except json.JSONDecodeError as exc:
        raise CatError(f"{name}: not JSON ({exc.msg}, line {exc.lineno})") from exc
    if isinstance(data, dict) and len(data) == 1 and isinstance(next(iter(data.values())), list):
        data = next(iter(data.values()))  # {"data": [...]}, {"questions": [...]}
    if not isinstance(data, list):
        raise CatError(f"{name}: expected a list of question objects (or a .jsonl file)")
    return [(f"record {k + 1}", record) for k, record in enumerate(data)]


def _dataset_folder(folder: Path, split: str | None) -> QuestionTable:
    """A ``save_to_disk`` folder (its state.json names its Arrow files), a dataset dict
    of such folders (dataset_dict.json names the splits), or a folder of Parquet files."""
    dict_file = folder / "dataset_dict.json"
    if dict_file.is_file():
        splits = _json_field(dict_file, "splits")
        chosen = split or ("test" if "test" in splits else None)
        if chosen is None or chosen not in splits:
            held = ", ".join(splits)
            raise CatError(
                f"{folder}: no split {split!r}; it holds {held}: give --split NAME"
                if split
                else f"{folder}: a dataset of the splits {held}, none of them test: "
                "give --split NAME"
            )
        return _dataset_folder(folder / chosen, None)
    if split is not None:
        raise CatError(f"--split {split}: {folder} is one dataset, not a dict of splits")
    state = folder / "state.json"
    if state.is_file():
        files = [folder / entry["filename"] for entry in _json_field(state, "_data_files")]
        return _arrow_table(folder.name, files)
    parquet = sorted(folder.rglob("*.parquet"))
    if parquet:
        return _arrow_table(folder.name, parquet)
    raise CatError(
        f"{folder}: not a dataset folder (no state.json or dataset_dict.json of "
        "datasets' save_to_disk, no .parquet files)"
    )


def _json_field(path: Path, field: str) -> Any:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))[field]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CatError(f"{path}: cannot read its {field!r} ({exc})") from exc
    if not isinstance(value, list) or not value:
        raise CatError(f"{path}: {field!r} lists nothing")
    return value


def _arrow_table(name: str, files: list[Path]) -> QuestionTable:
    """Parquet or Arrow (IPC file or stream, as ``save_to_disk`` writes) files, one
    table after the other."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise CatError(
            f"{name}: reading Parquet and Arrow needs pyarrow: pip install pyarrow"
        ) from None
    tables = []
    for file in files:
        try:
            if file.suffix.lower() == ".parquet":
                tables.append(pq.read_table(file))
            else:
                tables.append(_arrow_file(pa, file))
        except (OSError, pa.ArrowException) as exc:
            raise CatError(f"{file.name}: cannot read the file ({exc})") from exc
    columns = list(tables[0].column_names)

    def rows() -> Iterator[tuple[str, dict[str, Any]]]:
        count = 0
        for table in tables:
            for batch in table.to_batches(max_chunksize=2048):
                for record in batch.to_pylist():
                    count += 1
                    yield f"row {count}", record

    return QuestionTable(name, columns, rows())


def _arrow_file(pa: Any, file: Path) -> Any:
    """An Arrow IPC file or stream (``datasets`` writes streams) as one table."""
    with pa.memory_map(str(file)) as source:
        try:
            return pa.ipc.open_file(source).read_all()
        except pa.ArrowInvalid:
            source.seek(0)
            return pa.ipc.open_stream(source).read_all()
