"""MMLU-Pro's official answer rules exactly as TIGER-AI-Lab/MMLU-Pro writes its regexes
(``evaluate_from_api.py``, ``evaluate_from_local.py``), lookahead and all: the reference
the project's linear-time rules (``synth.extractors``) are checked against. Quadratic in
a long line, so only for short test replies."""

from __future__ import annotations

import re


def official_letter(text: str, rules: int = 3) -> str | None:
    """The letter the official rules read (``rules`` 2: the first two only)."""
    match = re.search(r"answer is \(?([A-J])\)?", text)
    if match:
        return match.group(1)
    match = re.search(r".*[aA]nswer:\s*([A-J])", text)
    if match:
        return match.group(1)
    if rules < 3:
        return None
    match = re.search(r"\b[A-J]\b(?!.*\b[A-J]\b)", text, re.DOTALL)
    return match.group(0) if match else None
