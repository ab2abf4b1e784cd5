"""Checks of ``params.csv``, row by row, and the one strict reader of it.

``cat pool validate``, ``cat assess`` (through ``itempool.load_pool``) and
``cat simulate --params`` all go through ``check_params``, so a file is judged the same
way whichever command reads it. A pool of scored items (graded, partial-credit,
sequential and binary items mixed) keeps its ``params.csv`` in the layout of
``itempool.formats.polytomous_params`` (``item_id,type,a,d1..dM,c``), told apart by its
second column.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from irt.errors import IRTError, ParamsError
from irt.mixed import MixedParams
from irt.models import ItemParams, ModelKind
from irt.polytomous import ItemType, PolytomousParams
from itempool.checks import MANIFEST, check_manifest
from itempool.errors import PoolFormatError
from itempool.formats.continuous_params import CONTINUOUS_COLUMNS, read_continuous_params
from itempool.formats.params import read_params
from itempool.formats.polytomous_params import read_polytomous_params
from itempool.problems import Problem, numbered_csv_rows

PARAMS = "params.csv"

#: Above this, a discrimination is legal but rarely real: a warning, not a problem.
A_SUSPICIOUS = 10.0
#: Beyond ±this, a difficulty lies where no examinee is (θ is in standard units).
B_LIMIT = 10.0
#: A guessing parameter at or above this is legal but no longer guessing: a warning
#: (a 3PL fit of many similar models can put a few items there; ARC's 320 models did).
C_SUSPICIOUS = 0.5

_SE_COLUMNS = ("se_a", "se_b", "se_c")


def _required_columns(model: ModelKind | None) -> tuple[str, ...]:
    # A 3PL pool without its c column would be read as c = 0 everywhere: numbers that
    # look right and are wrong. The model's own parameters must be in the file.
    if model is None:
        return ("item_id", "a", "b")
    extra = ("c",) if model.has_guessing else ()
    return ("item_id", "a", "b", *extra, *(("d",) if model is ModelKind.FOUR_PL else ()))


def check_params(
    path: Path,
    model: ModelKind | None = None,
    item_lines: dict[str, int] | None = None,
    items_file: str = "items.jsonl",
    max_scores: dict[str, int] | None = None,
) -> list[Problem]:
    """Every problem of a params file. ``model`` (the manifest's) names the columns that
    must be there; ``item_lines`` (item id → line in ``items_file``) the rows that must;
    ``max_scores`` (item id → its top score in ``items_file``) the scores each item's
    model must have: a 0/1 params file holds items scored 0/1 only."""
    name = path.name
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            rows = list(numbered_csv_rows(fh))
    except (OSError, UnicodeError, csv.Error) as exc:
        return [Problem(name, None, f"cannot read it ({exc})")]
    if not rows:
        return [Problem(name, None, "empty file")]
    header = [h.strip() for h in rows[0][1]]
    if header[:2] == list(_SCORED_HEADER):
        return _scored_problems(path, item_lines, items_file, max_scores or {})
    scored = sorted(item for item, top in (max_scores or {}).items() if top > 1)
    if scored:
        return [
            Problem(
                name,
                None,
                f"item {scored[0]!r} scores 0..{(max_scores or {})[scored[0]]} in {items_file}"
                f"{f' (and {len(scored) - 1} more)' if len(scored) > 1 else ''}, but this "
                "file models 0/1 answers: calibrate the pool on scores "
                "(cat calibrate --model graded)",
            )
        ]
    missing = [c for c in _required_columns(model) if c not in header]
    if missing:
        for_model = f" (a {model.value} pool needs them)" if model is not None else ""
        return [Problem(name, rows[0][0], f"missing column(s) {', '.join(missing)}{for_model}")]
    cut = _cut_guessing(header, rows) if model is None else None
    if cut is not None:
        return [Problem(name, rows[0][0], f"missing column(s) c ({cut})")]
    problems: list[Problem] = []
    col = {column: k for k, column in enumerate(header)}
    seen: dict[str, int] = {}
    for line_no, row in rows[1:]:
        item_id = row[col["item_id"]].strip() if len(row) > col["item_id"] else ""
        if len(row) != len(header):
            problems.append(Problem(name, line_no, f"{len(row)} cells, expected {len(header)}"))
            seen.setdefault(item_id, line_no)
            continue
        if item_id in seen:
            first = seen[item_id]
            message = f"duplicate row for item {item_id!r} (first on line {first})"
            problems.append(Problem(name, line_no, message))
            continue
        seen[item_id] = line_no
        if item_lines and item_id not in item_lines:
            problems.append(Problem(name, line_no, f"item {item_id!r} is not in {items_file}"))
        problems.extend(Problem(name, line_no, m, w) for m, w in row_problems(row, col))
    for item_id, item_line in (item_lines or {}).items():
        if item_id not in seen:
            problems.append(
                Problem(name, None, f"no row for item {item_id!r} ({items_file}:{item_line})")
            )
    if len(rows) == 1:
        problems.append(Problem(name, None, "no items"))
    return problems


def _cut_guessing(header: list[str], rows: list[tuple[int, list[str]]]) -> str | None:
    """Why a file with no model to go by lacks its c column, or None if nothing says so.

    Without c a file reads as c = 0 everywhere: numbers that look right and are wrong.
    ``write_params`` puts c beside d in every file, and a se_c with values comes from a
    fit that estimated c; so a file with either and no c had its c column cut away."""
    if "c" in header:
        return None
    if "se_c" in header:
        k = header.index("se_c")
        if any(len(row) > k and row[k].strip() for _, row in rows[1:]):
            return "the file has se_c values, so c was estimated"
    if "d" in header:
        return "a file with d has c beside it: cat calibrate writes both"
    return None


def pool_model(path: Path) -> ModelKind | None:
    """The model of the pool whose folder holds ``path`` (its ``pool.json`` beside it),
    or None when there is no readable manifest there or it names none."""
    manifest = Path(path).parent / MANIFEST
    if not manifest.is_file():
        return None
    found = check_manifest(manifest, [])
    return None if found is None else found.model


#: How a params file of scored items begins.
_SCORED_HEADER = ("item_id", "type")


def _header(path: Path) -> list[str]:
    try:
        with Path(path).open(newline="", encoding="utf-8-sig") as fh:
            return [h.strip() for h in next(csv.reader(fh), [])]
    except (OSError, UnicodeError, csv.Error):
        return []  # the reader that follows says what is wrong


def _continuous_header(header: list[str]) -> bool:
    return tuple(header[: len(CONTINUOUS_COLUMNS)]) == CONTINUOUS_COLUMNS


def is_continuous_params(path: Path) -> bool:
    """Whether ``path`` holds continuous items (``itempool.formats.continuous_params``)."""
    return _continuous_header(_header(path))


def is_scored_params(path: Path) -> bool:
    """Whether ``path`` holds scored items (the ``itempool.formats.polytomous_params`` layout)."""
    header = _header(path)
    return header[:2] == list(_SCORED_HEADER) and not _continuous_header(header)


def _scored_problems(
    path: Path, item_lines: dict[str, int] | None, items_file: str, max_scores: dict[str, int]
) -> list[Problem]:
    """The first problem of a params file of scored items (its reader stops there), or
    the items it lacks or has beyond ``item_lines``."""
    name = path.name
    try:
        params = read_polytomous_params(path)
    except ParamsError as exc:
        text = str(exc)
        match = re.match(rf"{re.escape(name)} line (\d+): (.*)", text, re.DOTALL)
        if match:
            return [Problem(name, int(match.group(1)), match.group(2))]
        return [Problem(name, None, text.removeprefix(f"{name}: "))]
    problems = [
        Problem(
            name,
            None,
            f"item {item!r} has scores 0..{int(top) - 1} here but 0..{max_scores[item]} in "
            f"{items_file}",
        )
        for item, top in zip(params.item_ids, params.n_categories, strict=True)
        if item in max_scores and max_scores[item] != int(top) - 1
    ]
    if not item_lines:
        return problems
    problems += [
        Problem(name, None, f"item {item!r} is not in {items_file}")
        for item in params.item_ids
        if item not in item_lines
    ]
    have = set(params.item_ids)
    problems += [
        Problem(name, None, f"no row for item {item!r} ({items_file}:{line})")
        for item, line in item_lines.items()
        if item not in have
    ]
    return problems


def row_problems(row: list[str], col: dict[str, int]) -> list[tuple[str, bool]]:
    """Messages (and whether each is only a warning) about one params row's values.

    A blank c or d is missing only where the file has that column: a file without it is
    a 1PL/2PL (c = 0) or a 3PL (d = 1) by construction, a blank cell is a hole."""
    values: dict[str, float | None] = {}
    out: list[tuple[str, bool]] = []
    for column in ("a", "b", "c", "d", *_SE_COLUMNS):
        cell = row[col[column]].strip() if column in col else ""
        if not cell:
            values[column] = {"c": 0.0, "d": 1.0}.get(column) if column not in col else None
            continue
        try:
            values[column] = float(cell)
        except ValueError:
            out.append((f"{column} = {cell!r} is not a number", False))
    if out:  # ranges of values that are not numbers would only repeat the complaint
        return out
    a, b, c, d = values["a"], values["b"], values["c"], values["d"]
    blank = [column for column in ("a", "b", "c", "d") if values[column] is None]
    if blank:
        out.append((f"no value for {' and '.join(blank)}", False))
    if a is not None and not (math.isfinite(a) and a > 0):
        out.append((f"a = {a} must be a positive number", False))
    elif a is not None and a > A_SUSPICIOUS:
        out.append((f"a = {a} is unusually large (> {A_SUSPICIOUS:g})", True))
    if b is not None and not (math.isfinite(b) and abs(b) <= B_LIMIT):
        out.append((f"b = {b} is outside [-{B_LIMIT:g}, {B_LIMIT:g}]", False))
    if c is not None and not (0.0 <= c < 1.0):
        out.append((f"c = {c} is outside [0, 1)", False))
    elif c is not None and c >= C_SUSPICIOUS:
        out.append((f"c = {c} is unusually high (>= {C_SUSPICIOUS:g}); see cat pool fit", True))
    if d is not None and c is not None and not (c < d <= 1.0):
        out.append((f"d = {d} is outside (c, 1] with c = {c}", False))
    for column in _SE_COLUMNS:
        se = values[column]
        if se is not None and not se >= 0:
            out.append((f"{column} = {se} must be a non-negative number", False))
    return out


def read_checked_params(path: Path, model: ModelKind | None = None) -> ItemParams:
    """Item parameters from a params file that passes ``check_params``; otherwise
    ``PoolFormatError`` naming the first problem with its file and line."""
    errors = [p for p in check_params(Path(path), model) if not p.warning]
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise PoolFormatError(f"{_where(path, errors[0])}{more}")
    try:
        return read_params(path, model)
    except IRTError as exc:  # check_params should have caught it
        raise PoolFormatError(f"{path}: {exc}") from exc


def _where(path: Path, problem: Problem) -> str:
    """``path:LINE: message``, as ``cat pool validate`` names a problem."""
    line = "" if problem.line is None else f":{problem.line}"
    return f"{path}{line}: {problem.message}"


def read_pool_params(path: Path, model: ModelKind | None = None) -> ItemParams | PolytomousParams:
    """``read_checked_params``, or the scored items of a file in the
    ``itempool.formats.polytomous_params`` layout (``PoolFormatError`` naming its file and line). A
    file in a pool's folder is held to that pool's model (``pool_model``) unless
    ``model`` is given, as ``load_pool`` holds it."""
    if not is_scored_params(path):
        return read_checked_params(path, model or pool_model(path))
    errors = [p for p in check_params(Path(path)) if not p.warning]
    if errors:
        raise PoolFormatError(_where(path, errors[0]))
    return read_polytomous_params(path)


def read_pool_param_files(paths: Sequence[Path]) -> ItemParams | PolytomousParams | MixedParams:
    """The item parameters of one params file (``read_pool_params``, or a continuous
    pool's file), or of two: a 0/1 or scored file and a continuous one, which together
    make a mixed pool (its discrete items first). ``PoolFormatError`` names the file."""
    if not 1 <= len(paths) <= 2:
        raise PoolFormatError(
            f"give one params file, or two (0/1 or scored items, and continuous items); "
            f"got {len(paths)}"
        )
    kinds = {p: is_continuous_params(p) for p in paths}
    continuous = [p for p in paths if kinds[p]]
    discrete = [p for p in paths if not kinds[p]]
    if len(continuous) > 1 or len(discrete) > 1:
        kind = "continuous" if len(continuous) > 1 else "0/1 or scored"
        raise PoolFormatError(
            f"two files of {kind} items ({paths[0].name}, {paths[1].name}); a mixed pool "
            f"is one 0/1 or scored file and one continuous file"
        )
    if not continuous:
        return read_pool_params(discrete[0])
    try:
        cont = read_continuous_params(continuous[0])
    except ParamsError as exc:
        raise PoolFormatError(str(exc)) from exc
    if not discrete:
        return MixedParams(continuous=cont)
    params = read_pool_params(discrete[0])
    scored = params if params.scored else binary_as_scored(params)
    try:
        return MixedParams(discrete=scored, continuous=cont)
    except ParamsError as exc:
        raise PoolFormatError(f"{discrete[0].name} and {continuous[0].name}: {exc}") from exc


def binary_as_scored(params: ItemParams) -> PolytomousParams:
    """0/1 items written as scored ones (2PL or 3PL in slope–intercept form, d = −ab),
    so that they can join continuous items in a mixed pool. An upper asymptote below 1
    (4PL) has no scored form and is refused."""
    if np.any(params.d < 1):
        raise PoolFormatError(
            "4PL items (an upper asymptote below 1) cannot join a mixed pool; calibrate them as 3PL"
        )
    kind = ItemType.THREE_PL if np.any(params.c > 0) else ItemType.TWO_PL
    return PolytomousParams.create(
        kind,
        params.a,
        (-params.a * params.b)[:, None],
        params.c if kind is ItemType.THREE_PL else None,
        item_ids=params.item_ids,
    )


#: A mixed pool's second parameter file: its continuous items
#: (``itempool.formats.continuous_params``).
CONTINUOUS_PARAMS = "continuous_params.csv"


def check_continuous_params(
    path: Path, item_lines: dict[str, int], items_file: str = "items.jsonl"
) -> list[Problem]:
    """The problems of a pool's ``continuous_params.csv``: its first malformed line, or
    the continuous items (``item_lines``: id → line in ``items_file``) it lacks or the
    items it has that are not continuous ones."""
    name = path.name
    try:
        params = read_continuous_params(path)
    except (ParamsError, OSError) as exc:
        text = str(exc)
        match = re.match(rf"{re.escape(name)} line (\d+): (.*)", text, re.DOTALL)
        if match:
            return [Problem(name, int(match.group(1)), match.group(2))]
        return [Problem(name, None, text.removeprefix(f"{name}: "))]
    problems = [
        Problem(name, None, f"item {item!r} is not a continuous item of {items_file}")
        for item in params.item_ids
        if item not in item_lines
    ]
    problems += [
        Problem(name, None, f"no row for continuous item {item!r} ({items_file}:{line})")
        for item, line in item_lines.items()
        if item not in set(params.item_ids)
    ]
    return problems
