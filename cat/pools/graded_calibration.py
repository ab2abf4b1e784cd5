"""``cat calibrate --model graded|gpcm|sequential`` as one function: read scores 0..m per
item, fit them on one θ by ``irt.polytomous_em.PolytomousCalibrator``, and write the
item parameters (``itempool.formats.polytomous_params``'s CSV), the abilities and the fit report.

    outcome = calibrate_scored(Path("scores.jsonl"), model="graded", out=Path("params.csv"))
    outcome.report.loglik

Every item with three or more score categories gets ``model``; an item with two gets
the 2PL, or the 3PL with ``guessing``. Binary items of a rating-scale file are rare
and their answers are not multiple choice, so no guessing is the default (unlike the
binary path's 3PL).

The items are fitted Bayes modal under ``PolytomousPriors.weakly_informative`` unless
told otherwise, as the binary path fits its 3PL under priors: tens of language models
leave scores unused on many items, which the priors keep on their original scale (and
the cross-fit of a scored pool, ``cat.prediction.scored_cross_fit``, uses the same).
``priors=False`` is R mirt's plain marginal ML.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cat.errors import CatError
from cat.pools.graded_report import GradedCalibrationReport, graded_report
from cat.pools.loading import check_output_folders, read_pool_questions
from cat.pools.scored_data import collapsed_scores, refuse_skipped_scores, scored_data_notes
from cat.pools.scored_pool import pool_item_types, read_pool_scores, record_scored_pool
from cat.prediction.cross_fit import fold_count
from irt.continuous_scoring import ContinuousScores
from irt.fit import FitProgress
from irt.mixed_scoring import MixedScores
from irt.polytomous import ItemType, PolytomousParams
from irt.polytomous_em import PolytomousCalibrator
from irt.polytomous_priors import PolytomousPriors
from irt.polytomous_responses import PolytomousResponses
from irt.polytomous_scoring import PolytomousScores, polytomous_scores
from irt.polytomous_start import resolve_item_types
from irt.scoring import Abilities, AbilityMethod
from itempool import PredictionErrors, QuestionSet
from itempool.formats.params import write_abilities
from itempool.formats.polytomous_params import write_polytomous_params
from itempool.formats.responses import read_scored_responses

__all__ = [
    "AUTO_SE_MAX_PARAMETERS",
    "GRADED_MODELS",
    "MIN_SUBJECTS",
    "SE_CHOICES",
    "GradedCalibrationOutcome",
    "GradedCalibrationReport",
    "calibrate_scored",
    "item_types_for",
]

#: The models an item with three or more score categories can be given.
GRADED_MODELS = (ItemType.GRADED.value, ItemType.GPCM.value, ItemType.SEQUENTIAL.value)
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
class GradedCalibrationOutcome:
    """What ``calibrate_scored`` produced, and which files it wrote."""

    report: GradedCalibrationReport
    params: PolytomousParams
    abilities: PolytomousScores | None = None
    written: list[Path] = field(default_factory=list)
    # The IRT design's cross-fitted errors stored in the pool (None without).
    cross_fit: PredictionErrors | None = None


def calibrate_scored(
    responses: Path,
    *,
    model: str = "graded",
    out: Path | None = None,
    report: Path | None = None,
    abilities: Path | None = None,
    scoring: AbilityMethod | str = AbilityMethod.EAP,
    seed: int = 0,
    priors: bool | PolytomousPriors = True,
    max_iter: int = 500,
    tol: float = 1e-4,
    quad_points: int = 61,
    id_column: bool = True,
    standard_errors: str = "auto",
    guessing: bool | None = None,
    collapse_scores: bool = False,
    item_types: Mapping[str, ItemType | str] | None = None,
    progress: FitProgress | None = None,
    pool: Path | None = None,
    cross_fit: int | None = None,
    cross_fit_lengths: Sequence[int] = (100, 250),
    cross_fit_progress: Callable[[str, float], None] | None = None,
    cross_fit_fallback: bool = False,
) -> GradedCalibrationOutcome:
    """Fit ``model`` ("graded", "gpcm" or "sequential") to the scores in ``responses``
    (``itempool.formats.responses.read_scored_responses``' files) and write the item parameters to
    ``out``, the abilities (``scoring`` "eap" or "map") to ``abilities`` and the fit
    report to ``report``.

    Items with two categories are 2PL, or 3PL with ``guessing``; ``item_types`` (item
    id -> type) overrides that for the items it names. ``pool`` (a pool folder) reads
    the scores on its items' scales, gives its single-choice items the 3PL unless
    ``guessing`` is False, and stores the calibration there
    (``cat.pools.scored_pool``), with the IRT design's errors cross-fitted in
    ``cross_fit`` folds at ``cross_fit_lengths`` items (none when None;
    ``cross_fit_progress(what, fraction done)`` follows them; with ``cross_fit_fallback``,
    the folds being a default, too few subjects for them give leave-one-out and a note).
    ``priors``: True for ``PolytomousPriors.weakly_informative``, False for none (plain
    marginal ML), or the priors to use. ``standard_errors``: one of ``SE_CHOICES`` ("auto": see
    ``AUTO_SE_MAX_PARAMETERS``). ``collapse_scores`` renumbers each item's observed
    scores 0..K−1 as R mirt does (scores 1..4 become 0..3); without it, an item with a
    score nobody gave below its top one is fitted as it is under priors that identify
    it, and refused under others. EM is deterministic: ``seed`` is only recorded.
    ``progress(fraction done, what)`` follows the stages.

    Raises:
        CatError: a setting, the data or an output folder is unusable.
        IRTError: the file is unreadable or malformed, or an item cannot be fitted.
    """
    kind = _graded_type(model)
    method = _scoring(scoring)
    if standard_errors not in SE_CHOICES:
        raise CatError(
            f"unknown standard errors {standard_errors!r}; choose from {', '.join(SE_CHOICES)}"
        )
    if out is None and pool is None:
        raise CatError("say where the parameters go: --out PARAMS.csv and/or --pool DIR")
    if pool is not None and collapse_scores:
        raise CatError(
            "--collapse-scores would move the pool's scores off the scale of its items "
            "(max_score in items.jsonl): calibrate the pool on its own scores"
        )
    if cross_fit is not None and pool is None:
        raise CatError("--cross-fit stores its errors in a pool: give --pool DIR")
    if cross_fit is not None and cross_fit < 2:
        raise CatError(f"--cross-fit needs at least 2 folds, got {cross_fit}")
    # Built before any work, so that it refuses a bad setting (tol, quadrature) first;
    # the item types, priors and standard errors follow from the data.
    calibrator = PolytomousCalibrator(
        n_quad=quad_points, tol=tol, max_iter=max_iter, standard_errors=None
    )
    check_output_folders(out, report, abilities)
    questions = read_pool_questions(pool) if pool is not None else None
    data = _read(responses, id_column, questions)
    fold_note = None
    if cross_fit is not None:
        cross_fit, fold_note = fold_count(data.n_subjects, cross_fit, not cross_fit_fallback)
    data, renumbered = collapsed_scores(data) if collapse_scores else (data, {})
    overrides: Mapping[str, ItemType | str] | None = item_types
    if questions is not None:
        overrides = {**pool_item_types(questions, data, kind, guessing), **(item_types or {})}
    calibrator.item_types = item_types_for(data, kind, bool(guessing), overrides)
    calibrator.priors = _priors(priors, calibrator.item_types)
    if not calibrator.priors.identifying:
        refuse_skipped_scores(data, responses.name)
    calibrator.standard_errors, se_note = _se_method(
        standard_errors, calibrator.item_types, data.n_categories, data.n_subjects
    )
    _tell(progress, 0.0, f"fitting the {kind.value} model")
    fit = calibrator.fit(data)
    settings = {
        "standard_errors_requested": standard_errors,
        # Without a choice: none off a pool, the 3PL for its single-choice items on one.
        "guessing": "single-choice items" if guessing is None and pool else bool(guessing),
        "collapse_scores": collapse_scores,
        "scoring": method.value,
    }
    notes = scored_data_notes(data, renumbered) + [n for n in (se_note, fold_note) if n]
    fit_report = graded_report(
        responses,
        data,
        fit,
        kind.value,
        seed=seed,
        settings=settings,
        notes=notes,
        renumbered=renumbered,
    )
    written = []
    if out is not None:
        write_polytomous_params(fit.params_, out)
        written.append(out)
    scores = None
    if abilities is not None or pool is not None:
        _tell(progress, 0.95, f"scoring the subjects ({method.value})")
        scores = polytomous_scores(data, fit.params_, method.value)
    if abilities is not None and scores is not None:
        write_abilities(as_abilities(scores, scores.method), abilities)
        written.append(abilities)
    errors = None
    if pool is not None and questions is not None and scores is not None:
        stored = record_scored_pool(
            pool,
            questions,
            data,
            fit.params_,
            scores,
            _provenance(responses, data, fit, kind, seed, method),
            cross_fit=cross_fit,
            lengths=cross_fit_lengths,
            seed=seed,
            progress=cross_fit_progress,
        )
        errors = stored.errors
        written.extend(stored.written)
    if report is not None:
        fit_report.write_json(report)
        written.append(report)
    _tell(progress, 1.0, f"{kind.value} model fitted")
    return GradedCalibrationOutcome(fit_report, fit.params_, scores, written, errors)


def item_types_for(
    data: PolytomousResponses,
    model: ItemType,
    guessing: bool,
    overrides: Mapping[str, ItemType | str] | None = None,
) -> list[ItemType]:
    """Each item's type: ``model`` for 3+ categories, 2PL (3PL with ``guessing``) for 2,
    unless ``overrides`` names the item. A binary type on an item with 3+ categories
    is refused here, naming the item."""
    binary = ItemType.THREE_PL if guessing else ItemType.TWO_PL
    rule: list[ItemType | str] = [binary if k == 2 else model for k in data.n_categories]
    if overrides:
        unknown = sorted(set(overrides) - set(data.item_ids))
        if unknown:
            raise CatError(f"item types are given for {unknown[0]!r}, which the file does not hold")
        rule = [overrides.get(i, t) for i, t in zip(data.item_ids, rule, strict=True)]
    return resolve_item_types(rule, data)


def _graded_type(model: str) -> ItemType:
    if model not in GRADED_MODELS:
        raise CatError(f"unknown graded model {model!r}; choose from {', '.join(GRADED_MODELS)}")
    return ItemType(model)


def _scoring(scoring: AbilityMethod | str) -> AbilityMethod:
    names = ", ".join(m.value for m in _SCORINGS)
    try:
        method = AbilityMethod(scoring)
    except ValueError:
        raise CatError(f"unknown scoring {scoring!r}; choose from {names}") from None
    if method not in _SCORINGS:
        raise CatError(f"--scoring {method.value} is not available for graded models; use {names}")
    return method


def _read(path: Path, id_column: bool, questions: QuestionSet | None) -> PolytomousResponses:
    """The scores in ``path`` (on the pool's scales when it has ``questions``), if
    enough subjects answered."""
    raw = (
        read_pool_scores(path, questions, id_column)
        if questions is not None
        else read_scored_responses(path, id_column=id_column)
    )
    answering = int(raw.observed.any(axis=1).sum())
    if answering < MIN_SUBJECTS:
        raise CatError(
            f"{path.name}: {answering} subject(s) with answers; a graded calibration needs "
            f"at least {MIN_SUBJECTS}"
        )
    return raw


def _provenance(
    source: Path,
    data: PolytomousResponses,
    fit: PolytomousCalibrator,
    model: ItemType,
    seed: int,
    scoring: AbilityMethod,
) -> dict[str, Any]:
    """pool.json's ``calibration`` entry."""
    kinds = [t.value for t in fit.params_.item_types]
    return {
        "method": "em",
        "model": model.value,
        "item_types": {k: kinds.count(k) for k in sorted(set(kinds))},
        "priors": fit.priors_.describe(),
        "seed": seed,
        "n_subjects": data.n_subjects,
        "n_items": data.n_items,
        "loglik": fit.loglik_,
        "converged": fit.converged_,
        "scoring": scoring.value,
        "source": source.name,
    }


def _priors(priors: bool | PolytomousPriors, types: Sequence[ItemType]) -> PolytomousPriors:
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


def _tell(progress: FitProgress | None, done: float, what: str) -> None:
    if progress is not None:
        progress(done, what)
