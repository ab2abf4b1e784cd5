"""``cat pool list``: the pools a command finds by name (``$CAT_POOL_PATH``'s folders, then
the repository's ``item_pools/``: ``itempool.shipped``), each with its size, references
and protocol, read from its files without loading its items (the MMLU-Pro pool loads in
seconds, its listing in a fraction of one)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from itempool import ITEMS, ITEMS_GZ, MANIFEST
from itempool.shipped import shipped_pools

__all__ = ["PoolListing", "list_pools"]


class PoolListing(BaseModel):
    """One pool found by name: ``name`` (what ``--pool`` takes), ``dir``, the manifest's
    ``version`` and ``language``, ``n_items``, its ``model`` (None: not calibrated),
    ``n_references`` (the reference models it was calibrated on), and ``protocol``
    (how they were asked; None: the built-in way). ``problem`` says why a pool's files
    could not be read (the rest is then partly None)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    dir: str
    version: str | None = None
    language: str | None = None
    n_items: int | None = None
    model: str | None = None
    n_references: int | None = None
    protocol: str | None = None
    problem: str | None = None


def list_pools() -> list[PoolListing]:
    """Every pool found by name, in search order (``itempool.shipped.shipped_pools``)."""
    return [_listing(name, folder) for name, folder in shipped_pools().items()]


def _listing(name: str, folder: Path) -> PoolListing:
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        if not isinstance(manifest, dict):
            raise ValueError("pool.json is not a JSON object")
        return PoolListing(
            name=name,
            dir=str(folder),
            version=_text(manifest.get("version")),
            language=_text(manifest.get("language")),
            n_items=_count_items(folder),
            model=_model(folder, manifest),
            n_references=_count_lines(folder / "reference.jsonl"),
            protocol=_protocol(manifest.get("protocol")),
        )
    except (OSError, ValueError, EOFError) as exc:
        return PoolListing(name=name, dir=str(folder), problem=str(exc))


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _count_items(folder: Path) -> int | None:
    if (folder / ITEMS_GZ).is_file():
        with gzip.open(folder / ITEMS_GZ, "rt", encoding="utf-8") as fh:
            return sum(1 for line in fh if line.strip())
    return _count_lines(folder / ITEMS)


def _count_lines(path: Path) -> int | None:
    if not path.is_file():
        return None
    with path.open(encoding="utf-8") as fh:
        return sum(1 for line in fh if line.strip())


def _model(folder: Path, manifest: dict[str, Any]) -> str | None:
    """The calibrated model: the manifest's record of it, "scored" for a pool whose
    params.csv holds item types; None without parameters."""
    if not (folder / "params.csv").is_file():
        return None
    calibration = manifest.get("calibration")
    model = manifest.get("model") or (
        calibration.get("model") if isinstance(calibration, dict) else None
    )
    return str(model) if model else "calibrated"


def _protocol(value: Any) -> str | None:
    if isinstance(value, dict):
        return _text(value.get("name"))
    return None
