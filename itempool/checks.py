"""Checks of ``pool.json``, ``items.jsonl`` (or ``items.jsonl.gz``) and ``reference.jsonl``:
each appends what it finds to a list of ``Problem`` and returns what it could read."""

from __future__ import annotations

import json
import math
from pathlib import Path

from pydantic import ValidationError

from itempool.item_files import ITEMS
from itempool.items import PoolItem
from itempool.manifest import PoolManifest, ReferenceRow
from itempool.problems import Problem, describe_errors, json_lines, read_lines

MANIFEST = "pool.json"
REFERENCE = "reference.jsonl"


def check_manifest(path: Path, problems: list[Problem]) -> PoolManifest | None:
    if not path.is_file():
        problems.append(Problem(MANIFEST, None, "missing: every pool needs a manifest"))
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        problems.append(Problem(MANIFEST, exc.lineno, f"not valid JSON ({exc.msg})"))
        return None
    except (OSError, UnicodeError) as exc:
        problems.append(Problem(MANIFEST, None, f"cannot read it ({exc})"))
        return None
    try:
        return PoolManifest.model_validate(data)
    except ValidationError as exc:
        problems.append(Problem(MANIFEST, None, describe_errors(exc)))
        return None


def check_items(
    path: Path, scenarios: tuple[str, ...], problems: list[Problem]
) -> tuple[list[PoolItem] | None, dict[str, int]]:
    """The items of ``path`` (``items.jsonl`` or ``items.jsonl.gz``; problems name it)
    and each id's line."""
    # Ids of malformed items count too: a params row for one is not "unknown".
    lines_of: dict[str, int] = {}
    name = path.name
    if not path.is_file():
        problems.append(Problem(ITEMS, None, "missing: a pool needs its questions"))
        return None, lines_of
    lines = read_lines(path, problems)
    if lines is None:
        return None, lines_of
    items: list[PoolItem] = []
    listed = set(scenarios)
    for line_no, data, not_json in json_lines(lines):
        if not_json is not None:
            problems.append(Problem(name, line_no, f"not valid JSON ({not_json})"))
            continue
        raw_id = data.get("id") if isinstance(data, dict) else None
        if isinstance(raw_id, str):
            if raw_id in lines_of:
                first = lines_of[raw_id]
                problems.append(
                    Problem(name, line_no, f"duplicate item id {raw_id!r} (first on line {first})")
                )
                continue
            lines_of[raw_id] = line_no
        try:
            item = PoolItem.model_validate(data)
        except ValidationError as exc:
            problems.append(Problem(name, line_no, describe_errors(exc)))
            continue
        if listed and item.scenario not in listed:
            problems.append(
                Problem(
                    name,
                    line_no,
                    f"item {item.id!r}: scenario {item.scenario!r} is not listed in {MANIFEST}",
                )
            )
        items.append(item)
    if not lines_of and not any(p.file == name for p in problems):
        problems.append(Problem(name, None, "no items"))
    return items, lines_of


def check_references(path: Path, problems: list[Problem]) -> list[ReferenceRow] | None:
    lines = read_lines(path, problems)
    if lines is None:
        return None
    rows: list[ReferenceRow] = []
    seen: dict[str, int] = {}
    for line_no, data, not_json in json_lines(lines):
        if not_json is not None:
            problems.append(Problem(REFERENCE, line_no, f"not valid JSON ({not_json})"))
            continue
        try:
            row = ReferenceRow.model_validate(data)
        except ValidationError as exc:
            problems.append(Problem(REFERENCE, line_no, describe_errors(exc)))
            continue
        bad = []
        if not math.isfinite(row.theta):
            bad.append(f"theta = {row.theta} is not finite")
        if not (math.isfinite(row.se) and row.se > 0):
            bad.append(f"se = {row.se} must be a positive number")
        if row.subject_id in seen:
            bad.append(
                f"duplicate subject {row.subject_id!r} (first on line {seen[row.subject_id]})"
            )
        seen.setdefault(row.subject_id, line_no)
        problems.extend(Problem(REFERENCE, line_no, m) for m in bad)
        if not bad:
            rows.append(row)
    return rows
