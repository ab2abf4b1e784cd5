"""Bring outside data in: a benchmark's questions as a pool, lm-eval's logs as responses.

``import_questions`` turns a CSV or JSONL of questions (any column names, mapped to ours)
into a pool folder's ``items.jsonl`` and ``pool.json``. ``import_lm_eval`` (from
``cat.pools.lm_eval``) turns the per-sample logs of lm-evaluation-harness
(``--log_samples``) into a response matrix. Both check every row and stop at the first
bad one with its file and line.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import gzip
import json
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from cat.errors import CatError
from cat.pools.jsonl import read_json_lines
from cat.pools.lm_eval import import_lm_eval, lm_eval_task
from cat.pools.names import QUESTION_FIELDS, Language
from itempool import ITEMS, ITEMS_GZ, MANIFEST, ItemType, PoolItem
from itempool.problems import describe_errors, numbered_csv_rows

__all__ = [
    "QUESTION_FIELDS",
    "Language",
    "import_lm_eval",
    "import_questions",
    "lm_eval_task",
    "make_folder",
]


_LETTERS = string.ascii_uppercase
_ANSWER_SEPARATORS = str.maketrans("", "", " ,;|/")


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
            for line_no, record in read_json_lines(path.name, fh):
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
    path: Path, mapping: dict[str, str], pool_dir: Path, name: str, language: Language | str
) -> int:
    """Make the pool ``pool_dir`` from a CSV or JSONL of questions; return the item count.

    ``mapping`` maps our fields (``QUESTION_FIELDS``) to the file's columns, e.g.
    ``{"id": "question_id", "question": "question", "answer": "answer", "options":
    "options", "scenario": "category"}``. Options are one column with a JSON list
    (lettered A, B, C, …) or object, or several columns ``"opa,opb,opc,opd"`` (A–D).
    Nothing is written unless every row is a valid item; an existing pool is never
    overwritten. ``pool_dir`` is created with any missing parents.
    """
    path, pool_dir = Path(path), Path(pool_dir)
    if language not in tuple(Language):
        raise CatError(f"language must be 'zh' or 'en', got {language!r}")
    language = Language(language)
    columns, optional = _check_mapping(mapping)
    existing = [f for f in (ITEMS, ITEMS_GZ, MANIFEST) if (pool_dir / f).exists()]
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
    make_folder(pool_dir)
    with (pool_dir / ITEMS).open("w", encoding="utf-8") as fh:
        for item in items:
            fh.write(item.model_dump_json() + "\n")
    (pool_dir / MANIFEST).write_text(
        json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return len(items)


def make_folder(folder: Path) -> None:
    """Create ``folder`` and any missing parents (``pools/`` of ``pools/mmlu-pro``)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CatError(f"cannot create the folder {folder} ({exc.strerror or exc})") from exc
