"""The questions of an item pool, as ``synth`` needs them (DESIGN.md, "Item pool").

A pool is a folder with ``pool.json`` (manifest: name, version, language, scenarios, …)
and ``items.jsonl`` (one question a line). Only what asking and grading need is read
here; the full pool format and its checks belong to ``cat pool validate``.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from synth.errors import SynthError


class ItemType(StrEnum):
    """How a question is answered: one option, several options, or an order of options."""

    SINGLE = "single"
    MULTI = "multi"
    ORDER = "order"


class PoolItem(BaseModel):
    """One question. ``answer`` is a letter ("B"), letters ("BD", multi) or an order
    of letters ("CABD", order), always among ``options``' keys."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    scenario: str = ""
    type: ItemType = ItemType.SINGLE
    question: str = Field(min_length=1)
    options: dict[str, str]
    answer: str = Field(min_length=1)
    meta: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _answer_among_options(self) -> PoolItem:
        if len(self.options) < 2:
            raise ValueError("an item needs at least two options")
        unknown = [letter for letter in self.answer if letter not in self.options]
        if unknown:
            raise ValueError(f"answer {self.answer!r} names options not offered: {unknown}")
        if self.type is ItemType.SINGLE and len(self.answer) != 1:
            raise ValueError(f"a single-choice answer is one letter, got {self.answer!r}")
        if len(set(self.answer)) != len(self.answer):
            raise ValueError(f"answer {self.answer!r} repeats a letter")
        return self


class Pool(BaseModel):
    """A pool's manifest fields that ``synth`` uses, and its items."""

    model_config = ConfigDict(frozen=True)

    name: str
    language: str  # "zh" or "en" (prompts are chosen by it)
    items: tuple[PoolItem, ...]


def read_pool(pool_dir: str | Path) -> Pool:
    """Read ``pool.json`` and ``items.jsonl`` from ``pool_dir``; every problem is a
    one-line ``SynthError`` naming the file and line."""
    folder = Path(pool_dir)
    if not folder.is_dir():
        raise SynthError(f"no pool folder at {folder}")
    manifest_path = folder / "pool.json"
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise SynthError(f"{folder}: no pool.json (not a pool folder)") from exc
    except (OSError, UnicodeError, json.JSONDecodeError) as exc:
        raise SynthError(f"{manifest_path}: cannot read the manifest ({exc})") from exc
    if not isinstance(manifest, dict):
        raise SynthError(f"{manifest_path}: the manifest must be a JSON object")
    language = str(manifest.get("language", "en")).lower()
    if language not in ("zh", "en"):
        raise SynthError(f"{manifest_path}: language must be 'zh' or 'en', got {language!r}")
    items = _read_items(folder / "items.jsonl")
    return Pool(name=str(manifest.get("name", folder.name)), language=language, items=items)


def _read_items(path: Path) -> tuple[PoolItem, ...]:
    if not path.is_file():
        raise SynthError(f"{path.parent}: no items.jsonl")
    items: list[PoolItem] = []
    seen: set[str] = set()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeError) as exc:
        raise SynthError(f"{path}: cannot read the items ({exc})") from exc
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = PoolItem.model_validate_json(line)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "item"
            raise SynthError(f"{path.name} line {line_no}: {where}: {first['msg']}") from exc
        if item.id in seen:
            raise SynthError(f"{path.name} line {line_no}: duplicate item id {item.id!r}")
        seen.add(item.id)
        items.append(item)
    if not items:
        raise SynthError(f"{path}: no items")
    return tuple(items)
