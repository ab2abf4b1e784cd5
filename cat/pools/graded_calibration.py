"""The graded family of ``cat.calibrate`` (``graded``, ``gpcm``, ``sequential``,
``nominal``): scores 0..m per item fitted on one θ by
``irt.polytomous_em.PolytomousCalibrator``, written in
``itempool.formats.polytomous_params``'s CSV; in a pool, read on its items' scales and
stored with the references' scores (``cat.pools.scored_pool``).

Every item with three or more score categories gets the model asked for; an item with
two gets the 2PL, or the 3PL with ``guessing``. Binary items of a rating-scale file are
rare and their answers are not multiple choice, so no guessing is the default (unlike
the binary path's 3PL).

The items are fitted Bayes modal under ``PolytomousPriors.weakly_informative`` unless
told otherwise, as the binary path fits its 3PL under priors: tens of language models
leave scores unused on many items, which the priors keep on their original scale (and
the cross-fit of a scored pool, ``cat.prediction.scored_cross_fit``, uses the same).
``priors=False`` is R mirt's plain marginal ML.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cat.engine.registry import DesignName
from cat.errors import CatError
from cat.pools.calibration_steps import (
    CalibrationRequest,
    Family,
    Fitted,
    Priors,
    Stored,
    given_responses,
    refuse_given,
)
from cat.pools.graded_report import graded_report
from cat.pools.scored_data import collapsed_scores, refuse_skipped_scores, scored_data_notes
from cat.pools.scored_pool import (
    binary_item_type,
    pool_item_types,
    read_pool_scores,
    record_scored_pool,
)
from irt.continuous_scoring import ContinuousScores
from irt.estimation.methods import cycle_progress
from irt.mixed_scoring import MixedScores
from irt.names import CalibrationMethod, ModelGroup, model_names
from irt.polytomous import ItemType
from irt.polytomous_em import PolytomousCalibrator
from irt.polytomous_priors import PolytomousPriors
from irt.polytomous_responses import PolytomousResponses
from irt.polytomous_scoring import PolytomousScores, polytomous_scores
from irt.polytomous_start import resolve_item_types
from irt.scoring import Abilities, AbilityMethod
from itempool import QuestionSet
from itempool.formats.polytomous_params import write_polytomous_params
from itempool.formats.responses import read_scored_responses

__all__ = [
    "AUTO_SE_MAX_PARAMETERS",
    "GRADED",
    "GRADED_MODELS",
    "MIN_SUBJECTS",
    "SE_CHOICES",
    "as_abilities",
    "at_least_min_subjects",
    "item_types_for",
    "on_pool_scales",
]

#: The models an item with three or more score categories can be given.
#: The package's models for scores 0..m (item families registered from outside it are
#: fitted here too: ``irt.names.model_named``).
GRADED_MODELS = model_names(ModelGroup.GRADED)
#: Fewer subjects with answers than this are refused: each of an item's thresholds
#: would rest on a handful of answers.
MIN_SUBJECTS = 10
#: ``standard_errors``: "auto" is "xpd" (or "oakes" with fewer subjects than free
#: parameters, see ``_se_method``) up to this many free parameters and none beyond,
#: because both methods build and invert a dense matrix over all of them (4,000
#: parameters cost about 20 s and 128 MB; "oakes" also needs 2 E-steps per parameter).
AUTO_SE_MAX_PARAMETERS = 2000
SE_CHOICES = ("auto", "oakes", "xpd", "none")
_SCORINGS = (AbilityMethod.EAP, AbilityMethod.MAP)  # what polytomous_scores offers


@dataclass(frozen=True)
class GradedFit:
    """What the later steps take from a graded fit: the scores fitted (renumbered with
    ``collapse_scores``) and the calibrator."""

    data: PolytomousResponses
    fit: PolytomousCalibrator


def _check(request: CalibrationRequest) -> None:
    given = (
        ("--method bayes", request.method is CalibrationMethod.BAYES),
        ("--groups", request.groups is not None),
        ("--dims", request.dims is not None),
        ("--criterion", request.criterion is not None),
    )
    refuse_given(given, f"{{flag}} does not apply to --model {request.model}")
    if request.scoring not in _SCORINGS:
        names = ", ".join(m.value for m in _SCORINGS)
        raise CatError(
            f"--scoring {request.scoring.value} is not available for graded models; use {names}"
        )
    if request.standard_errors not in SE_CHOICES:
        raise CatError(
            f"unknown standard errors {request.standard_errors!r}; "
            f"choose from {', '.join(SE_CHOICES)}"
        )
    if request.pool is not None and request.collapse_scores:
        raise CatError(
            "--collapse-scores would move the pool's scores off the scale of its items "
            "(max_score in items.jsonl): calibrate the pool on its own scores"
        )
    if isinstance(request.priors, PolytomousPriors | bool | str):
        return
    raise CatError("priors for the graded models are True, False, 'all' or a PolytomousPriors")


def at_least_min_subjects(observed: Any, what: str) -> None:
    """Refuse data with fewer than ``MIN_SUBJECTS`` subjects who answered anything
    (``what`` says whose, as the message begins)."""
    answering = int(observed.any(axis=1).sum())
    if answering < MIN_SUBJECTS:
        raise CatError(f"{what.format(answering=answering)} needs at least {MIN_SUBJECTS}")


def _read(request: CalibrationRequest, questions: QuestionSet | None) -> PolytomousResponses:
    """The scores (on the pool's scales when there is a pool), if enough subjects
    answered."""
    if request.source is None:
        data = given_responses(request, PolytomousResponses, "a PolytomousResponses")
        if questions is not None:
            data = on_pool_scales(data, questions)
    elif questions is not None:
        data = read_pool_scores(request.source, questions, request.id_column)
    else:
        data = read_scored_responses(request.source, id_column=request.id_column)
    at_least_min_subjects(
        data.observed,
        f"{request.name}: {{answering}} subject(s) with answers; a graded calibration",
    )
    return data


def on_pool_scales(data: PolytomousResponses, questions: QuestionSet) -> PolytomousResponses:
    """Scores given in memory, on the scales of the pool's items (0..max_score)."""
    tops = {item.id: item.max_score + 1 for item in questions.items}
    unknown = [item for item in data.item_ids if item not in tops]
    if unknown:
        raise CatError(
            f"{len(unknown)} answered item(s) are not in the pool (e.g. {', '.join(unknown[:3])})"
        )
    return PolytomousResponses.from_array(
        data.as_float(), data.subject_ids, data.item_ids, [tops[i] for i in data.item_ids]
    )


def _fit(
    request: CalibrationRequest,
    data: PolytomousResponses,
    questions: QuestionSet | None,
    fold_note: str | None,
) -> Fitted[GradedFit]:
    """Each item's type and priors from the data (and the pool), the standard errors
    that are affordable, the fit and its report."""
    kind = ItemType(request.model)
    guessing = request.guessing
    cycles = None if request.progress is None else cycle_progress(request.progress, request.tol)
    calibrator = PolytomousCalibrator(
        n_quad=request.quad_points,
        tol=request.tol,
        max_iter=request.max_iter,
        standard_errors=None,
        device=request.device,
        progress=cycles,
    )
    data, renumbered = collapsed_scores(data) if request.collapse_scores else (data, {})
    overrides: Mapping[str, ItemType | str] | None = request.item_types
    if questions is not None:
        overrides = {
            **pool_item_types(questions, data, kind, guessing),
            **(request.item_types or {}),
        }
    calibrator.item_types = item_types_for(data, kind, bool(guessing), overrides)
    calibrator.priors = _priors(request.priors, calibrator.item_types)
    if not calibrator.priors.identifying:
        refuse_skipped_scores(data, request.name)
    calibrator.standard_errors, se_note = _se_method(
        request.standard_errors, calibrator.item_types, data.n_categories, data.n_subjects
    )
    request.tell(0.0, f"fitting the {kind.value} model")
    fit = calibrator.fit(data)
    settings = {
        "standard_errors_requested": request.standard_errors,
        # Without a choice: none off a pool, the 3PL for its single-choice items on one.
        "guessing": "single-choice items" if guessing is None and request.pool else bool(guessing),
        "collapse_scores": request.collapse_scores,
        "scoring": request.scoring.value,
        "device": fit.device_,
    }
    notes = scored_data_notes(data, renumbered) + [n for n in (se_note, fold_note) if n]
    report = graded_report(
        request.input,
        data,
        fit,
        kind.value,
        seed=request.seed,
        settings=settings,
        notes=notes,
        renumbered=renumbered,
    )
    return Fitted(report, fit.params_, GradedFit(data, fit), done=f"{kind.value} model fitted")


def _write(request: CalibrationRequest, fitted: Fitted[GradedFit]) -> list[Path]:
    if request.out is None:
        return []
    write_polytomous_params(fitted.detail.fit.params_, request.out)
    return [request.out]


def _score(request: CalibrationRequest, fitted: Fitted[GradedFit]) -> PolytomousScores:
    request.tell(0.95, f"scoring the subjects ({request.scoring.value})")
    detail = fitted.detail
    return polytomous_scores(detail.data, detail.fit.params_, request.scoring.value)


def _abilities(scores: PolytomousScores) -> Abilities:
    return as_abilities(scores, scores.method)


def _store(
    request: CalibrationRequest,
    fitted: Fitted[GradedFit],
    scores: PolytomousScores,
    questions: QuestionSet,
    folds: int | None,
) -> Stored:
    """The pool's params.csv, references and their scores (``cat.pools.scored_pool``),
    with the IRT design's cross-fitted errors."""
    assert request.pool is not None
    data, fit = fitted.detail.data, fitted.detail.fit
    kinds = [t.value for t in fit.params_.item_types]
    provenance = {
        "method": "em",
        "model": request.model,
        "item_types": {k: kinds.count(k) for k in sorted(set(kinds))},
        "priors": fit.priors_.describe(),
        "seed": request.seed,
        "n_subjects": data.n_subjects,
        "n_items": data.n_items,
        "loglik": fit.loglik_,
        "converged": fit.converged_,
        "scoring": request.scoring.value,
        "source": request.name,
    }
    stored = record_scored_pool(
        request.pool,
        questions,
        data,
        fit.params_,
        scores,
        provenance,
        cross_fit=folds,
        lengths=request.cross_fit_lengths,
        seed=request.seed,
        progress=request.cross_fit_progress,
    )
    errors = None if stored.errors is None else {DesignName.IRT.value: stored.errors}
    return Stored(errors, stored.written)


def item_types_for(
    data: PolytomousResponses,
    model: ItemType,
    guessing: bool,
    overrides: Mapping[str, ItemType | str] | None = None,
) -> list[ItemType]:
    """Each item's type: ``model`` for 3+ categories, ``binary_item_type`` for 2, unless
    ``overrides`` names the item. A binary type on an item with 3+ categories is
    refused here, naming the item."""
    binary = binary_item_type(model, guessing)
    rule: list[ItemType | str] = [binary if k == 2 else model for k in data.n_categories]
    if overrides:
        unknown = sorted(set(overrides) - set(data.item_ids))
        if unknown:
            raise CatError(f"item types are given for {unknown[0]!r}, which the file does not hold")
        rule = [overrides.get(i, t) for i, t in zip(data.item_ids, rule, strict=True)]
    return resolve_item_types(rule, data)


def _priors(priors: Priors, types: Sequence[ItemType]) -> PolytomousPriors:
    if isinstance(priors, PolytomousPriors):
        return priors
    return PolytomousPriors.weakly_informative(types) if priors else PolytomousPriors.none()


def _se_method(
    choice: str, types: Sequence[ItemType], n_categories: Sequence[int], n_subjects: int
) -> tuple[str | None, str | None]:
    """The calibrator's ``standard_errors`` for ``choice``, and a note when "auto"
    leaves them out.

    "auto" takes the cross-product of the subjects' scores ("xpd", the cheaper) only
    where there are more subjects than free parameters: that matrix has rank at most
    the number of subjects, so with fewer (tens of LLMs, hundreds of thresholds) it
    holds little more than the priors, and its errors are mostly the priors' widths
    (median threshold error 2.84 against Oakes' 0.41 on 40 models x 550 parameters of
    examples/scored_responses.jsonl). There "auto" takes Oakes' observed information.
    """
    if choice != "auto":
        return (None if choice == "none" else choice), None
    count = sum(k + int(t.has_guessing) for t, k in zip(types, n_categories, strict=True))
    if count <= AUTO_SE_MAX_PARAMETERS:
        return ("xpd" if n_subjects > count else "oakes"), None
    return None, (
        f"no standard errors: {count:,} free parameters are more than the "
        f"{AUTO_SE_MAX_PARAMETERS:,} they are computed for by default "
        "(--standard-errors xpd computes them anyway, slowly)"
    )


def as_abilities(
    scores: PolytomousScores | ContinuousScores | MixedScores, method: str
) -> Abilities:
    """The binary path's abilities, so that the file has its columns (EAP and MAP
    always exist: no fallback)."""
    return Abilities(
        subject_ids=scores.subject_ids,
        theta=scores.theta,
        se=scores.sd,
        method=AbilityMethod(method),
        n_answered=scores.n_answered.astype(np.float64),
        fallback=np.zeros(len(scores.subject_ids), dtype=bool),
    )


GRADED: Family[PolytomousResponses, GradedFit, PolytomousScores] = Family(
    name="graded",
    models=GRADED_MODELS,
    check=_check,
    read=_read,
    fit=_fit,
    write=_write,
    score=_score,
    abilities=_abilities,
    store=_store,
)
