"""A pool of scored items calibrated in place: what ``cat calibrate --model
graded|gpcm|sequential|nominal --pool DIR`` writes beside the parameters.

The pool's ``items.jsonl`` fixes each item's scores 0..max_score, so the response file
is read on that scale (a score nobody reached stays a category) and a single-choice
item, answered by picking an option, gets a lower asymptote (3PL) unless told
otherwise. The pool then holds params.csv in the scored layout, the references' θ and
mean share of the top score (``reference.jsonl``), their scores
(``reference_answers.csv.gz``) and, unless the cross-fit is switched off, the IRT
design's cross-fitted errors (``cat.prediction.scored_cross_fit``), which size the
interval of ``cat assess``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cat.engine.registry import DesignName
from cat.errors import CatError
from cat.pools.calibration import record_calibration
from cat.pools.scenarios import scenarios_of
from cat.prediction.scored_cross_fit import ScoredResponses, mean_shares, scored_cross_fit_errors
from cat.provenance import package_version, utc_now
from irt.continuous import ContinuousType
from irt.mixed import MixedParams, MixedResponses
from irt.mixed_scoring import MixedScores
from irt.polytomous import ItemType, PolytomousParams
from irt.polytomous_responses import PolytomousResponses
from irt.polytomous_scoring import PolytomousScores
from itempool import CONTINUOUS_PARAMS, REFERENCE_ANSWERS, PredictionErrors, QuestionSet
from itempool import ItemType as QuestionType
from itempool.formats.responses import read_scored_responses

__all__ = ["ScoredPoolWrite", "pool_item_types", "read_pool_scores", "record_scored_pool"]


def read_pool_scores(path: Path, questions: QuestionSet, id_column: bool) -> PolytomousResponses:
    """The scores in ``path`` on the pool's scale: each item's categories 0..max_score
    of ``items.jsonl`` (a score above it is refused, naming the file and line)."""
    tops = {item.id: item.max_score + 1 for item in questions.items}
    found = read_scored_responses(path, id_column=id_column)
    unknown = [item for item in found.item_ids if item not in tops]
    if unknown:
        raise CatError(
            f"{path.name}: {len(unknown)} answered item(s) are not in the pool "
            f"(e.g. {', '.join(unknown[:3])})"
        )
    return read_scored_responses(
        path, id_column=id_column, n_categories={item: tops[item] for item in found.item_ids}
    )


def pool_item_types(
    questions: QuestionSet, data: PolytomousResponses, model: ItemType, guessing: bool | None
) -> dict[str, ItemType]:
    """Each answered item's type: ``model`` for 3+ scores; for 0/1 items
    ``binary_item_type``, with a lower asymptote where ``guessing`` says so, or (None)
    where the item is a single choice."""
    kind = {item.id: item.type for item in questions.items}
    out = {}
    for item, k in zip(data.item_ids, data.n_categories, strict=True):
        if k > 2:
            out[item] = model
            continue
        lower = kind[item] is QuestionType.SINGLE if guessing is None else guessing
        out[item] = binary_item_type(model, lower)
    return out


def binary_item_type(model: ItemType, guessing: bool) -> ItemType:
    """The type of a 0/1 item in a fit of ``model``: ``model`` itself where it is a
    binary family (one registered from outside the package), else the 3PL with
    ``guessing``, the 2PL without."""
    if model.binary:
        return model
    return ItemType.THREE_PL if guessing else ItemType.TWO_PL


@dataclass(frozen=True)
class ScoredPoolWrite:
    """What was stored: the cross-fitted errors (None without a cross-fit) and files."""

    errors: PredictionErrors | None
    written: list[Path]


def record_scored_pool(
    pool: Path,
    questions: QuestionSet,
    data: ScoredResponses,
    params: PolytomousParams | MixedParams,
    scores: PolytomousScores | MixedScores,
    provenance: dict[str, Any],
    *,
    cross_fit: int | None,
    lengths: Sequence[int],
    seed: int,
    progress: Callable[[str, float], None] | None = None,
) -> ScoredPoolWrite:
    """Store the calibration in ``pool``: params.csv, reference.jsonl (θ by the
    ``scores``' method, accuracy as the mean share of the top score), the references'
    scores and, with ``cross_fit`` K folds, the IRT design's errors at ``lengths``
    (per scenario when every item has one)."""
    share = mean_shares(data)
    answered = data.observed.sum(axis=1)
    rows = [
        {
            "subject_id": subject,
            "theta": float(scores.theta[k]),
            "se": float(scores.sd[k]),
            "accuracy": float(share[k]),
            "n_answered": int(answered[k]),
        }
        for k, subject in enumerate(data.subject_ids)
    ]
    errors = None
    if cross_fit is not None:
        types = _item_types(params)
        scenario, names = None, None
        if all(item.scenario for item in questions.items):
            found = scenarios_of(questions.items, data.item_ids)
            scenario, names = found.codes, found.names
        errors = scored_cross_fit_errors(
            data, types, cross_fit, lengths, seed, scenario, names, progress
        )
    dumped = None if errors is None else errors.model_dump()
    record_calibration(
        pool,
        params,
        rows,
        {**provenance, "package_version": package_version(), "date": utc_now()},
        dumped,
        # The references' answers serve the reference designs, which take 0/1 items.
        None if isinstance(data, MixedResponses) else data,
        None if dumped is None else {DesignName.IRT.value: dumped},
    )
    files: tuple[str, ...] = ("params.csv", "reference.jsonl", REFERENCE_ANSWERS, "pool.json")
    if params.family == "mixed":  # its continuous items have their own file
        files = ("params.csv", CONTINUOUS_PARAMS, "reference.jsonl", "pool.json")
        if params.discrete is None:
            files = files[1:]
    return ScoredPoolWrite(errors, [pool / name for name in files])


def _item_types(params: PolytomousParams | MixedParams) -> dict[str, ItemType | ContinuousType]:
    """Each item's model, for the cross-fit's refits."""
    parts = MixedParams.of(params)
    out: dict[str, ItemType | ContinuousType] = {}
    if parts.discrete is not None:
        out.update(zip(parts.discrete.item_ids, parts.discrete.item_types, strict=True))
    if parts.continuous is not None:
        out.update(zip(parts.continuous.item_ids, parts.continuous.item_types, strict=True))
    return out
