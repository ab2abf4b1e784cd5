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
from irt.models import ItemParams
from irt.responses import ResponseMatrix
from irt.types import BoolArray

__all__ = ["check_responses", "runaway_estimates", "warn_about", "warn_runaway_estimates"]

#: How many example ids a message names at most.
MAX_EXAMPLES = 5

#: A difficulty beyond ±this has run off. θ is N(0, 1) in the calibration sample and the
#: EM grid ends at ±6 (P(|θ| > 6) ≈ 2e-9): no subject stands there, so the data cannot
#: place b, only say "harder (easier) than everyone".
RUNAWAY_B = 6.0
#: A slope above this has run off. Without the 1.702 constant, a = 6 takes P from .12 to
#: .88 within ±1/3 of a θ unit: sharper than any question separates subjects. A slope
#: that large is chasing a split of the subjects that happened to be perfect.
RUNAWAY_A = 6.0
#: How many of the worst items a message about run-off estimates names.
RUNAWAY_EXAMPLES = 3

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
    counts = matrix.answer_counts()
    checks: list[tuple[BoolArray, str, Sequence[str], str]] = []
    for kind, ids, right, wrong in (
        ("item", matrix.item_ids, counts.item_right, counts.item_wrong),
        ("subject", matrix.subject_ids, counts.subject_right, counts.subject_wrong),
    ):
        answered = right + wrong > 0
        flags = (~answered, answered & (wrong == 0), answered & (right == 0))
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


def runaway_estimates(params: ItemParams) -> tuple[int, str] | None:
    """How many items have estimates that ran off (``|b| > RUNAWAY_B``, ``a >
    RUNAWAY_A``, or ``a < 0``: the better subjects more often wrong, a miskeyed item or
    noise) and the worst ``RUNAWAY_EXAMPLES`` of them as ``q7 (a = 29.98, b = 18.79)``;
    None when no estimate did. Such estimates are where too few subjects answered an item
    differently for the likelihood to hold it, as happens without priors."""
    a, b = params.a, params.b
    off = (np.abs(b) > RUNAWAY_B) | (a > RUNAWAY_A) | (a < 0)
    hits = np.flatnonzero(off)
    if hits.size == 0:
        return None
    # Worst first: how many times its threshold the estimate went.
    severity = np.maximum(np.abs(b[hits]) / RUNAWAY_B, np.abs(a[hits]) / RUNAWAY_A)
    worst = hits[np.argsort(-severity, kind="stable")][:RUNAWAY_EXAMPLES]
    named = ", ".join(f"{params.item_ids[j]} (a = {a[j]:.2f}, b = {b[j]:.2f})" for j in worst)
    return int(hits.size), named


def warn_runaway_estimates(params: ItemParams, remedy: str) -> None:
    """Issue a ``DataWarning`` naming the items whose estimates ran off
    (``runaway_estimates``), the worst ones, and ``remedy`` (what the caller offers: a
    prior, more subjects); nothing when none did."""
    found = runaway_estimates(params)
    if found is None:
        return
    count, named = found
    noun = "item has an estimate" if count == 1 else "items have estimates"
    warnings.warn(
        f"{count} of {params.n_items} {noun} that ran off (|b| > {RUNAWAY_B:g}, "
        f"a > {RUNAWAY_A:g} or a < 0), worst {named}: the data cannot place "
        f"{'it' if count == 1 else 'them'}; {remedy}",
        DataWarning,
        stacklevel=2,
    )
