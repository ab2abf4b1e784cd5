"""The runs a leaderboard is made of: RESULT.json files, folders of them, or results in
memory, each checked as ``cat assess`` writes it.

A file named on its own must be a RESULT.json: anything else is an error naming the file
and its first problem. In a folder (``cat assess --model a --model b --out DIR`` writes
one RESULT.json per model there) every ``*.json`` directly inside is read, and one that
is plainly something else (a JSON without RESULT.json's ``model`` and
``predicted_accuracy``, such as a leaderboard written beside the runs) is skipped with a
note; one that looks like a RESULT.json but does not validate is an error, since a
broken run should not drop silently out of a ranking.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from cat.arguments import as_path
from cat.assessment.result import AssessmentResult
from cat.errors import CatError
from cat.results import output_kind

__all__ = ["Run", "read_runs"]

#: Keys by which a JSON file in a folder is taken for a RESULT.json.
_RESULT_KEYS = ("model", "predicted_accuracy")


@dataclass(frozen=True)
class Run:
    """One assessment and the file it was read from (None: passed in memory)."""

    result: AssessmentResult
    source: Path | None


def read_runs(inputs: Sequence[object], notes: list[str] | None = None) -> list[Run]:
    """Every run in ``inputs`` (files, folders, ``AssessmentResult`` objects), in the
    order given, each file once; what a folder held besides RESULT.json files is said in
    ``notes``."""
    if not inputs:
        raise CatError("no results given: name RESULT.json files of cat assess or folders of them")
    runs: list[Run] = []
    seen: set[Path] = set()
    for entry in inputs:
        if isinstance(entry, AssessmentResult):
            runs.append(Run(entry, None))
            continue
        if not isinstance(entry, str | os.PathLike):
            raise CatError(
                "results must be RESULT.json paths, folders or AssessmentResult objects, "
                f"got {type(entry).__name__}"
            )
        path = as_path(entry, "results")
        if path.is_dir():
            files = _folder_files(path, notes)
        elif path.exists():
            files = [(path, _read_json(path))]
        else:
            raise CatError(f"{path}: no such file or folder")
        for file, data in files:
            key = file.resolve()
            if key not in seen:  # a file named and also in a folder named
                seen.add(key)
                runs.append(Run(_validate(file, data), file))
    return runs


def _read_json(path: Path) -> object:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeError) as exc:
        raise CatError(f"{path}: cannot read it ({exc})") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CatError(f"{path}: not a RESULT.json of cat assess (not JSON: {exc})") from exc


def _validate(path: Path, data: object) -> AssessmentResult:
    if not isinstance(data, dict):
        raise CatError(
            f"{path}: not a RESULT.json of cat assess (a JSON {type(data).__name__}, not an object)"
        )
    try:
        return AssessmentResult.model_validate(data)
    except ValidationError as exc:
        kind = output_kind(data)
        if kind is not None and "cat assess" not in kind:
            raise CatError(f"{path}: {kind}, not a RESULT.json of cat assess") from exc
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the file"
        more = f" and {exc.error_count() - 1} more" if exc.error_count() > 1 else ""
        raise CatError(
            f"{path}: not a RESULT.json of cat assess ({where}: {first['msg']}{more})"
        ) from exc


def _folder_files(folder: Path, notes: list[str] | None) -> list[tuple[Path, object]]:
    files: list[tuple[Path, object]] = []
    skipped: list[str] = []
    for path in sorted(folder.glob("*.json")):
        if not path.is_file():
            continue
        data = _read_json(path)
        if isinstance(data, dict) and all(key in data for key in _RESULT_KEYS):
            files.append((path, data))
        else:
            skipped.append(path.name)
    if not files:
        raise CatError(f"{folder}: holds no RESULT.json of cat assess (no *.json with results)")
    if skipped and notes is not None:
        notes.append(f"{folder}: skipped {', '.join(skipped)} (not RESULT.json files)")
    return files
