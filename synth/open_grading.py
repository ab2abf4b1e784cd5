"""Grade a free-text reply to an open-ended item against reference answers (issue 15).

An open-ended item has one or more reference answers, a numeric key with a tolerance, or
both. ``grade_open`` scores a reply with a reference metric (``synth.text_metrics``:
ROUGE-L F-measure, Lin 2004, or SQuAD-style token F1, Rajpurkar et al. 2016; the maximum
over references) and, given a numeric key, reads the reply's final number
(``synth.numeric_answer``) and compares it within the tolerance:

- numeric key and a number read: the numeric verdict (1 or 0) is the score; the text
  metric, if there are references, is still reported as ``text_score``;
- numeric key, no number read, references: the text metric is the score;
- numeric key, no number read, no references: unparsed, score 0;
- no numeric key: the text metric is the score;
- an empty reply (no tokens after normalisation): unparsed, score 0.

Everything here is pure: no LLM judge, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from synth.errors import SynthError
from synth.grading import GradeStatus
from synth.numeric_answer import check_tolerances, extract_number, numeric_match
from synth.text_metrics import (
    Language,
    TextMetric,
    best_text_score,
    check_language,
    check_metric,
    detect_language,
    tokenize,
)


class OpenMetric(StrEnum):
    """What decided an open-ended grade."""

    ROUGE_L = "rouge_l"
    F1 = "f1"
    NUMERIC = "numeric"


@dataclass(frozen=True)
class OpenGrade:
    """A graded free-text reply.

    ``score`` is in [0, 1]: 1/0 when ``metric`` is "numeric", else the text metric.
    ``number`` is the value read from the reply (as written: 12.5 for "12.5%", with
    ``percent`` set) when a numeric key was given, else None. ``text_score`` is the text
    metric against the references whenever there are references, else None.
    """

    score: float
    metric: OpenMetric
    status: GradeStatus
    language: Language
    number: float | None = None
    percent: bool = False
    text_score: float | None = None


def grade_open(
    reply: str,
    references: Sequence[str],
    *,
    numeric_key: float | None = None,
    abs_tol: float | None = None,
    rel_tol: float | None = None,
    metric: TextMetric | str = TextMetric.ROUGE_L,
    language: Language | None = None,
) -> OpenGrade:
    """Grade ``reply`` against ``references`` and/or ``numeric_key`` (module docstring).

    ``metric`` is "rouge_l" or "f1"; ``language`` is "zh", "en" or None to detect it from
    the references and the reply together (a reference such as "500 mg" says nothing of
    the language; "每次500mg" does). Tolerances default as in
    ``synth.numeric_answer`` (rel_tol 1e-2 when neither is given). Raises ``SynthError``
    on bad input: neither references nor a numeric key, an empty reference, a non-finite
    key, a negative or non-finite tolerance, an unknown metric or language.
    """
    if not isinstance(reply, str):
        raise SynthError(f"the reply must be a string, got {type(reply).__name__}")
    if isinstance(references, str):
        raise SynthError("references must be a sequence of strings, not one string")
    text_metric = check_metric(metric)
    chosen = check_language(language)
    check_tolerances(abs_tol, rel_tol)
    if numeric_key is not None and not math.isfinite(numeric_key):
        raise SynthError(f"the numeric key must be a finite number, got {numeric_key!r}")
    if not references and numeric_key is None:
        raise SynthError("an open-ended item needs at least one reference or a numeric key")
    refs = tuple(references)
    for i, ref in enumerate(refs):
        if not isinstance(ref, str) or not tokenize(ref, chosen or "zh"):
            raise SynthError(f"reference {i} is empty after normalisation: {ref!r}")
    lang = chosen or detect_language(" ".join((*refs, reply)))
    decider = OpenMetric(text_metric.value) if refs else OpenMetric.NUMERIC
    if not tokenize(reply, lang):
        empty = 0.0 if refs else None
        return OpenGrade(0.0, decider, GradeStatus.UNPARSED, lang, text_score=empty)
    text_score = best_text_score(reply, refs, metric=text_metric, language=lang) if refs else None
    if numeric_key is not None:
        number = extract_number(reply)
        if number is not None:
            verdict = numeric_match(number, numeric_key, abs_tol, rel_tol)
            return OpenGrade(
                1.0 if verdict else 0.0,
                OpenMetric.NUMERIC,
                GradeStatus.OK,
                lang,
                number=number.value,
                percent=number.percent,
                text_score=text_score,
            )
        if text_score is None:
            return OpenGrade(0.0, OpenMetric.NUMERIC, GradeStatus.UNPARSED, lang)
    assert text_score is not None  # references exist: checked above
    return OpenGrade(text_score, decider, GradeStatus.OK, lang, text_score=text_score)
