"""The item-pool folder (DESIGN.md, "Item pool"): its manifest, its checks, its loader.

A pool is ``pool.json`` (manifest) and ``items.jsonl`` (questions), plus, once
calibrated, ``params.csv`` (item parameters) and ``reference.jsonl`` (the calibration
subjects). ``check_pool`` reads all of it and lists every problem with its file and line,
so that a pool from a stranger can be fixed in one pass; ``load_pool`` refuses a pool
with any problem and returns it ready for the adaptive test.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from cat.errors import CatError
from cat.prediction_errors import PredictionErrors
from irt.errors import IRTError
from irt.models import ItemParams, ModelKind
from irt.params_io import read_params
from synth.items import PoolItem

MANIFEST = "pool.json"
ITEMS = "items.jsonl"
PARAMS = "params.csv"
REFERENCE = "reference.jsonl"

#: Above this, a discrimination is legal but rarely real: a warning, not a problem.
A_SUSPICIOUS = 10.0
#: Beyond ±this, a difficulty lies where no examinee is (θ is in standard units).
B_LIMIT = 10.0
#: A guessing parameter at or above this is legal but no longer guessing: a warning
#: (a 3PL fit of many similar models can put a few items there; ARC's 320 models did).
C_SUSPICIOUS = 0.5


class PoolManifest(BaseModel):
    """``pool.json``. Unknown keys are kept (a pool may carry its own notes); the items,
    by contrast, are strict."""

    model_config = ConfigDict(extra="allow", frozen=True)

    name: str = Field(min_length=1)
    language: Literal["zh", "en"]
    version: str | None = None
    description: str | None = None
    scenarios: tuple[str, ...] = ()
    model: ModelKind | None = None
    calibration: dict[str, Any] | None = None
    generator: Any = None
    seed: int | None = None
    note: str | None = None
    source: str | None = None
    imported: str | None = None
    license: str | None = None
    prediction_errors: PredictionErrors | None = None

    @field_validator("language", mode="before")
    @classmethod
    def _lower_language(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, value: object) -> object:
        # "version": 1 is as clear as "version": "1".
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("scenarios", mode="before")
    @classmethod
    def _scenario_ids(cls, value: object) -> object:
        # Scenarios may be plain ids or objects describing them; only the ids matter here.
        if not isinstance(value, list | tuple):
            return value
        ids: list[object] = []
        for entry in value:
            if isinstance(entry, dict):
                if "id" not in entry:
                    raise ValueError(f"a scenario object needs an 'id': {entry}")
                ids.append(entry["id"])
            else:
                ids.append(entry)
        if len({str(i) for i in ids}) != len(ids):
            raise ValueError("scenario ids repeat")
        return ids


class ReferenceRow(BaseModel):
    """One calibration subject in ``reference.jsonl``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    subject_id: str = Field(min_length=1)
    theta: float
    se: float
    accuracy: float | None = Field(default=None, ge=0.0, le=1.0)
    n_answered: int = Field(ge=0)


@dataclass(frozen=True)
class Problem:
    """Something wrong in a pool file; ``line`` is None when it concerns the whole file.
    A ``warning`` is worth a look but does not stop the pool from loading."""

    file: str
    line: int | None
    message: str
    warning: bool = False

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {'warning: ' if self.warning else ''}{self.message}"


@dataclass(frozen=True)
class LoadedPool:
    """A pool that passed ``check_pool``; ``params`` (if calibrated) follow item order."""

    dir: Path
    manifest: PoolManifest
    items: tuple[PoolItem, ...]
    params: ItemParams | None
    references: list[ReferenceRow]


@dataclass
class _Contents:
    manifest: PoolManifest | None = None
    items: list[PoolItem] | None = None
    item_lines: dict[str, int] | None = None
    references: list[ReferenceRow] | None = None


def check_pool(pool_dir: Path) -> list[Problem]:
    """Every problem of the pool in ``pool_dir``, in file order; empty when it is sound."""
    return _inspect(Path(pool_dir))[1]


def load_pool(pool_dir: Path) -> LoadedPool:
    """Read a pool for use; ``CatError`` naming the first problem if there is any."""
    folder = Path(pool_dir)
    contents, problems = _inspect(folder)
    errors = [p for p in problems if not p.warning]
    if errors:
        count = f"{len(errors)} problem{'s' if len(errors) > 1 else ''}"
        raise CatError(
            f"pool {folder} has {count}; the first: {errors[0]}; run `cat pool validate {folder}`"
        )
    assert contents.manifest is not None and contents.items is not None  # no errors
    params = None
    if (folder / PARAMS).is_file():
        try:
            raw = read_params(folder / PARAMS, contents.manifest.model)
            position = {item_id: j for j, item_id in enumerate(raw.item_ids)}
            params = raw.subset([position[item.id] for item in contents.items])
        except (IRTError, KeyError) as exc:  # check_pool should have caught it
            raise CatError(f"{folder / PARAMS}: {exc}") from exc
    return LoadedPool(
        dir=folder,
        manifest=contents.manifest,
        items=tuple(contents.items),
        params=params,
        references=contents.references or [],
    )


def _inspect(folder: Path) -> tuple[_Contents, list[Problem]]:
    contents = _Contents()
    problems: list[Problem] = []
    if not folder.is_dir():
        return contents, [Problem(str(folder), None, "no such folder")]
    contents.manifest = _check_manifest(folder / MANIFEST, problems)
    scenarios = contents.manifest.scenarios if contents.manifest else ()
    contents.items, contents.item_lines = _check_items(folder / ITEMS, scenarios, problems)
    if (folder / PARAMS).is_file():
        _check_params(folder / PARAMS, contents.item_lines, problems)
    if (folder / REFERENCE).is_file():
        contents.references = _check_references(folder / REFERENCE, problems)
    return contents, problems


def describe_errors(exc: ValidationError) -> str:
    """A pydantic error as one line: ``field: message; field: message``."""
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


def _check_manifest(path: Path, problems: list[Problem]) -> PoolManifest | None:
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


def _read_lines(path: Path, problems: list[Problem]) -> list[str] | None:
    try:
        return path.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeError) as exc:
        problems.append(Problem(path.name, None, f"cannot read it ({exc})"))
        return None


def _check_items(
    path: Path, scenarios: tuple[str, ...], problems: list[Problem]
) -> tuple[list[PoolItem] | None, dict[str, int]]:
    # Ids of malformed items count too: a params row for one is not "unknown".
    lines_of: dict[str, int] = {}
    if not path.is_file():
        problems.append(Problem(ITEMS, None, "missing: a pool needs its questions"))
        return None, lines_of
    lines = _read_lines(path, problems)
    if lines is None:
        return None, lines_of
    items: list[PoolItem] = []
    listed = set(scenarios)
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(Problem(ITEMS, line_no, f"not valid JSON ({exc.msg})"))
            continue
        raw_id = data.get("id") if isinstance(data, dict) else None
        if isinstance(raw_id, str):
            if raw_id in lines_of:
                first = lines_of[raw_id]
                problems.append(
                    Problem(ITEMS, line_no, f"duplicate item id {raw_id!r} (first on line {first})")
                )
                continue
            lines_of[raw_id] = line_no
        try:
            item = PoolItem.model_validate(data)
        except ValidationError as exc:
            problems.append(Problem(ITEMS, line_no, describe_errors(exc)))
            continue
        if listed and item.scenario not in listed:
            problems.append(
                Problem(
                    ITEMS,
                    line_no,
                    f"item {item.id!r}: scenario {item.scenario!r} is not listed in {MANIFEST}",
                )
            )
        items.append(item)
    if not lines_of and not any(p.file == ITEMS for p in problems):
        problems.append(Problem(ITEMS, None, "no items"))
    return items, lines_of


def _number(cell: str, default: float | None) -> float | None:
    """The cell's value, ``default`` if blank; raises ValueError if not a number."""
    text = cell.strip()
    return default if not text else float(text)


def _check_params(path: Path, item_lines: dict[str, int], problems: list[Problem]) -> None:
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            rows = list(numbered_csv_rows(fh))
    except (OSError, UnicodeError, csv.Error) as exc:
        problems.append(Problem(PARAMS, None, f"cannot read it ({exc})"))
        return
    if not rows:
        problems.append(Problem(PARAMS, None, "empty file"))
        return
    header = [h.strip() for h in rows[0][1]]
    missing = [c for c in ("item_id", "a", "b") if c not in header]
    if missing:
        problems.append(Problem(PARAMS, rows[0][0], f"missing column(s) {', '.join(missing)}"))
        return
    col = {name: k for k, name in enumerate(header)}
    seen: dict[str, int] = {}
    for line_no, row in rows[1:]:
        item_id = row[col["item_id"]].strip() if len(row) > col["item_id"] else ""
        if len(row) != len(header):
            problems.append(Problem(PARAMS, line_no, f"{len(row)} cells, expected {len(header)}"))
            seen.setdefault(item_id, line_no)
            continue
        if item_id in seen:
            first = seen[item_id]
            problems.append(
                Problem(
                    PARAMS, line_no, f"duplicate row for item {item_id!r} (first on line {first})"
                )
            )
            continue
        seen[item_id] = line_no
        if item_lines and item_id not in item_lines:
            problems.append(Problem(PARAMS, line_no, f"item {item_id!r} is not in {ITEMS}"))
        problems.extend(Problem(PARAMS, line_no, m, w) for m, w in _row_ranges(row, col))
    for item_id, item_line in item_lines.items():
        if item_id not in seen:
            problems.append(
                Problem(PARAMS, None, f"no row for item {item_id!r} ({ITEMS}:{item_line})")
            )


def numbered_csv_rows(fh: TextIO) -> Iterator[tuple[int, list[str]]]:
    """Each non-blank CSV record with the number of the line it starts on."""
    # Quoted cells may span lines, and the reader's own counter gives the record's end.
    reader = csv.reader(fh)
    start = 1
    for row in reader:
        if row:
            yield start, row
        start = reader.line_num + 1


def _row_ranges(row: list[str], col: dict[str, int]) -> list[tuple[str, bool]]:
    """Messages (and whether each is only a warning) about one params row's values."""
    values: dict[str, float | None] = {}
    out: list[tuple[str, bool]] = []
    defaults = {"a": None, "b": None, "c": 0.0, "d": 1.0, "se_a": None, "se_b": None, "se_c": None}
    for name, default in defaults.items():
        cell = row[col[name]] if name in col else ""
        try:
            values[name] = _number(cell, default)
        except ValueError:
            out.append((f"{name} = {cell.strip()!r} is not a number", False))
    if out:  # ranges of values that are not numbers would only repeat the complaint
        return out
    a, b, c, d = values["a"], values["b"], values["c"], values["d"]
    blank = [name for name in ("a", "b") if values[name] is None]
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
    for name in ("se_a", "se_b", "se_c"):
        se = values[name]
        if se is not None and not se >= 0:
            out.append((f"{name} = {se} must be a non-negative number", False))
    return out


def _check_references(path: Path, problems: list[Problem]) -> list[ReferenceRow] | None:
    lines = _read_lines(path, problems)
    if lines is None:
        return None
    rows: list[ReferenceRow] = []
    seen: dict[str, int] = {}
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            # json.loads, unlike pydantic's parser, reads NaN, which is then reported.
            row = ReferenceRow.model_validate(json.loads(line))
        except json.JSONDecodeError as exc:
            problems.append(Problem(REFERENCE, line_no, f"not valid JSON ({exc.msg})"))
            continue
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
