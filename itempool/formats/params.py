"""``params.csv`` (item_id,a,b,c,d,se_a,se_b,se_c) and ability tables as CSV."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from irt.errors import ParamsError
from irt.models import ItemParams, ModelKind
from irt.scoring import Abilities
from itempool.atomic import atomic_text_file
from itempool.formats.table import format_cell, read_table

PARAMS_COLUMNS = ("item_id", "a", "b", "c", "d", "se_a", "se_b", "se_c")
ABILITY_COLUMNS = ("subject_id", "theta", "se", "method", "n_answered", "fallback")


def write_params(params: ItemParams, path: str | Path) -> None:
    """Write item parameters; a standard error that was not estimated is an empty cell."""
    nan = np.full(params.n_items, np.nan)
    se = [params.se_a, params.se_b, params.se_c]
    cols = [params.a, params.b, params.c, params.d] + [nan if s is None else s for s in se]
    with atomic_text_file(Path(path)) as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(PARAMS_COLUMNS)
        for j, item in enumerate(params.item_ids):
            writer.writerow([item, *(format_cell(col[j]) for col in cols)])


def read_params(path: str | Path, model: ModelKind | str | None = None) -> ItemParams:
    """Read ``params.csv``. The model is inferred from the parameters unless given."""
    file, header, body = read_table(path)
    missing = [c for c in ("item_id", "a", "b") if c not in header]
    if missing:
        raise ParamsError(f"{file.name}: missing column(s) {', '.join(missing)}")
    col = {name: header.index(name) for name in header}
    ids: list[str] = []
    values: dict[str, list[float]] = {k: [] for k in PARAMS_COLUMNS[1:]}
    for line_no, row in body:
        if len(row) != len(header):
            raise ParamsError(
                f"{file.name} line {line_no}: {len(row)} cells, expected {len(header)}"
            )
        ids.append(row[col["item_id"]])
        for name in values:
            default = {"c": 0.0, "d": 1.0}.get(name, math.nan)
            cell = row[col[name]].strip() if name in col else ""
            try:
                values[name].append(float(cell) if cell else default)
            except ValueError as exc:
                raise ParamsError(
                    f"{file.name} line {line_no}, column {name!r}: {cell!r} is not a number"
                ) from exc
    if not ids:
        raise ParamsError(f"{file.name}: no items")
    arr = {k: np.asarray(v) for k, v in values.items()}
    for name in ("a", "b", "c", "d"):
        bad = ~np.isfinite(arr[name])
        if bad.any():
            raise ParamsError(
                f"{file.name}: item {ids[int(np.argmax(bad))]!r} has no value for {name}"
            )
    kind = ModelKind(model) if model is not None else _infer_model(arr)
    se = {k: (None if np.isnan(arr[k]).all() else arr[k]) for k in ("se_a", "se_b", "se_c")}
    return ItemParams(
        item_ids=tuple(ids), a=arr["a"], b=arr["b"], c=arr["c"], d=arr["d"], model=kind, **se
    )


def _infer_model(arr: dict[str, np.ndarray]) -> ModelKind:
    if np.any(arr["d"] < 1):
        return ModelKind.FOUR_PL
    if np.any(arr["c"] > 0):
        return ModelKind.THREE_PL
    if np.allclose(arr["a"], arr["a"][0]):
        return ModelKind.ONE_PL
    return ModelKind.TWO_PL


def write_abilities(abilities: Abilities, path: str | Path) -> None:
    """One row per subject: id, θ, SE, method, number of answers, ML/WLE fallback flag."""
    with atomic_text_file(Path(path)) as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(ABILITY_COLUMNS)
        for k, sid in enumerate(abilities.subject_ids):
            writer.writerow(
                [
                    sid,
                    format_cell(abilities.theta[k]),
                    format_cell(abilities.se[k]),
                    abilities.method.value,
                    int(abilities.n_answered[k]),
                    int(bool(abilities.fallback[k])),
                ]
            )
