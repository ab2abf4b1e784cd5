"""Benchmark files as teams bring them, written for the tests: MMLU-style Parquet (an
options list and an answer index), a CSV with A–D columns, a ``datasets`` save_to_disk
folder, a Chinese JSONL with an options object."""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq


def arrow_stream(path: Path, rows: list[dict[str, Any]]) -> None:
    """An Arrow IPC stream file, as ``datasets`` writes its shards."""
    table = pa.Table.from_pylist(rows)
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)


def save_to_disk(folder: Path, rows: list[dict[str, Any]]) -> Path:
    """What ``datasets.Dataset.save_to_disk`` leaves: Arrow stream files named in state.json."""
    folder.mkdir(parents=True)
    arrow_stream(folder / "data-00000-of-00001.arrow", rows)
    state = {"_data_files": [{"filename": "data-00000-of-00001.arrow"}], "_split": None}
    (folder / "state.json").write_text(json.dumps(state))
    (folder / "dataset_info.json").write_text("{}")
    return folder


def _sums(n: int, seed: int) -> list[tuple[int, int, list[int], int]]:
    """``n`` distinct questions a + b with four options and the right one's position."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        a, b = rng.randint(2, 90), 100 * k + rng.randint(2, 90)
        options = [a + b, a + b + 1, a + b - 1, a + b + 10]
        rng.shuffle(options)
        out.append((a, b, options, options.index(a + b)))
    return out


def mmlu_parquet(folder: Path, n: int) -> Path:
    rows = [
        {
            "question": f"What is {a} + {b}?",
            "subject": ("anatomy", "pharmacology")[k % 2],
            "choices": [str(o) for o in options],
            "answer": right,
        }
        for k, (a, b, options, right) in enumerate(_sums(n, 1))
    ]
    path = folder / "test-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def letter_columns_csv(folder: Path, n: int) -> Path:
    path = folder / "bench.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["Question", "A", "B", "C", "D", "Answer"])
        for a, b, options, right in _sums(n, 2):
            writer.writerow([f"Compute {a} plus {b}.", *map(str, options), "ABCD"[right]])
    return path


def saved_dataset(folder: Path, n: int) -> Path:
    rows = [
        {"question": f"Add {a} and {b}.", "choices": [str(o) for o in options], "answer": right}
        for a, b, options, right in _sums(n, 3)
    ]
    return save_to_disk(folder / "saved", rows)


def chinese_jsonl(folder: Path, n: int) -> Path:
    path = folder / "questions.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for a, b, options, right in _sums(n, 4):
            record = {
                "question": f"病例：{a}加{b}等于多少？",
                "options": {letter: str(o) for letter, o in zip("ABCD", options, strict=True)},
                "answer_idx": "ABCD"[right],
            }
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


#: Each common shape: (name, writer, language).
SHAPES: list[tuple[str, Callable[[Path, int], Path], str]] = [
    ("mmlu-parquet", mmlu_parquet, "en"),
    ("letter-columns-csv", letter_columns_csv, "en"),
    ("save-to-disk", saved_dataset, "en"),
    ("chinese-jsonl", chinese_jsonl, "zh"),
]
