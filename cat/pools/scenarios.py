"""Which scenario (content area) each item belongs to, read from an item table.

Content balancing in ``cat validate`` and ``cat simulate`` needs a scenario per item; a
response matrix has none, so it comes from the benchmark's item list: a CSV (the first
column the item id, another named by ``column``) or JSONL (``"id"`` and ``column``, as in
a pool's ``items.jsonl``), optionally gzipped.
"""

from __future__ import annotations

import csv
import gzip
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from cat.errors import CatError
from cat.pools.jsonl import read_json_lines
from itempool import PoolItem


@dataclass(frozen=True)
class ItemScenarios:
    """A scenario code (0 … S−1) per item, in the order of the items asked for."""

    codes: tuple[int, ...]
    names: tuple[str, ...]


def scenarios_of(items: Iterable[PoolItem], item_ids: Sequence[str]) -> ItemScenarios:
    """The scenario code of each of ``item_ids`` from a pool's items (names sorted)."""
    scenario = {item.id: item.scenario for item in items}
    names = tuple(sorted(set(scenario.values())))
    code = {name: k for k, name in enumerate(names)}
    return ItemScenarios(tuple(code[scenario[i]] for i in item_ids), names)


def read_item_scenarios(
    path: str | Path, item_ids: tuple[str, ...], column: str = "scenario"
) -> ItemScenarios:
    """The scenario of each of ``item_ids``, from ``path``; names are sorted so that
    codes do not depend on the file's row order."""
    path = Path(path)
    if not path.is_file():
        raise CatError(f"no such file: {path}")
    try:
        with _open(path) as fh:
            table = dict(_rows(fh, path, column))
    except (OSError, EOFError, UnicodeError, csv.Error) as exc:
        raise CatError(f"{path.name}: cannot read the file ({exc})") from exc
    missing = [i for i in item_ids if i not in table]
    if missing:
        raise CatError(
            f"{path.name}: no scenario for {len(missing)} of the {len(item_ids)} items "
            f"(e.g. {', '.join(missing[:5])})"
        )
    names = tuple(sorted({table[i] for i in item_ids}))
    index = {name: k for k, name in enumerate(names)}
    return ItemScenarios(tuple(index[table[i]] for i in item_ids), names)


def _open(path: Path) -> TextIO:
    if path.name.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")


def _rows(fh: TextIO, path: Path, column: str) -> Iterator[tuple[str, str]]:
    if path.name.removesuffix(".gz").endswith(".jsonl"):
        for n, record in read_json_lines(path.name, fh):
            try:
                yield str(record["id"]), str(record[column])
            except (KeyError, TypeError) as exc:
                raise CatError(
                    f"{path.name}, line {n}: need an object with 'id' and {column!r} ({exc})"
                ) from exc
        return
    reader = csv.reader(fh)
    header = next(reader, None)
    if header is None or column not in header:
        raise CatError(f"{path.name}: the header has no column {column!r}")
    where = header.index(column)
    for n, row in enumerate(reader, start=2):
        if len(row) <= where:
            raise CatError(f"{path.name}, line {n}: {len(row)} cells, expected {len(header)}")
        yield row[0], row[where]
