"""What ``cat validate`` checks in its data and its figures: a subject that answered no
item is left out (its accuracy is not a number, and it would turn every figure into
one), and no figure is ever written or shown as NaN."""

from __future__ import annotations

import math
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel

from cat.errors import CatError
from irt.checks import MAX_EXAMPLES
from irt.polytomous_responses import PolytomousResponses
from irt.responses import ResponseMatrix

__all__ = ["answered_subjects", "refuse_nan"]

Data = TypeVar("Data", ResponseMatrix, PolytomousResponses)


def answered_subjects(data: Data) -> tuple[Data, list[str]]:
    """``data`` without the subjects that answered no item, and a note naming them in
    ``cat calibrate``'s words (``irt.checks``): "1 of 40 subjects answered no item
    (e.g. m07); left out" (no note when every subject answered)."""
    answered = np.asarray(data.observed.any(axis=1))
    if answered.all():
        return data, []
    empty = np.flatnonzero(~answered)
    examples = ", ".join(data.subject_ids[k] for k in empty[:MAX_EXAMPLES])
    noun = "subject" if data.n_subjects == 1 else "subjects"
    note = f"{empty.size} of {data.n_subjects} {noun} answered no item (e.g. {examples}); left out"
    return data.subset(subjects=np.flatnonzero(answered)), [note]


def refuse_nan(model: BaseModel, where: str) -> None:
    """Raise ``CatError`` naming the first NaN figure of ``model`` (an undefined figure
    is None with its reason, never NaN: JSON has no NaN, and a NaN would pass unseen)."""
    key = _first_nan(model.model_dump(), "")
    if key is not None:
        raise CatError(
            f"validation gave no number for {key} of {where} (a prediction or a "
            "subject's accuracy is not a number)"
        )


def _first_nan(value: Any, key: str) -> str | None:
    if isinstance(value, float) and math.isnan(value):
        return key or "a figure"
    if isinstance(value, dict):
        for name, inner in value.items():
            found = _first_nan(inner, f"{key}.{name}" if key else str(name))
            if found is not None:
                return found
    if isinstance(value, list | tuple):
        for k, inner in enumerate(value):
            found = _first_nan(inner, f"{key}[{k}]")
            if found is not None:
                return found
    return None
