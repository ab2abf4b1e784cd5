"""Which column holds what, for the common shapes of multiple-choice benchmarks, so
that ``cat pool import questions`` reads them without ``--map``:

- MMLU (Hugging Face ``cais/mmlu``): ``question``, ``choices`` (a list), ``answer`` (a
  0-based position), ``subject``;
- MMLU-Pro (``TIGER-Lab/MMLU-Pro``): ``question_id``, ``question``, ``options`` (a list),
  ``answer`` (a letter), ``category``;
- ARC (``allenai/ai2_arc``): ``id``, ``question``, ``choices`` (``{"text": [...],
  "label": [...]}``), ``answerKey`` (one of the labels: a letter or a digit);
- CMMLU and C-Eval: ``Question``/``question``, columns ``A``..``D``, ``Answer``;
- MedQA: ``question``, ``options`` (an object A→text), ``answer_idx`` (a letter);
- MedMCQA: ``question``, ``opa``..``opd``, ``cop`` (a 0-based position), ``subject_name``.

Column names are matched in any case. A name given with ``--map`` always wins; a
field no column is found for is named in the error. Items without an id column get one
made from their content (``content_id``), the same on every import of the same file.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["ANSWER_ANY", "content_id", "detect_mapping"]

#: The internal field of a key read per row as a letter, a 0-based position or an
#: option's text (what the common shapes hold under one column name or another).
ANSWER_ANY = "key"

#: Our field -> the column names that hold it, by preference.
_NAMES: dict[str, tuple[str, ...]] = {
    "id": ("id", "question_id", "qid", "uid", "item_id", "idx"),
    "question": ("question", "stem", "query", "prompt", "input", "problem"),
    "options": ("options", "choices", "answers_list", "candidates"),
    "scenario": ("category", "subject", "subject_name", "topic", "domain", "scenario"),
}
#: Answer columns: a letter, a position or an option's text, read per row.
_ANSWERS = ("answer", "answerkey", "answer_idx", "answer_key", "label", "target", "cop", "correct")
_LETTER_COLUMNS = tuple(string.ascii_uppercase)
_MEDMCQA = ("opa", "opb", "opc", "opd", "ope")


def detect_mapping(columns: Sequence[str], given: Mapping[str, str]) -> dict[str, str]:
    """Our fields -> the file's columns: ``given`` (``--map``), and for every field it
    leaves out the column the common shapes hold it in, where there is one."""
    by_low = {c.lower(): c for c in reversed(columns)}  # the first of a case-blind pair
    out = dict(given)
    for field, names in _NAMES.items():
        if field in out:
            continue
        found = next((by_low[n] for n in names if n in by_low), None)
        if found is not None:
            out[field] = found
    if "options" not in out:
        letters = _option_columns(columns, _LETTER_COLUMNS) or _option_columns(columns, _MEDMCQA)
        if letters:
            out["options"] = ",".join(letters)
    if not {"answer", "answer_index", ANSWER_ANY} & set(out):
        found = next((by_low[n] for n in _ANSWERS if n in by_low), None)
        if found is not None:
            out[ANSWER_ANY] = found
    return out


def _option_columns(columns: Sequence[str], names: Sequence[str]) -> list[str]:
    """The run of ``names`` (A, B, C, …) the file has as columns, from the first: at
    least two."""
    present = {c.lower(): c for c in columns}
    run = []
    for name in names:
        if name.lower() not in present:
            break
        run.append(present[name.lower()])
    return run if len(run) >= 2 else []


def content_id(question: str, options: Mapping[str, str]) -> str:
    """A stable id made from an item's question and options: "q" and 12 hex digits of
    their SHA-256 (whitespace collapsed), so a file without ids imports the same ids
    every time and a copy of a question gets its copy's id."""
    text = (
        " ".join(question.split())
        + "\x1f"
        + "\x1f".join(f"{k}\x1e{' '.join(v.split())}" for k, v in sorted(options.items()))
    )
    return "q" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def answer_any(value: Any, options: Mapping[str, str]) -> str:
    """The key of a row whose answer column may hold a letter ("B"), a 0-based position
    (2, "2"), a label of the options as the file listed them, or an option's text."""
    keys = list(options)
    if isinstance(value, bool) or value is None:
        raise ValueError(f"answer {value!r} is neither a letter, a position nor an option")
    if isinstance(value, int):
        return _position(value, keys)
    text = str(value).strip()
    if text in options:
        return text
    if text.upper() in options and len(text) == 1:
        return text.upper()
    if text.isdigit():
        return _position(int(text), keys)
    by_text = [k for k, v in options.items() if v.strip() == text]
    if len(by_text) == 1:
        return by_text[0]
    raise ValueError(f"answer {value!r} is neither a letter, a position nor an option's text")


def _position(position: int, keys: list[str]) -> str:
    if not 0 <= position < len(keys):
        raise ValueError(f"answer position {position} is outside 0..{len(keys) - 1}")
    return keys[position]
