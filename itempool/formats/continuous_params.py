"""The parameters of a pool of continuous items (``irt.continuous.ContinuousParams``) as a
human-readable CSV, one item a row:

    item_id,type,a,d,sigma,tau,epsilon[,se_a,se_d,se_sigma,se_tau]

``type`` is ``crm`` (Samejima's continuous response model) or ``beta`` (Beta IRT); ``a``
and ``d`` the slope and intercept, η = aθ + d; ``sigma`` the CRM's residual SD on the
logit scale, empty for a Beta item; ``tau`` the Beta's log precision, empty for a CRM
item. ``epsilon``, the clipping of scores to [ε, 1 − ε], belongs to the pool, not to an
item, but a fit and its scoring must clip alike, so it travels in the file: as a column
repeating the same number on every row, which keeps the file plain CSV (no comment line
or header convention for spreadsheets and pandas to trip over) and every row complete.
Standard errors, when the fit estimated them, follow as ``se_`` columns (empty where
none, and always for the other type's dispersion). Numbers are written with ``repr``, so
a written file reads back to the same floats. Every problem is one ``ParamsError``
naming the file and its line.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from irt.continuous import ContinuousParams, ContinuousType
from irt.continuous_kernels import check_epsilon
from irt.errors import ParamsError
from itempool.atomic import atomic_text_file

# A cell's number as the scored pool's file reads it (empty, not a number, not finite).
from itempool.formats.polytomous_params import number_cell
from itempool.formats.table import format_cell, read_table

__all__ = ["CONTINUOUS_COLUMNS", "read_continuous_params", "write_continuous_params"]

#: The columns of every file; the standard errors' columns may follow.
CONTINUOUS_COLUMNS = ("item_id", "type", "a", "d", "sigma", "tau", "epsilon")
_SE_COLUMNS = ("se_a", "se_d", "se_sigma", "se_tau")
_NAMES = ("a", "d", "sigma", "tau")
_OWN = {ContinuousType.CRM: "sigma", ContinuousType.BETA: "tau"}


def write_continuous_params(params: ContinuousParams, path: str | Path) -> None:
    """Write ``params``, its ε and its standard errors (if it has any) to ``path``.

    Raises:
        ParamsError: an item id is blank (the file could not be read back).
    """
    for item in params.item_ids:
        if not item.strip():
            raise ParamsError(f"cannot write a blank item id {item!r}")
    ses = [params.se_a, params.se_d, params.se_sigma, params.se_tau]
    has_se = any(se is not None for se in ses)
    nan = np.full(params.n_items, np.nan)
    se_columns = [nan if se is None else se for se in ses]
    epsilon = format_cell(params.epsilon)
    with atomic_text_file(Path(path)) as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow([*CONTINUOUS_COLUMNS, *(_SE_COLUMNS if has_se else ())])
        for j, item in enumerate(params.item_ids):
            numbers = [params.a[j], params.d[j], params.sigma[j], params.tau[j]]
            row = [item, params.item_types[j].value, *map(format_cell, numbers), epsilon]
            if has_se:  # only for the parameters the item has: the other type's stay empty
                pairs = zip(se_columns, numbers, strict=True)
                row += [format_cell(se[j]) if math.isfinite(x) else "" for se, x in pairs]
            writer.writerow(row)


def read_continuous_params(path: str | Path) -> ContinuousParams:
    """Read a file written by ``write_continuous_params`` (or by hand in its layout).

    The standard errors are arrays (NaN where a cell is empty) when the file has their
    columns, None otherwise.

    Raises:
        ParamsError: the file is missing or malformed: a wrong header, an unknown type,
            a missing number or one the item's type does not have, a slope or sigma not
            positive, a repeated item, an ε outside (0, 0.5) or differing between rows;
            one line naming the file and its line.
    """
    file, header, rows = read_table(path)
    with_se = _check_header(file, header)
    body = [(n, row) for n, row in rows if any(c.strip() for c in row)]
    if not body:
        raise ParamsError(f"{file.name}: no items")
    n = len(body)
    ids: list[str] = []
    types: list[ContinuousType] = []
    values = np.full((n, 4), np.nan)  # a, d, sigma, tau
    se = np.full((n, 4), np.nan)
    first_line: dict[str, int] = {}
    epsilon: tuple[float, str, int] | None = None  # value, as written, line
    for j, (line_no, row) in enumerate(body):
        where = f"{file.name} line {line_no}"
        if len(row) != len(header):
            raise ParamsError(f"{where}: {len(row)} cells, expected {len(header)}")
        cells = dict(zip(header, row, strict=True))
        item = cells["item_id"]
        if not item.strip():
            raise ParamsError(f"{where}: empty item_id")
        if item in first_line:
            raise ParamsError(f"{where}: item {item!r} again (first on line {first_line[item]})")
        first_line[item] = line_no
        kind = _item_type(where, cells["type"])
        values[j] = _item_numbers(where, kind, cells, "")
        if with_se:
            se[j] = _item_numbers(where, kind, cells, "se_")
        epsilon = _same_epsilon(where, cells["epsilon"], line_no, epsilon)
        try:  # one item at a time, so that a bad one is named with its line
            a, d, sigma, tau = values[j : j + 1].T
            ContinuousParams((item,), (kind,), a, d, sigma, tau, epsilon[0])
        except ParamsError as exc:
            raise ParamsError(f"{where}: {exc}") from exc
        ids.append(item)
        types.append(kind)
    assert epsilon is not None  # there is at least one row
    a, d, sigma, tau = values.T
    se_a, se_d, se_sigma, se_tau = se.T if with_se else (None, None, None, None)
    return ContinuousParams(
        tuple(ids), tuple(types), a, d, sigma, tau, epsilon[0], se_a, se_d, se_sigma, se_tau
    )


def _check_header(file: Path, header: list[str]) -> bool:
    """Whether the file holds standard errors, after checking its header."""
    if tuple(header) == CONTINUOUS_COLUMNS:
        return False
    if tuple(header) == CONTINUOUS_COLUMNS + _SE_COLUMNS:
        return True
    raise ParamsError(
        f"{file.name}: the header must be {','.join(CONTINUOUS_COLUMNS)} "
        f"(optionally followed by {','.join(_SE_COLUMNS)})"
    )


def _item_type(where: str, cell: str) -> ContinuousType:
    try:
        return ContinuousType(cell.strip())
    except ValueError:
        allowed = ", ".join(t.value for t in ContinuousType)
        raise ParamsError(f"{where}: type {cell.strip()!r} is not one of {allowed}") from None


def _item_numbers(
    where: str, kind: ContinuousType, cells: dict[str, str], prefix: str
) -> tuple[float, float, float, float]:
    """a, d, sigma, tau of one row (``prefix`` "se_": their standard errors). The item's
    own dispersion is needed (a standard error may be empty), the other type's must be
    empty."""
    required = not prefix
    own = _OWN[kind]
    numbers: list[float] = []
    for name in _NAMES:
        column = prefix + name
        if name in ("a", "d") or name == own:
            numbers.append(number_cell(where, column, cells[column], required))
        elif cells[column].strip():
            only = "crm" if name == "sigma" else "beta"
            raise ParamsError(
                f"{where}, column {column!r}: item {cells['item_id']!r} is {kind.value}; "
                f"only {only} items have {name} (leave the cell empty)"
            )
        else:
            numbers.append(math.nan)
    a, d, sigma, tau = numbers
    return a, d, sigma, tau


def _same_epsilon(
    where: str, cell: str, line_no: int, first: tuple[float, str, int] | None
) -> tuple[float, str, int]:
    """This row's ε, checked, and the same as every row's before it (``first``)."""
    value = number_cell(where, "epsilon", cell, required=True)
    try:
        check_epsilon(value)
    except ParamsError as exc:
        raise ParamsError(f"{where}, column 'epsilon': {exc}") from exc
    if first is None:
        return value, cell.strip(), line_no
    if value != first[0]:
        raise ParamsError(
            f"{where}, column 'epsilon': {cell.strip()!r} differs from {first[1]!r} on line "
            f"{first[2]}; a pool has one epsilon"
        )
    return first
