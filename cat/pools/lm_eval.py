"""lm-evaluation-harness logs as a response matrix.

``import_lm_eval`` reads the per-sample logs lm-eval writes with ``--log_samples``
(``OUTPUT/<model>/samples_<task>_<timestamp>.jsonl``): one subject per model folder, one
item per ``<task>/<doc_id>``, the sample's 0/1 metric as the response. Every line is
checked; the first bad one stops the import with its file and line.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from cat.errors import CatError
from cat.pools.jsonl import read_json_lines
from irt.responses import MISSING, ResponseMatrix
from itempool.formats.responses import write_csv, write_jsonl

_NOT_METRICS = {"doc_id", "target"}


def lm_eval_task(path: Path) -> str:
    """The task of ``samples_<task>_<timestamp>.jsonl`` (task names may hold ``_``)."""
    stem = path.name.removesuffix(".jsonl")
    task = stem.removeprefix("samples_").rpartition("_")[0]
    if not path.name.endswith(".jsonl") or not stem.startswith("samples_") or not task:
        raise CatError(f"{path.name}: not an lm-eval samples file (samples_<task>_<date>.jsonl)")
    return task


def _sample_files(paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(p.rglob("samples_*.jsonl"))
            if not found:
                raise CatError(f"{p}: no samples_*.jsonl files in this folder")
            files.extend(found)
        elif p.is_file():
            files.append(p)
        else:
            raise CatError(f"no such file: {p}")
    return files


def _score(record: dict[str, Any], metric: str, where: str) -> int:
    if metric not in record:
        # lm-eval lists a sample's metrics under "metrics"; older logs do not.
        listed = record.get("metrics")
        present = [str(m) for m in listed] if isinstance(listed, list) else []
        present = present or [
            k for k, v in record.items() if isinstance(v, int | float) and k not in _NOT_METRICS
        ]
        raise CatError(f"{where}: no {metric!r} in the sample; keys present: {', '.join(present)}")
    value = record[metric]
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float) and value in (0, 1):
        return int(value)
    raise CatError(f"{where}: {metric} = {value!r}; only 0/1 scores make a response matrix")


def import_lm_eval(
    paths: list[Path],
    out: Path,
    metric: str = "acc",
    subject: str | None = None,
    *,
    filter_name: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> ResponseMatrix:
    """Build a response matrix from lm-eval ``--log_samples`` files and write it to ``out``.

    lm-eval writes ``OUTPUT/<model>/samples_<task>_<timestamp>.jsonl``; the subject is
    ``subject`` or the file's folder name, the item ``<task>/<doc_id>``, the response the
    sample's ``metric`` (0/1). Folders are searched for samples files. Tasks scored
    under several filters (e.g. gsm8k) log each sample once per filter: choose one with
    ``filter_name``. ``out`` ending in ``.csv``/``.csv.gz`` is written as wide CSV,
    otherwise as JSONL; missing folders of ``out`` are created. ``progress`` is called
    with the number of files read.
    """
    out = Path(out)
    if not out.name.lower().removesuffix(".gz").endswith((".jsonl", ".csv")):
        raise CatError(f"{out.name}: write the responses to a .jsonl or .csv file (or .gz)")
    files = _sample_files(paths)
    if not files:
        raise CatError("no samples files given")
    cells: dict[tuple[str, str], tuple[int, str]] = {}
    subjects: dict[str, None] = {}
    items: dict[str, None] = {}
    for done, path in enumerate(files, start=1):
        task = lm_eval_task(path)
        who = subject or path.resolve().parent.name
        try:
            with path.open(encoding="utf-8") as fh:
                for line_no, record in read_json_lines(path.name, fh):
                    where = f"{path.name}:{line_no}"
                    if not isinstance(record, dict) or not isinstance(record.get("doc_id"), int):
                        raise CatError(f"{where}: not an lm-eval sample (no integer doc_id)")
                    if filter_name is not None and record.get("filter") != filter_name:
                        continue
                    item = f"{task}/{record['doc_id']}"
                    if (who, item) in cells:
                        raise CatError(
                            f"{where}: {who!r} answered {item!r} already at "
                            f"{cells[who, item][1]}{_filter_hint(record, filter_name)}"
                        )
                    cells[who, item] = (_score(record, metric, where), where)
                    subjects.setdefault(who)
                    items.setdefault(item)
        except (OSError, UnicodeError) as exc:
            raise CatError(f"{path.name}: cannot read the file ({exc})") from exc
        if progress is not None:
            progress(done)
    if not cells:
        raise CatError(f"no samples found (filter {filter_name!r})")
    matrix = _matrix(list(subjects), list(items), cells)
    try:  # `--out results/arc.jsonl` before `results/` exists
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CatError(f"cannot create the folder {out.parent} ({exc.strerror or exc})") from exc
    if out.name.lower().removesuffix(".gz").endswith(".csv"):
        write_csv(matrix, out)
    else:
        write_jsonl(matrix, out)
    return matrix


def _filter_hint(record: dict[str, Any], filter_name: str | None) -> str:
    if filter_name is None and "filter" in record:
        return f" (several filters? choose one, e.g. {record['filter']!r})"
    return " (two runs of one task? give one file per run)"


def _matrix(
    subjects: list[str], items: list[str], cells: dict[tuple[str, str], tuple[int, str]]
) -> ResponseMatrix:
    row = {s: k for k, s in enumerate(subjects)}
    col = {i: k for k, i in enumerate(items)}
    values = np.full((len(subjects), len(items)), MISSING, dtype=np.int8)
    for (who, item), (score, _) in cells.items():
        values[row[who], col[item]] = score
    return ResponseMatrix(subject_ids=tuple(subjects), item_ids=tuple(items), values=values)
