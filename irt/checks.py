"""Data-quality warnings for a response matrix.

None of these problems makes the matrix invalid, but each leaves some parameter without
information: an item nobody answered, or everyone answered alike, has no estimable
difficulty, and a subject with a perfect (or empty) record has no finite ability estimate.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from irt.errors import DataWarning
from irt.responses import ResponseMatrix
from irt.types import BoolArray

__all__ = ["check_responses", "warn_about"]

#: How many example ids a message names at most.
MAX_EXAMPLES = 5

# Per kind: nobody answered, all answers right, all answers wrong.
_PHRASES = {
    "item": (
        "{was} answered by nobody",
        "{was} answered correctly by everyone who answered {them}",
        "{was} answered wrongly by everyone who answered {them}",
    ),
    "subject": (
        "answered no item",
        "got every item they answered right",
        "got every item they answered wrong",
    ),
}


def check_responses(matrix: ResponseMatrix) -> list[str]:
    """Describe each data-quality problem of ``matrix`` in one message (empty if none).

    Each message gives a count and at most five example ids, e.g.
    ``3 of 120 items were answered by nobody (e.g. q0007, q0019, q0044)``. Items and
    subjects without any answer are not counted again as all right or all wrong.
    """
    observed = matrix.observed
    right = matrix.values == 1
    wrong = matrix.values == 0
    checks: list[tuple[BoolArray, str, Sequence[str], str]] = []
    # axis 0 reduces over subjects (one flag per item), axis 1 over items.
    for axis, kind, ids in ((0, "item", matrix.item_ids), (1, "subject", matrix.subject_ids)):
        answered = observed.any(axis=axis)
        flags = (
            ~answered,
            answered & ~wrong.any(axis=axis),
            answered & ~right.any(axis=axis),
        )
        checks += [(f, kind, ids, p) for f, p in zip(flags, _PHRASES[kind], strict=True)]
    messages = (_message(*check) for check in checks)
    return [m for m in messages if m is not None]


def warn_about(matrix: ResponseMatrix) -> None:
    """Issue each message of ``check_responses`` as a ``DataWarning``."""
    for message in check_responses(matrix):
        # stacklevel=2 points the warning at our caller, which holds the data.
        warnings.warn(message, DataWarning, stacklevel=2)


def _message(mask: BoolArray, kind: str, ids: Sequence[str], phrase: str) -> str | None:
    hits = np.flatnonzero(mask)
    if hits.size == 0:
        return None
    examples = ", ".join(ids[k] for k in hits[:MAX_EXAMPLES])
    noun = kind if len(ids) == 1 else f"{kind}s"
    one = hits.size == 1
    phrase = phrase.format(was="was" if one else "were", them="it" if one else "them")
    return f"{hits.size} of {len(ids)} {noun} {phrase} (e.g. {examples})"
