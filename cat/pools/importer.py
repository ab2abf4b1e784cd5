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
import json
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from cat.errors import CatError
from cat.pools.lm_eval import import_lm_eval, lm_eval_task
from cat.pools.names import QUESTION_FIELDS
from cat.pools.question_files import read_question_table
from cat.pools.question_shapes import ANSWER_ANY, answer_any, content_id, detect_mapping
from itempool import ITEMS, ITEMS_GZ, MANIFEST, ItemType, PoolItem
from itempool.duplicates import duplicate_groups
from itempool.languages import is_language_code
from itempool.problems import describe_errors

__all__ = [
    "QUESTION_FIELDS",
    "ImportedQuestions",
    "import_lm_eval",
    "import_questions",
    "lm_eval_task",
    "make_folder",
]


_LETTERS = string.ascii_uppercase
_ANSWER_SEPARATORS = str.maketrans("", "", " ,;|/")


def _split(spec: str) -> list[str]:
    return [c.strip() for c in spec.split(",") if c.strip()]


def _known_fields(mapping: dict[str, str]) -> None:
    unknown = sorted(set(mapping) - set(QUESTION_FIELDS))
    if unknown:
        raise CatError(
            f"unknown field {unknown[0]!r} in the mapping; fields: {', '.join(QUESTION_FIELDS)}"
        )


def _check_mapping(mapping: dict[str, str]) -> tuple[set[str], set[str]]:
    """The columns the mapping reads, and those of them that are optional."""
    _known_fields(mapping)
    needed = [f for f in ("question", "options") if f not in mapping]
    if needed:
        raise CatError(
            f"no column found for {' and '.join(needed)}: map it (--map {needed[0]}=COLUMN)"
        )
    keys = [f for f in ("answer", "answer_index", ANSWER_ANY) if f in mapping]
    if len(keys) != 1:
        raise CatError(
            "map exactly one of answer (letters), answer_index (0-based position) and key"
            if keys
            else "no answer column found: map it (--map answer=COLUMN for letters, "
            "--map answer_index=COLUMN for 0-based positions)"
        )
    columns: dict[str, set[str]] = {"required": set(), "optional": set()}
    for ours, spec in mapping.items():
        names = _split(spec) if ours in ("options", "meta") else [spec.strip()]
        if not names or not all(names):
            raise CatError(f"field {ours!r} is mapped to no column")
        kind = "optional" if ours in ("scenario", "type", "meta") else "required"
        columns[kind].update(names)
    return columns["required"] | columns["optional"], columns["optional"] - columns["required"]


def _options(record: dict[str, Any], spec: str) -> tuple[dict[str, str], dict[str, str]]:
    """The options by letter, and the file's own labels of them where it has some
    (ARC's ``choices.label``, "1".."4" as well as "A".."D") -> our letter."""
    columns = _split(spec)
    if len(columns) > 1:
        # Letters follow column positions, so a blank last option does not shift the key.
        cells = [(str(record[c]) if record[c] is not None else "").strip() for c in columns]
        return {_LETTERS[k]: text for k, text in enumerate(cells) if text}, {}
    value = record[columns[0]]
    if isinstance(value, dict) and isinstance(value.get("text"), list):
        # {"text": [...], "label": [...]}: the texts lettered in order, the labels kept.
        texts, labels = value["text"], value.get("label") or []
        if len(texts) > len(_LETTERS):
            raise ValueError(f"{len(texts)} options; at most {len(_LETTERS)} can be lettered")
        options = {_LETTERS[k]: str(text) for k, text in enumerate(texts)}
        return options, {str(label): _LETTERS[k] for k, label in enumerate(labels[: len(texts)])}
    return _listed_options(value, columns[0]), {}


def _listed_options(value: Any, column: str) -> dict[str, str]:
    """Options from one cell: a JSON list (lettered) or object, or its text."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"options column {column!r} is not a JSON list or object ({exc.msg})"
            ) from exc
    if isinstance(value, list | tuple):
        if len(value) > len(_LETTERS):
            raise ValueError(f"{len(value)} options; at most {len(_LETTERS)} can be lettered")
        return {_LETTERS[k]: str(text) for k, text in enumerate(value)}
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items()}
    raise ValueError(f"options column {column!r} holds neither a list nor an object")


def _answer(
    record: dict[str, Any], mapping: dict[str, str], options: dict[str, str], labels: dict[str, str]
) -> str:
    keys = list(options)
    if ANSWER_ANY in mapping:
        value = record[mapping[ANSWER_ANY]]
        if isinstance(value, str) and value.strip() in labels:
            return labels[value.strip()]
        return answer_any(value, options)
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
    options, labels = _options(record, mapping["options"])
    answer = _answer(record, mapping, options, labels)
    kind = _text(record, mapping, "type").lower()
    meta = {c: record[c] for c in _split(mapping.get("meta", ""))}
    question = _text(record, mapping, "question")
    return PoolItem.model_validate(
        {
            "id": _text(record, mapping, "id") or content_id(question, options),
            "scenario": _text(record, mapping, "scenario"),
            "type": kind or (ItemType.MULTI if len(answer) > 1 else ItemType.SINGLE),
            "question": question,
            "options": options,
            "answer": answer,
            "meta": meta,
        }
    )


@dataclass(frozen=True)
class ImportedQuestions:
    """What ``import_questions`` wrote: ``count`` items; the ``mapping`` it read them
    with (``--map`` and the columns found for the rest); whether the ids were made from
    the content (``ids_made``: the file had no id column); the ``duplicates`` (each set
    of ids asking the same question) and how many copies were dropped (``merged``)."""

    count: int
    mapping: dict[str, str]
    ids_made: bool
    duplicates: list[tuple[str, ...]] = field(default_factory=list)
    merged: int = 0


def import_questions(
    path: Path,
    mapping: dict[str, str],
    pool_dir: Path,
    name: str,
    language: str,
    *,
    split: str | None = None,
    merge_duplicates: bool = False,
) -> ImportedQuestions:
    """Make the pool ``pool_dir`` from a file of questions (``cat.pools.question_files``:
    CSV, JSONL, JSON, Parquet, Arrow, a ``save_to_disk`` folder; ``split`` of a dataset
    dict).

    ``mapping`` maps our fields (``QUESTION_FIELDS``) to the file's columns, e.g.
    ``{"id": "question_id", "answer": "answer", "scenario": "category"}``; the fields it
    leaves out are read from the columns the common shapes hold them in
    (``cat.pools.question_shapes``), so MMLU, MMLU-Pro, ARC, CMMLU, MedQA and MedMCQA
    need none. Options are one column with a list (lettered A, B, C, …) or object, or
    several columns ``"opa,opb,opc,opd"`` (A–D). Without an id column each item's id is
    made from its content. Questions the file holds twice (the same text and options)
    are reported, and with ``merge_duplicates`` kept once. Nothing is written unless
    every row is a valid item; an existing pool is never overwritten. ``pool_dir`` is
    created with any missing parents.
    """
    path, pool_dir = Path(path), Path(pool_dir)
    if not isinstance(language, str) or not is_language_code(language):
        raise CatError(
            f"language must be a language code (en, zh, fr, pt-BR, ...), got {language!r}"
        )
    existing = [f for f in (ITEMS, ITEMS_GZ, MANIFEST) if (pool_dir / f).exists()]
    if existing:
        raise CatError(f"{pool_dir} already holds {' and '.join(existing)}; choose a new folder")
    _known_fields(mapping)
    table = read_question_table(path, split)
    mapping = detect_mapping(table.columns, mapping)
    columns, optional = _check_mapping(mapping)
    if table.name.lower().removesuffix(".gz").endswith(".csv"):
        absent = sorted(columns - set(table.columns))
        if absent:
            raise CatError(
                f"{table.name}: no column {absent[0]!r} (columns: {', '.join(table.columns)})"
            )
    items: list[PoolItem] = []
    first: dict[str, str] = {}
    ids_made = "id" not in mapping
    try:
        for where, record in table.rows:
            absent = sorted(columns - optional - set(record))
            if absent:
                raise CatError(
                    f"{table.name}:{where}: no key {absent[0]!r} "
                    f"(keys: {', '.join(map(str, record))})"
                )
            try:
                item = _item({c: record.get(c) for c in columns}, mapping)
            except ValidationError as exc:
                raise CatError(f"{table.name}:{where}: {describe_errors(exc)}") from exc
            except ValueError as exc:
                raise CatError(f"{table.name}:{where}: {exc}") from exc
            if item.id in first:
                if not ids_made:
                    raise CatError(
                        f"{table.name}:{where}: duplicate item id {item.id!r} "
                        f"(first on line {first[item.id]})"
                    )
                # A copy of a question: its made id is its copy's; number it.
                copies = sum(1 for i in first if i == item.id or i.startswith(item.id + "-"))
                item = item.model_copy(update={"id": f"{item.id}-{copies + 1}"})
            first[item.id] = where
            items.append(item)
    except (OSError, EOFError, UnicodeError, csv.Error) as exc:
        raise CatError(f"{table.name}: cannot read the file ({exc})") from exc
    if not items:
        raise CatError(f"{table.name}: no questions")
    duplicates = duplicate_groups(items)
    merged = 0
    if merge_duplicates and duplicates:
        dropped = {copy for group in duplicates for copy in group[1:]}
        items = [item for item in items if item.id not in dropped]
        merged = len(dropped)
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
    return ImportedQuestions(len(items), mapping, ids_made, duplicates, merged)


def make_folder(folder: Path) -> None:
    """Create ``folder`` and any missing parents (``pools/`` of ``pools/mmlu-pro``)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CatError(f"cannot create the folder {folder} ({exc.strerror or exc})") from exc
