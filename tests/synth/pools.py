"""Tiny pools for the synth tests: questions written for the tests, in both languages."""

from __future__ import annotations

import json
from pathlib import Path

from itempool import PoolItem

EN_ITEMS = [
    PoolItem(
        id=f"en{k:03d}",
        scenario="dosing" if k % 2 else "units",
        question=f"A patient weighs {50 + k} kg. At 10 mg/kg, what is the dose (item {k})?",
        options={
            "A": f"{(50 + k) * 5} mg",
            "B": f"{(50 + k) * 10} mg",
            "C": f"{(50 + k) * 20} mg",
            "D": f"{(50 + k) * 30} mg",
        },
        answer="B",
    )
    for k in range(30)
]
ZH_ITEMS = [
    PoolItem(
        id=f"zh{k:03d}",
        scenario="计算",
        question=f"患者体重{60 + k}千克，按每千克5毫克给药，剂量是多少？（第{k}题）",
        options={
            "A": f"{(60 + k) * 5}毫克",
            "B": f"{(60 + k) * 2}毫克",
            "C": f"{(60 + k) * 9}毫克",
        },
        answer="A",
    )
    for k in range(10)
]


def write_pool(folder: Path, items: list[PoolItem], language: str = "en") -> Path:
    """A pool folder with ``pool.json`` and ``items.jsonl``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pool.json").write_text(json.dumps({"name": folder.name, "language": language}))
    (folder / "items.jsonl").write_text(
        "".join(item.model_dump_json() + "\n" for item in items), encoding="utf-8"
    )
    return folder
