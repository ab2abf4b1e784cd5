"""The mixed family of ``cat.calibrate``: items scored 0..m (binary ones among them,
``--model graded|gpcm|sequential|nominal``) and items scored in [0, 1] (a similarity such as
ROUGE-L, ``--continuous``, or a pool's continuous items) fitted together on one θ by
``irt.mixed_em.MixedCalibrator``; standard errors from the joint information
(``irt.mixed_se``); EAP abilities from every answer (``irt.mixed_scoring``).

The two files may list different subjects: a subject in one file only is fitted on the
answers it has. The continuous items' model is the CRM, the Beta, or (``auto``, the
default) whichever of the two the data fit better: both are fitted and the one with the
lower AIC is kept. Both have three parameters an item, so that is the one with the
higher marginal likelihood of the same scores (clipped alike), and the report keeps both
fits' figures. No fixed default is defensible yet: on simulated ROUGE-L the winner
turns on how the scores of exactly 0 and 1 are clipped (``benchmarks/bench_continuous.py``),
and no real similarity scores were at hand to settle it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cat.engine.registry import DesignName
from cat.errors import CatError
from cat.pools.calibration_steps import (
    CalibrationRequest,
    Family,
    Fitted,
    Stored,
    given_responses,
    refuse_given,
)
from cat.pools.continuous_calibration import (
    CONTINUOUS_MODELS,
    check_on_off_priors,
    oakes_unless_too_many,
)
from cat.pools.graded_calibration import (
    as_abilities,
    at_least_min_subjects,
    item_types_for,
    on_pool_scales,
)
from cat.pools.mixed_report import mixed_report
from cat.pools.scored_data import refuse_skipped_scores
from cat.pools.scored_pool import pool_item_types, record_scored_pool
from irt.continuous_priors import ContinuousPriors
from irt.continuous_responses import ContinuousResponses
from irt.errors import DataWarning
from irt.mixed import MixedParams, MixedResponses
from irt.mixed_em import MixedCalibrator
from irt.mixed_scoring import MixedScores, mixed_scores
from irt.mixed_se import fit_standard_errors
from irt.names import CalibrationMethod
from irt.polytomous import ItemType
from irt.polytomous_priors import PolytomousPriors
from irt.polytomous_responses import PolytomousResponses
from irt.scoring import Abilities, AbilityMethod
from itempool import QuestionSet
from itempool.formats.continuous_params import write_continuous_params
from itempool.formats.mixed_responses import read_mixed_responses
from itempool.formats.polytomous_params import write_polytomous_params
from itempool.formats.responses import read_scored_responses
from itempool.formats.scores import read_continuous_responses

__all__ = [
    "CONTINUOUS_CHOICES",
    "MIXED",
    "aligned_responses",
]

#: ``continuous_model``: one of the two models, or the better fitting of them.
CONTINUOUS_CHOICES = ("auto", *CONTINUOUS_MODELS)


@dataclass(frozen=True)
class MixedFit:
    """What the later steps take from a mixed fit: the scores, the kept fit (and its
    parameters with their standard errors) and every candidate's."""

    data: MixedResponses
    fit: MixedCalibrator
    params: MixedParams
    fits: dict[str, MixedCalibrator]


def _check(request: CalibrationRequest) -> None:
    given = (
        ("--method bayes", request.method is CalibrationMethod.BAYES),
        ("--groups", request.groups is not None),
        ("--dims", request.dims is not None),
        ("--criterion", request.criterion is not None),
        ("--collapse-scores", request.collapse_scores),
        ("--standard-errors xpd", request.standard_errors == "xpd"),
        (
            f"--scoring {request.scoring.value} (the abilities are EAP)",
            request.scoring is not AbilityMethod.EAP,
        ),
    )
    refuse_given(given, "{flag} does not apply to a mixed calibration (--continuous)")
    if request.continuous_model not in CONTINUOUS_CHOICES:
        raise CatError(
            f"unknown continuous model {request.continuous_model!r}; "
            f"choose from {', '.join(CONTINUOUS_CHOICES)}"
        )
    if request.standard_errors not in ("auto", "oakes", "none"):
        raise CatError(
            f"--standard-errors {request.standard_errors} is not available for a mixed pool; "
            "use auto, oakes or none"
        )
    check_on_off_priors(request, "mixed")
    _check_outputs(request)


def _check_outputs(request: CalibrationRequest) -> None:
    """Both parts' files or neither; with a pool, one file holds both kinds of scores."""
    pool, out, continuous_out = request.pool, request.out, request.continuous_out
    if pool is not None and request.continuous_given:
        raise CatError(
            "with --pool, RESPONSES holds both kinds of scores (the pool's items say which "
            "are continuous): leave out --continuous"
        )
    if (out is None) != (continuous_out is None):
        raise CatError(
            "say where both parts' parameters go: --out PARAMS.csv --continuous-out "
            "CONTINUOUS.csv" + ("" if pool is None else " (or neither, with --pool)")
        )
    if out is not None and continuous_out is not None and out.resolve() == continuous_out.resolve():
        raise CatError("--out and --continuous-out must be two files")


def _read(request: CalibrationRequest, questions: QuestionSet | None) -> MixedResponses:
    """Both kinds of scores: from one file on the pool's items, from two files (or
    objects) aligned by subject, or as given; if enough subjects answered."""
    if questions is not None and request.source is not None:
        data = read_mixed_responses(
            request.source,
            continuous=[item.id for item in questions.items if item.continuous],
            n_categories={i.id: i.max_score + 1 for i in questions.items if not i.continuous},
            id_column=request.id_column,
        )
    elif not request.continuous_given:
        data = given_responses(request, MixedResponses, "a MixedResponses")
        if questions is not None and data.discrete is not None:
            data = MixedResponses(on_pool_scales(data.discrete, questions), data.continuous)
    else:
        scored = (
            read_scored_responses(request.source, id_column=request.id_column)
            if request.source is not None
            else given_responses(request, PolytomousResponses, "a PolytomousResponses")
        )
        data = aligned_responses(scored, _continuous(request))
    names = request.name
    if request.continuous_source is not None:
        names += f" and {request.continuous_source.name}"
    at_least_min_subjects(
        data.observed,
        f"{{answering}} subject(s) with answers in {names}; a calibration",
    )
    if data.continuous is None:
        raise CatError(f"{request.name} answers none of the pool's continuous items")
    return data


def _continuous(request: CalibrationRequest) -> ContinuousResponses:
    """The continuous scores beside the scored ones, from their file or as given."""
    if request.continuous_source is not None:
        return read_continuous_responses(request.continuous_source, id_column=request.id_column)
    given = request.continuous
    if not isinstance(given, ContinuousResponses):
        raise CatError(
            f"continuous must be a path or a ContinuousResponses, got {type(given).__name__}"
        )
    return given


def _fit(
    request: CalibrationRequest,
    data: MixedResponses,
    questions: QuestionSet | None,
    fold_note: str | None,
) -> Fitted[MixedFit]:
    """The scored items' types and priors, each candidate model of the continuous items
    fitted with them, the one with the lower AIC kept, its standard errors."""
    model = request.model
    types: list[ItemType] | None = None
    discrete_priors = None
    if data.discrete is not None:
        overrides = None
        if questions is not None:
            overrides = pool_item_types(questions, data.discrete, ItemType(model), request.guessing)
        types = item_types_for(data.discrete, ItemType(model), bool(request.guessing), overrides)
        discrete_priors = (
            PolytomousPriors.weakly_informative(types)
            if request.priors_on
            else PolytomousPriors.none()
        )
        if not discrete_priors.identifying:
            refuse_skipped_scores(data.discrete, request.name)
    choice = request.continuous_model
    candidates = list(CONTINUOUS_MODELS) if choice == "auto" else [choice]
    fits: dict[str, MixedCalibrator] = {}
    notes: list[str] = [fold_note] if fold_note else []
    for k, name in enumerate(candidates):
        request.tell(0.8 * k / len(candidates), f"fitting {model} + {name}")
        calibrator = MixedCalibrator(
            types,
            name,
            discrete_priors=discrete_priors,
            continuous_priors=(
                ContinuousPriors.weakly_informative()
                if request.priors_on
                else ContinuousPriors.none()
            ),
            epsilon=request.epsilon,
            n_quad=request.quad_points,
            tol=request.tol,
            max_iter=request.max_iter,
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DataWarning)
            fits[name] = calibrator.fit(data)
        notes += [str(w.message) for w in caught if issubclass(w.category, DataWarning)]
    chosen = min(fits, key=lambda name: fits[name].aic_)
    fit = fits[chosen]
    params = fit.params_
    se_method, se_note = oakes_unless_too_many(request.standard_errors, fit.n_parameters_)
    if se_note:
        notes.append(se_note)
    if se_method is not None:
        request.tell(0.85, "standard errors (joint information)")

        def se_progress(done: int, total: int) -> None:
            what = f"standard errors (joint information): parameter {done:,} of {total:,}"
            request.tell(0.85 + 0.1 * done / total, what)

        params = fit_standard_errors(fit, data, se_method, se_progress).apply(params)
    report = mixed_report(request, data, fit, params, fits, se_method, notes)
    detail = MixedFit(data, fit, params, fits)
    return Fitted(report, params, detail, done=f"{model} + {chosen} fitted")


def _write(request: CalibrationRequest, fitted: Fitted[MixedFit]) -> list[Path]:
    """The scored items' parameters to ``out`` (none without scored items), the
    continuous ones' to ``continuous_out``."""
    out, continuous_out = request.out, request.continuous_out
    if out is None or continuous_out is None:
        return []
    params = fitted.detail.params
    written = []
    if params.discrete is not None:
        write_polytomous_params(params.discrete, out)
        written.append(out)
    assert params.continuous is not None
    write_continuous_params(params.continuous, continuous_out)
    return [*written, continuous_out]


def _score(request: CalibrationRequest, fitted: Fitted[MixedFit]) -> MixedScores:
    request.tell(0.95, "scoring the subjects (eap)")
    return mixed_scores(fitted.detail.data, fitted.detail.params)


def _abilities(scores: MixedScores) -> Abilities:
    return as_abilities(scores, "eap")


def _store(
    request: CalibrationRequest,
    fitted: Fitted[MixedFit],
    scores: MixedScores,
    questions: QuestionSet,
    folds: int | None,
) -> Stored:
    """The pool's params.csv, continuous_params.csv and references
    (``cat.pools.scored_pool``), with the IRT design's cross-fitted errors."""
    assert request.pool is not None
    detail = fitted.detail
    data, fit = detail.data, detail.fit
    chosen = next(name for name, f in detail.fits.items() if f is fit)
    kinds = list(fit.params_.item_types)
    provenance = {
        "method": "em",
        "model": f"{request.model}+{chosen}",
        "item_types": {k: kinds.count(k) for k in sorted(set(kinds))},
        "priors": {
            "scored": None if fit.discrete_priors_ is None else fit.discrete_priors_.describe(),
            "continuous": (
                None if fit.continuous_priors_ is None else fit.continuous_priors_.describe()
            ),
        },
        "seed": request.seed,
        "n_subjects": data.n_subjects,
        "n_items": data.n_items,
        "loglik": fit.loglik_,
        "converged": fit.converged_,
        "scoring": "eap",
        "source": request.name,
    }
    stored = record_scored_pool(
        request.pool,
        questions,
        data,
        detail.params,
        scores,
        provenance,
        cross_fit=folds,
        lengths=request.cross_fit_lengths,
        seed=request.seed,
        progress=request.cross_fit_progress,
    )
    errors = None if stored.errors is None else {DesignName.IRT.value: stored.errors}
    return Stored(errors, stored.written)


def aligned_responses(
    discrete: PolytomousResponses, continuous: ContinuousResponses
) -> MixedResponses:
    """The two files' answers over the same subjects: the scored file's, in its order,
    then those only in the continuous file; a subject missing from a file has no answer
    there. An item in both files is refused."""
    both = set(discrete.item_ids) & set(continuous.item_ids)
    if both:
        raise CatError(
            f"item {sorted(both)[0]!r} is in both the scored and the continuous file "
            f"({len(both)} item(s) in both); an item has one kind of score"
        )
    own = set(discrete.subject_ids)
    subjects = list(discrete.subject_ids) + [s for s in continuous.subject_ids if s not in own]
    if subjects == list(discrete.subject_ids) == list(continuous.subject_ids):
        return MixedResponses(discrete, continuous)
    rows = {s: i for i, s in enumerate(subjects)}
    disc = np.full((len(subjects), discrete.n_items), np.nan)
    disc[[rows[s] for s in discrete.subject_ids]] = discrete.as_float()
    cont = np.full((len(subjects), continuous.n_items), np.nan)
    cont[[rows[s] for s in continuous.subject_ids]] = continuous.values
    return MixedResponses(
        PolytomousResponses.from_array(
            disc, subjects, discrete.item_ids, n_categories=discrete.n_categories
        ),
        ContinuousResponses.from_array(cont, subjects, continuous.item_ids),
    )


MIXED: Family[MixedResponses, MixedFit, MixedScores] = Family(
    name="mixed",
    models=(),
    check=_check,
    read=_read,
    fit=_fit,
    write=_write,
    score=_score,
    abilities=_abilities,
    store=_store,
)
