"""The parameters of a pool of mixed item types (``irt.polytomous.PolytomousParams``) as
a human-readable CSV, one item a row:

    item_id,type,a,d1,d2,d3,c[,ak1,ak2,ak3][,se_a,se_d1,se_d2,se_d3,se_c[,se_ak1,...]]

``type`` is R mirt's item-type name (2PL, 3PL, graded, gpcm, sequential, nominal);
``d1..dM`` are the item's thresholds in slope–intercept form, M the most any item has,
the cells past an item's own m left empty; ``c`` is the 3PL's lower asymptote, empty for
other types. ``ak1..akM``, written only when a nominal item is in the pool, are a
nominal item's scoring values (mirt fixes ak_m = m), empty for other types. Standard
errors, when the fit estimated them, follow as ``se_`` columns of the same names (empty
where none). Every problem is one ``ParamsError`` naming the file and its line.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from irt.errors import ParamsError
from irt.polytomous import ItemType, PolytomousParams, fill_scoring_values
from itempool.atomic import atomic_text_file
from itempool.formats.table import format_cell, read_table

_FIXED = ("item_id", "type", "a")


def write_polytomous_params(params: PolytomousParams, path: str | Path) -> None:
    """Write ``params`` (and its standard errors, if it has them) to ``path``."""
    width = params.d.shape[1]
    with_ak = any(t.family.has_free_scores for t in params.item_types)
    names = _column_names(width, with_ak)
    has_se = params.se_a is not None or params.se_d is not None or params.se_c is not None
    header = ["item_id", "type", *names, *((f"se_{n}" for n in names) if has_se else ())]
    nan_d = np.full_like(params.d, np.nan)
    nan_v = np.full_like(params.a, np.nan)
    se_a = params.se_a if params.se_a is not None else nan_v
    se_d = params.se_d if params.se_d is not None else nan_d
    se_c = params.se_c if params.se_c is not None else nan_v
    se_ak = params.se_ak if params.se_ak is not None else nan_d
    ak = params.ak if params.ak is not None else nan_d
    with atomic_text_file(Path(path)) as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(header)
        for j, item in enumerate(params.item_ids):
            kind = params.item_types[j]
            c = format_cell(float(params.c[j])) if kind.has_guessing else ""
            free = kind.family.free_scores(int(params.n_categories[j]) - 1)
            row = [item, kind.value, format_cell(float(params.a[j]))]
            row += [format_cell(float(x)) for x in params.d[j]] + [c]
            if with_ak:
                row += [format_cell(float(x)) if free else "" for x in ak[j]]
            if has_se:
                se_cj = format_cell(float(se_c[j])) if kind.has_guessing else ""
                row += (
                    [format_cell(float(se_a[j]))]
                    + [format_cell(float(x)) for x in se_d[j]]
                    + [se_cj]
                )
                if with_ak:
                    row += [format_cell(float(x)) if free else "" for x in se_ak[j]]
            writer.writerow(row)


def _column_names(width: int, with_ak: bool) -> list[str]:
    """a, d1..dM, c and, with nominal items, ak1..akM."""
    names = ["a", *(f"d{k + 1}" for k in range(width)), "c"]
    return names + [f"ak{k + 1}" for k in range(width)] if with_ak else names


def read_polytomous_params(path: str | Path) -> PolytomousParams:
    """Read a file written by ``write_polytomous_params`` (or by hand in its layout)."""
    file, header, rows = read_table(path)
    width = _check_header(file, header)
    body = [(n, row) for n, row in rows if any(c.strip() for c in row)]
    if not body:
        raise ParamsError(f"{file.name}: no items")
    col = {name: k for k, name in enumerate(header)}
    d_names = [f"d{k + 1}" for k in range(width)]
    ak_names = [f"ak{k + 1}" for k in range(width)] if "ak1" in col else []
    with_se = "se_a" in col
    n = len(body)
    ids: list[str] = []
    types: list[ItemType] = []
    a, c = np.zeros(n), np.zeros(n)
    d = np.full((n, width), np.nan)
    ak = np.full((n, width), np.nan)
    se_a, se_c = np.full(n, np.nan), np.full(n, np.nan)
    se_d = np.full((n, width), np.nan)
    se_ak = np.full((n, width), np.nan)
    first_line: dict[str, int] = {}
    for j, (line_no, row) in enumerate(body):
        where = f"{file.name} line {line_no}"
        if len(row) != len(header):
            raise ParamsError(f"{where}: {len(row)} cells, expected {len(header)}")
        item = row[col["item_id"]].strip()
        if not item:
            raise ParamsError(f"{where}: empty item_id")
        if item in first_line:
            raise ParamsError(f"{where}: item {item!r} again (first on line {first_line[item]})")
        first_line[item] = line_no
        try:
            kind = ItemType(row[col["type"]].strip())
        except ValueError:
            allowed = ", ".join(t.value for t in ItemType)
            raise ParamsError(
                f"{where}: type {row[col['type']].strip()!r} is not one of {allowed}"
            ) from None

        cells = {name: row[k] for name, k in col.items()}
        a[j] = number_cell(where, "a", cells["a"], required=True)
        d[j] = [number_cell(where, name, cells[name]) for name in d_names]
        c[j] = (
            number_cell(where, "c", cells["c"], required=True)
            if kind.has_guessing
            else _empty(where, "c", cells["c"])
        )
        free = kind.family.free_scores(int(np.count_nonzero(~np.isnan(d[j]))))
        if free and not ak_names:
            raise ParamsError(
                f"{where}: item {item!r} is {kind.value}: its scoring values need the "
                f"columns ak1..ak{width} after c"
            )
        if free:
            ak[j] = [number_cell(where, name, cells[name]) for name in ak_names]
        else:
            for name in ak_names:
                _empty(where, name, cells[name])
        if with_se:
            se_a[j] = number_cell(where, "se_a", cells["se_a"])
            se_d[j] = [number_cell(where, f"se_{name}", cells[f"se_{name}"]) for name in d_names]
            se_c[j] = number_cell(where, "se_c", cells["se_c"]) if kind.has_guessing else math.nan
            if free:
                se_ak[j] = [number_cell(where, f"se_{n}", cells[f"se_{n}"]) for n in ak_names]
        try:  # one item at a time, so that a bad one is named with its line
            PolytomousParams(
                (item,),
                (kind,),
                a[j : j + 1],
                d[j : j + 1],
                c[j : j + 1],
                ak=ak[j : j + 1] if free else None,
            )
        except ParamsError as exc:
            raise ParamsError(f"{where}: {exc}") from exc
        ids.append(item)
        types.append(kind)
    d = d[:, : int(max(np.count_nonzero(~np.isnan(d), axis=1)))]
    width = d.shape[1]
    return PolytomousParams(
        tuple(ids),
        tuple(types),
        a,
        d,
        c,
        se_a if with_se else None,
        se_d[:, :width] if with_se else None,
        se_c if with_se else None,
        ak=fill_scoring_values(types, d, ak[:, :width]),
        se_ak=se_ak[:, :width] if with_se else None,
    )


def _check_header(file: Path, header: list[str]) -> int:
    """The number of threshold columns d1..dM the header declares, after checking it."""
    if tuple(header[:3]) != _FIXED:
        raise ParamsError(f"{file.name}: the header must start item_id,type,a")
    width = 0
    while 3 + width < len(header) and header[3 + width] == f"d{width + 1}":
        width += 1
    if width == 0:
        raise ParamsError(f"{file.name}: no threshold columns d1, d2, ...")
    names = _column_names(width, "ak1" in header)
    expected = ["item_id", "type", *names]
    with_se = [*expected, *(f"se_{n}" for n in names)]
    if header not in (expected, with_se):
        raise ParamsError(
            f"{file.name}: the header must be {','.join(expected)} "
            f"(optionally followed by {','.join(with_se[len(expected) :])})"
        )
    return width


def number_cell(where: str, name: str, cell: str, required: bool = False) -> float:
    text = cell.strip()
    if not text:
        if required:
            raise ParamsError(f"{where}, column {name!r}: a number is needed")
        return math.nan
    try:
        value = float(text)
    except ValueError:
        raise ParamsError(f"{where}, column {name!r}: {text!r} is not a number") from None
    if not math.isfinite(value):
        raise ParamsError(f"{where}, column {name!r}: {text!r} is not a finite number")
    return value


def _empty(where: str, name: str, cell: str) -> float:
    if cell.strip():
        raise ParamsError(f"{where}, column {name!r}: only 3PL items have a lower asymptote")
    return 0.0
