"""Bring outside data in: a benchmark's questions as a pool, lm-eval's logs as responses.

``import_questions`` turns a CSV or JSONL of questions (any column names, mapped to ours)
into a pool folder's ``items.jsonl`` and ``pool.json``. ``import_lm_eval`` turns the
per-sample logs of lm-evaluation-harness (``--log_samples``) into a response matrix.
Both check every row and stop at the first bad one with its file and line.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import gzip
import json
import string
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from pydantic import ValidationError

from cat.errors import CatError
from cat.pool_format import ITEMS, MANIFEST, describe_errors, numbered_csv_rows
from irt.readers import write_csv, write_jsonl
from irt.responses import MISSING, ResponseMatrix
from synth.items import ItemType, PoolItem

#: Our fields that ``import_questions`` can fill from a column, and what each takes.
QUESTION_FIELDS = {
    "id": "the item id",
    "question": "the question text",
    "options": "one column holding a JSON list or object, or several columns: a,b,c,d",
    "answer": "the key as letter(s), e.g. B or BD",
    "answer_index": "the key as a 0-based option position",
    "scenario": "the scenario (content area)",
    "type": "single, multi or order (default: single, or multi for several letters)",
    "meta": "columns copied into the item's meta: a,b",
}
_LETTERS = string.ascii_uppercase
_ANSWER_SEPARATORS = str.maketrans("", "", " ,;|/")
_NOT_METRICS = {"doc_id", "target"}


def _open_text(path: Path) -> TextIO:
    if path.name.lower().endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8-sig", newline="")
    return path.open(encoding="utf-8-sig", newline="")


def _records(
    path: Path, columns: set[str], optional: set[str]
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each question record of a CSV or JSONL file with its line number. A CSV must have
    every mapped column; a JSONL record may lack the ``optional`` ones (read as null)."""
    name = path.name.lower().removesuffix(".gz")
    if not (name.endswith(".csv") or name.endswith(".jsonl")):
        raise CatError(f"{path.name}: questions must be .csv or .jsonl (optionally .gz)")
    with _open_text(path) as fh:
        if name.endswith(".jsonl"):
            for line_no, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise CatError(f"{path.name}:{line_no}: not valid JSON ({exc.msg})") from exc
                if not isinstance(record, dict):
                    raise CatError(f"{path.name}:{line_no}: expected a JSON object")
                absent = sorted(columns - optional - set(record))
                if absent:
                    raise CatError(
                        f"{path.name}:{line_no}: no key {absent[0]!r} "
                        f"(keys: {', '.join(map(str, record))})"
                    )
                yield line_no, {c: record.get(c) for c in columns}
            return
        rows = numbered_csv_rows(fh)
        first = next(rows, None)
        if first is None:
            raise CatError(f"{path.name}: empty file")
        header = [h.strip() for h in first[1]]
        absent = sorted(columns - set(header))
        if absent:
            raise CatError(f"{path.name}: no column {absent[0]!r} (columns: {', '.join(header)})")
        for line_no, row in rows:
            if len(row) != len(header):
                raise CatError(f"{path.name}:{line_no}: {len(row)} cells, expected {len(header)}")
            yield line_no, dict(zip(header, row, strict=True))


def _split(spec: str) -> list[str]:
    return [c.strip() for c in spec.split(",") if c.strip()]


def _check_mapping(mapping: dict[str, str]) -> tuple[set[str], set[str]]:
    """The columns the mapping reads, and those of them that are optional."""
    unknown = sorted(set(mapping) - set(QUESTION_FIELDS))
    if unknown:
        raise CatError(
            f"unknown field {unknown[0]!r} in the mapping; fields: {', '.join(QUESTION_FIELDS)}"
        )
    needed = [f for f in ("id", "question", "options") if f not in mapping]
    if needed:
        raise CatError(f"map the field(s) {', '.join(needed)} to columns (e.g. id=question_id)")
    if ("answer" in mapping) == ("answer_index" in mapping):
        raise CatError("map exactly one of answer (letters) and answer_index (0-based position)")
    columns: dict[str, set[str]] = {"required": set(), "optional": set()}
    for field, spec in mapping.items():
        names = _split(spec) if field in ("options", "meta") else [spec.strip()]
        if not names or not all(names):
            raise CatError(f"field {field!r} is mapped to no column")
        kind = "optional" if field in ("scenario", "type", "meta") else "required"
        columns[kind].update(names)
    return columns["required"] | columns["optional"], columns["optional"] - columns["required"]


def _options(record: dict[str, Any], spec: str) -> dict[str, str]:
    columns = _split(spec)
    if len(columns) > 1:
        # Letters follow column positions, so a blank last option does not shift the key.
        cells = [(str(record[c]) if record[c] is not None else "").strip() for c in columns]
        return {_LETTERS[k]: text for k, text in enumerate(cells) if text}
    value = record[columns[0]]
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"options column {columns[0]!r} is not a JSON list or object ({exc.msg})"
            ) from exc
    if isinstance(value, list):
        if len(value) > len(_LETTERS):
            raise ValueError(f"{len(value)} options; at most {len(_LETTERS)} can be lettered")
        return {_LETTERS[k]: str(text) for k, text in enumerate(value)}
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items()}
    raise ValueError(f"options column {columns[0]!r} holds neither a list nor an object")


def _answer(record: dict[str, Any], mapping: dict[str, str], keys: list[str]) -> str:
    if "answer_index" in mapping:
        value = record[mapping["answer_index"]]
        if isinstance(value, str):
            # "2" and "[0, 2]" from a CSV cell; anything else is reported below.
            with contextlib.suppress(json.JSONDecodeError):
                value = json.loads(value)
        positions = value if isinstance(value, list) else [value]
        if not positions or not all(
            isinstance(p, int) and not isinstance(p, bool) for p in positions
        ):
            raise ValueError(f"answer index {value!r} is not a whole number")
        bad = [p for p in positions if not 0 <= p < len(keys)]
        if bad:
            raise ValueError(f"answer index {bad[0]} is outside 0..{len(keys) - 1}")
        return "".join(keys[p] for p in positions)
    value = record[mapping["answer"]]
    if not isinstance(value, str):
        raise ValueError(
            f"answer {value!r} is not a letter (map a 0-based position with answer_index=COLUMN)"
        )
    letters = value.translate(_ANSWER_SEPARATORS)
    # "b" for option "B": a lower-case key is a typing habit, not a different option.
    if not all(ch in keys for ch in letters) and all(ch.upper() in keys for ch in letters):
        letters = letters.upper()
    return letters


def _text(record: dict[str, Any], mapping: dict[str, str], field: str) -> str:
    """The mapped cell as stripped text; "" for an unmapped field or a null."""
    if field not in mapping:
        return ""
    value = record[mapping[field]]
    return "" if value is None else str(value).strip()


def _item(record: dict[str, Any], mapping: dict[str, str]) -> PoolItem:
    options = _options(record, mapping["options"])
    answer = _answer(record, mapping, list(options))
    kind = _text(record, mapping, "type").lower()
    meta = {c: record[c] for c in _split(mapping.get("meta", ""))}
    return PoolItem.model_validate(
        {
            "id": _text(record, mapping, "id"),
            "scenario": _text(record, mapping, "scenario"),
            "type": kind or (ItemType.MULTI if len(answer) > 1 else ItemType.SINGLE),
            "question": _text(record, mapping, "question"),
            "options": options,
            "answer": answer,
            "meta": meta,
        }
    )


def import_questions(
    path: Path, mapping: dict[str, str], pool_dir: Path, name: str, language: str
) -> int:
    """Make the pool ``pool_dir`` from a CSV or JSONL of questions; return the item count.

    ``mapping`` maps our fields (``QUESTION_FIELDS``) to the file's columns, e.g.
    ``{"id": "question_id", "question": "question", "answer": "answer", "options":
    "options", "scenario": "category"}``. Options are one column with a JSON list
    (lettered A, B, C, …) or object, or several columns ``"opa,opb,opc,opd"`` (A–D).
    Nothing is written unless every row is a valid item; an existing pool is never
    overwritten.
    """
    path, pool_dir = Path(path), Path(pool_dir)
    if language not in ("zh", "en"):
        raise CatError(f"language must be 'zh' or 'en', got {language!r}")
    columns, optional = _check_mapping(mapping)
    existing = [f for f in (ITEMS, MANIFEST) if (pool_dir / f).exists()]
    if existing:
        raise CatError(f"{pool_dir} already holds {' and '.join(existing)}; choose a new folder")
    if not path.is_file():
        raise CatError(f"no such file: {path}")
    items: list[PoolItem] = []
    first_line: dict[str, int] = {}
    try:
        for line_no, record in _records(path, columns, optional):
            try:
                item = _item(record, mapping)
            except ValidationError as exc:
                raise CatError(f"{path.name}:{line_no}: {describe_errors(exc)}") from exc
            except ValueError as exc:
                raise CatError(f"{path.name}:{line_no}: {exc}") from exc
            if item.id in first_line:
                raise CatError(
                    f"{path.name}:{line_no}: duplicate item id {item.id!r} "
                    f"(first on line {first_line[item.id]})"
                )
            first_line[item.id] = line_no
            items.append(item)
    except (OSError, EOFError, UnicodeError, csv.Error) as exc:
        raise CatError(f"{path.name}: cannot read the file ({exc})") from exc
    if not items:
        raise CatError(f"{path.name}: no questions")
    scenarios = list(dict.fromkeys(item.scenario for item in items if item.scenario))
    manifest = {
        "name": name,
        "version": "1",
        "language": language,
        "scenarios": scenarios,
        "source": path.name,
        "imported": dt.datetime.now(dt.UTC).date().isoformat(),
    }
    pool_dir.mkdir(parents=True, exist_ok=True)
    with (pool_dir / ITEMS).open("w", encoding="utf-8") as fh:
        for item in items:
            fh.write(item.model_dump_json() + "\n")
    (pool_dir / MANIFEST).write_text(
        json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return len(items)


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
    otherwise as JSONL. ``progress`` is called with the number of files read.
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
                for line_no, line in enumerate(fh, start=1):
                    if not line.strip():
                        continue
                    where = f"{path.name}:{line_no}"
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise CatError(f"{where}: not valid JSON ({exc.msg})") from exc
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
