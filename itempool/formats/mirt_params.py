"""``mirt_params.csv``: a multidimensional model's items, in one of two layouts.

- Bifactor: ``item_id,factor,a_general,a_specific,d,c`` — ``factor`` names the item's
  specific factor (empty: general only), ``c`` is empty in the 2PL.
- Any other structure: ``item_id,a1,…,aK,d,c`` — one slope per factor in the order of
  the factors' names, which (with their correlation matrix) the pool's ``pool.json``
  records; an empty slope cell is a slope fixed at 0 (outside the loading pattern).

Standard errors, when estimated, follow as ``se_`` columns of the same names.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from irt.errors import ParamsError
from irt.mirt_model import GENERAL_FACTOR as GENERAL
from irt.mirt_model import MirtParams, Structure
from irt.types import FloatArray
from itempool.atomic import atomic_text_file
from itempool.formats.table import format_cell, read_table

BIFACTOR_COLUMNS = ("item_id", "factor", "a_general", "a_specific", "d", "c")


def write_mirt_params(
    params: MirtParams, path: str | Path, se: dict[str, FloatArray] | None = None
) -> None:
    """Write ``params`` (bifactor layout for a bifactor model); ``se`` maps column names
    (``a_general``, ``a1``, ``d``, ...) to standard errors, written as ``se_<name>``."""
    columns, rows = _columns(params)
    se = se or {}
    extra = [name for name in columns if name in se]
    with atomic_text_file(Path(path)) as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["item_id", *columns, *(f"se_{name}" for name in extra)])
        for j, item in enumerate(params.item_ids):
            cells = [rows[name][j] for name in columns]
            writer.writerow([item, *cells, *(format_cell(float(se[name][j])) for name in extra)])


def _columns(params: MirtParams) -> tuple[list[str], dict[str, list[str]]]:
    n = params.n_items
    c = [format_cell(float(x)) for x in params.c] if params.c is not None else [""] * n
    d = [format_cell(float(x)) for x in params.d]
    if params.structure is Structure.BIFACTOR:
        specific = params.slopes[:, 1:]
        loaded = params.pattern[:, 1:]
        factor, a_s = [], []
        for j in range(n):
            k = np.flatnonzero(loaded[j])
            factor.append(params.factors[1 + int(k[0])] if k.size else "")
            a_s.append(format_cell(float(specific[j, k[0]])) if k.size else "")
        a_g = [format_cell(float(x)) for x in params.slopes[:, 0]]
        return list(BIFACTOR_COLUMNS[1:]), {
            "factor": factor,
            "a_general": a_g,
            "a_specific": a_s,
            "d": d,
            "c": c,
        }
    names = [f"a{k + 1}" for k in range(params.n_factors)]
    out = {
        name: [
            format_cell(float(params.slopes[j, k])) if params.pattern[j, k] else ""
            for j in range(n)
        ]
        for k, name in enumerate(names)
    }
    return [*names, "d", "c"], {**out, "d": d, "c": c}


def read_mirt_params(
    path: str | Path,
    factors: Sequence[str] | None = None,
    correlation: FloatArray | None = None,
    structure: Structure | str | None = None,
) -> MirtParams:
    """Read ``mirt_params.csv``. The bifactor layout names its own factors (general
    first, then the specific factors in order of first appearance) and has an identity
    correlation; the ``a1..aK`` layout takes ``factors`` and ``correlation`` (default
    F1..FK, identity) and ``structure`` (default confirmatory) from the caller."""
    file, header, body = read_table(path)
    for line_no, row in body:
        if len(row) != len(header):
            raise ParamsError(
                f"{file.name} line {line_no}: {len(row)} cells, expected {len(header)}"
            )
    if not body:
        raise ParamsError(f"{file.name}: no items")
    if "item_id" not in header or "d" not in header:
        raise ParamsError(f"{file.name}: needs columns item_id and d")
    if "a_general" in header:
        return _read_bifactor(file, header, body)
    return _read_slopes(file, header, body, factors, correlation, structure)


def _number(file: Path, line_no: int, name: str, cell: str, empty: float) -> float:
    text = cell.strip()
    if not text:
        return empty
    try:
        value = float(text)
    except ValueError:
        raise ParamsError(
            f"{file.name} line {line_no}, column {name!r}: {text!r} is not a number"
        ) from None
    if not math.isfinite(value):
        raise ParamsError(f"{file.name} line {line_no}, column {name!r}: {text!r} is not finite")
    return value


def _guessing(
    file: Path, header: list[str], body: list[tuple[int, list[str]]]
) -> FloatArray | None:
    if "c" not in header:
        return None
    col = header.index("c")
    cells = [row[col].strip() for _, row in body]
    if all(not cell for cell in cells):
        return None
    values = []
    for (line_no, row), cell in zip(body, cells, strict=True):
        if not cell:
            raise ParamsError(f"{file.name} line {line_no}: empty c where other items have one")
        value = _number(file, line_no, "c", row[col], math.nan)
        if not 0.0 <= value < 1.0:
            raise ParamsError(f"{file.name} line {line_no}: c = {value} is outside [0, 1)")
        values.append(value)
    return np.asarray(values)


def _read_bifactor(file: Path, header: list[str], body: list[tuple[int, list[str]]]) -> MirtParams:
    missing = [c for c in BIFACTOR_COLUMNS[:-1] if c not in header]
    if missing:
        raise ParamsError(f"{file.name}: missing column(s) {', '.join(missing)}")
    col = {name: header.index(name) for name in header}
    groups: dict[str, int] = {}
    ids, a_g, a_s, d, group = [], [], [], [], []
    for line_no, row in body:
        ids.append(row[col["item_id"]].strip())
        name = row[col["factor"]].strip()
        if name == GENERAL:
            raise ParamsError(
                f"{file.name} line {line_no}: a specific factor cannot be named {GENERAL!r}"
            )
        a_g.append(_number(file, line_no, "a_general", row[col["a_general"]], math.nan))
        d.append(_number(file, line_no, "d", row[col["d"]], math.nan))
        if not math.isfinite(a_g[-1]) or not math.isfinite(d[-1]):
            raise ParamsError(f"{file.name} line {line_no}: a_general and d need values")
        if name:
            group.append(groups.setdefault(name, len(groups)))
            a_s.append(_number(file, line_no, "a_specific", row[col["a_specific"]], math.nan))
            if not math.isfinite(a_s[-1]):
                raise ParamsError(
                    f"{file.name} line {line_no}: a_specific needs a value for factor {name!r}"
                )
        else:
            group.append(-1)
            a_s.append(0.0)
    _unique(file, ids)
    k = len(groups)
    slopes = np.zeros((len(ids), 1 + k))
    pattern = np.zeros((len(ids), 1 + k), dtype=bool)
    slopes[:, 0], pattern[:, 0] = a_g, True
    codes = np.asarray(group)
    loaded = np.flatnonzero(codes >= 0)
    slopes[loaded, 1 + codes[loaded]] = np.asarray(a_s)[loaded]
    pattern[loaded, 1 + codes[loaded]] = True
    return MirtParams(
        item_ids=tuple(ids),
        slopes=slopes,
        d=np.asarray(d),
        factors=(GENERAL, *groups),
        correlation=np.eye(1 + k),
        pattern=pattern,
        structure=Structure.BIFACTOR,
        c=_guessing(file, header, body),
    )


def _read_slopes(
    file: Path,
    header: list[str],
    body: list[tuple[int, list[str]]],
    factors: Sequence[str] | None,
    correlation: FloatArray | None,
    structure: Structure | str | None,
) -> MirtParams:
    k = 0
    while f"a{k + 1}" in header:
        k += 1
    if k == 0:
        raise ParamsError(f"{file.name}: needs slope columns a1..aK (or the bifactor layout)")
    names = tuple(factors) if factors is not None else tuple(f"F{i + 1}" for i in range(k))
    if len(names) != k:
        raise ParamsError(f"{file.name}: {k} slope columns but {len(names)} factor names")
    col = {name: header.index(name) for name in header}
    ids: list[str] = []
    slopes = np.zeros((len(body), k))
    pattern = np.zeros((len(body), k), dtype=bool)
    d = np.zeros(len(body))
    for n, (line_no, row) in enumerate(body):
        ids.append(row[col["item_id"]].strip())
        for f in range(k):
            value = _number(file, line_no, f"a{f + 1}", row[col[f"a{f + 1}"]], math.nan)
            if math.isfinite(value):
                slopes[n, f], pattern[n, f] = value, True
        d[n] = _number(file, line_no, "d", row[col["d"]], math.nan)
        if not math.isfinite(d[n]):
            raise ParamsError(f"{file.name} line {line_no}: d needs a value")
    _unique(file, ids)
    return MirtParams(
        item_ids=tuple(ids),
        slopes=slopes,
        d=d,
        factors=names,
        correlation=np.eye(k) if correlation is None else np.asarray(correlation, dtype=float),
        pattern=pattern,
        structure=Structure(structure) if structure is not None else Structure.CONFIRMATORY,
        c=_guessing(file, header, body),
    )


def _unique(file: Path, ids: list[str]) -> None:
    seen: set[str] = set()
    for item in ids:
        if not item:
            raise ParamsError(f"{file.name}: an item has no id")
        if item in seen:
            raise ParamsError(f"{file.name}: item {item!r} appears twice")
        seen.add(item)
