"""Scored responses (0..m per item) as a graded calibration takes them: each item's
observed scores renumbered 0..K−1 on request, a score nobody gave refused where no
prior can stand in for it, and ``note:`` lines where the data carry little information.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cat.errors import CatError
from irt.checks import MAX_EXAMPLES
from irt.polytomous_responses import MISSING, PolytomousResponses
from irt.types import BoolArray

__all__ = ["collapsed_scores", "observed_scores", "refuse_skipped_scores", "scored_data_notes"]


def observed_scores(data: PolytomousResponses) -> dict[str, list[int]]:
    """Each item's distinct observed scores, ascending."""
    out = {}
    for j, item in enumerate(data.item_ids):
        column = data.values[:, j]
        out[item] = [int(k) for k in np.unique(column[column != MISSING])]
    return out


def collapsed_scores(data: PolytomousResponses) -> tuple[PolytomousResponses, dict[str, list[int]]]:
    """``data`` with each item's observed scores renumbered 0, 1, 2, ... (as R mirt
    does), and each renumbered item's original scores: new score k is the k-th."""
    moved = {i: s for i, s in observed_scores(data).items() if s != list(range(len(s)))}
    return (data.collapsed(), moved) if moved else (data, {})


def refuse_skipped_scores(data: PolytomousResponses, name: str) -> None:
    """Refuse an item whose observed scores skip one below its top score (1..4 with no
    0, or 0, 1, 3): without priors on its thresholds the fit cannot place one for a
    category nobody is in. (An item with one observed score is left to the calibrator,
    which says to drop it.)"""
    gaps = _skipped(data)
    if not gaps:
        return
    item, (empty, scores) = next(iter(gaps.items()))
    others = f"; {len(gaps) - 1} more item(s) skip a score" if len(gaps) > 1 else ""
    raise CatError(
        f"{name}: no answer on item {item!r} scores {empty} (its scores are "
        f"{', '.join(map(str, scores))}{others}); give --collapse-scores to renumber each "
        "item's observed scores 0, 1, 2, ... (as R mirt does), or fit with the default "
        "priors, which keep a score nobody gave"
    )


def scored_data_notes(data: PolytomousResponses, renumbered: dict[str, list[int]]) -> list[str]:
    """One line per problem that leaves something without information, with a count
    and a few example ids (as ``irt.checks.check_responses`` for 0/1 answers)."""
    observed = data.observed
    top = data.values == data.max_scores[None, :]
    bottom = data.values == 0
    answered: BoolArray = np.asarray(observed.any(axis=1))
    checks = (
        (~answered, "answered no item"),
        (
            answered & ~(observed & ~top).any(axis=1),
            "got the top score on every item they answered",
        ),
        (
            answered & ~(observed & ~bottom).any(axis=1),
            "got the lowest score on every item they answered",
        ),
    )
    notes = [_message(mask, "subject", data.subject_ids, what) for mask, what in checks]
    seen = observed_scores(data)
    single = np.array([len(s) == 1 for s in seen.values()])
    notes.append(
        _message(
            single, "item", data.item_ids, "got the same score from everyone who answered them"
        )
    )
    gaps = _skipped(data)
    if gaps:
        examples = "; ".join(f"{i}: {e}" for i, (e, _) in list(gaps.items())[:MAX_EXAMPLES])
        notes.append(
            f"{len(gaps)} of {data.n_items} items have a score below their top one that "
            f"nobody gave, fitted under the priors (e.g. {examples}); --collapse-scores "
            "renumbers the observed scores instead"
        )
    if not (data.values == 0).any():
        notes.append(
            "no answer scores 0: if the scale starts at 1, --collapse-scores renumbers "
            "it from 0 (or recode the file)"
        )
    if renumbered:
        examples = "; ".join(
            f"{item}: {', '.join(map(str, scores))} -> 0..{len(scores) - 1}"
            for item, scores in list(renumbered.items())[:MAX_EXAMPLES]
        )
        notes.append(
            f"scores renumbered on {len(renumbered)} of {data.n_items} items (e.g. {examples})"
        )
    if data.is_binary:
        notes.append(
            "every item has 2 score categories, so none is graded: --model 2pl or 3pl "
            "fits 0/1 answers with the binary calibrator"
        )
    return [n for n in notes if n is not None]


def _skipped(data: PolytomousResponses) -> dict[str, tuple[int, list[int]]]:
    """Items with two or more observed scores that skip one below the top: the lowest
    score skipped and the observed ones."""
    out = {}
    for item, scores in observed_scores(data).items():
        if len(scores) > 1 and scores != list(range(len(scores))):
            out[item] = (min(set(range(scores[-1] + 1)) - set(scores)), scores)
    return out


def _message(mask: BoolArray, kind: str, ids: Sequence[str], what: str) -> str | None:
    hits = np.flatnonzero(mask)
    if hits.size == 0:
        return None
    examples = ", ".join(ids[k] for k in hits[:MAX_EXAMPLES])
    return f"{hits.size} of {len(ids)} {kind}s {what} (e.g. {examples})"
