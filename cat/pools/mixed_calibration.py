"""``cat calibrate SCORES --model graded|gpcm|sequential --continuous SIMILARITY``: one
calibration of a mixed pool, items scored 0..m (binary ones among them) and items
scored in [0, 1] (a similarity such as ROUGE-L), on one θ by
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cat.errors import CatError
from cat.pools.continuous_calibration import CONTINUOUS_MODELS, oakes_unless_too_many
from cat.pools.graded_calibration import (
    GRADED_MODELS,
    MIN_SUBJECTS,
    as_abilities,
    item_types_for,
)
from cat.pools.loading import check_output_folders, read_pool_questions
from cat.pools.report_keys import FitReportHead, scored_fit_figures, value_stats
from cat.pools.scored_data import refuse_skipped_scores
from cat.pools.scored_pool import pool_item_types, record_scored_pool
from cat.prediction.cross_fit import fold_count
from cat.provenance import package_version, utc_now
from irt.continuous_kernels import DEFAULT_EPSILON
from irt.continuous_priors import ContinuousPriors
from irt.continuous_responses import ContinuousResponses
from irt.errors import DataWarning
from irt.fit import FitProgress
from irt.mixed import MixedParams, MixedResponses
from irt.mixed_em import MixedCalibrator
from irt.mixed_scoring import mixed_scores
from irt.mixed_se import fit_standard_errors
from irt.polytomous import ItemType
from irt.polytomous_priors import PolytomousPriors
from irt.polytomous_responses import PolytomousResponses
from itempool import PredictionErrors
from itempool.formats.continuous_params import write_continuous_params
from itempool.formats.mixed_responses import read_mixed_responses
from itempool.formats.params import write_abilities
from itempool.formats.polytomous_params import write_polytomous_params
from itempool.formats.responses import read_scored_responses
from itempool.formats.scores import read_continuous_responses

__all__ = [
    "CONTINUOUS_CHOICES",
    "MixedCalibrationOutcome",
    "MixedCalibrationReport",
    "aligned_responses",
    "calibrate_mixed",
]

#: ``continuous_model``: one of the two models, or the better fitting of them.
CONTINUOUS_CHOICES = ("auto", *CONTINUOUS_MODELS)


class MixedCalibrationReport(FitReportHead):
    """The fit report (``--report``): the CLI contract's keys, then the rest."""

    n_parameters: int
    aic: float
    bic: float
    item_types: dict[str, int]
    #: Mean, sd, min and max of the scored items' a and the continuous items' a, d,
    #: σ (crm) and τ (beta).
    parameters: dict[str, dict[str, dict[str, float]]]
    priors: dict[str, Any]
    standard_errors: str | None
    #: The continuous items' model: "chosen", "requested", and each model fitted with
    #: its loglik, aic and bic.
    continuous_model: dict[str, Any]
    epsilon: float
    n_clipped: int
    seed: int
    settings: dict[str, Any]
    data_notes: list[str]
    input: str
    #: The continuous scores' own file (None when RESPONSES held both, with --pool).
    continuous_input: str | None
    package_version: str
    created: str


@dataclass(frozen=True)
class MixedCalibrationOutcome:
    """What ``calibrate_mixed`` produced, and which files it wrote."""

    report: MixedCalibrationReport
    params: MixedParams
    written: list[Path] = field(default_factory=list)
    # The IRT design's cross-fitted errors stored in the pool (None without).
    cross_fit: PredictionErrors | None = None


def calibrate_mixed(
    responses: Path,
    continuous: Path | None = None,
    *,
    pool: Path | None = None,
    cross_fit: int | None = None,
    cross_fit_lengths: Sequence[int] = (100, 250),
    cross_fit_progress: Callable[[str, float], None] | None = None,
    model: str = "graded",
    continuous_model: str = "auto",
    out: Path | None = None,
    continuous_out: Path | None = None,
    report: Path | None = None,
    abilities: Path | None = None,
    seed: int = 0,
    priors: bool = True,
    max_iter: int = 500,
    tol: float = 1e-4,
    quad_points: int = 61,
    id_column: bool = True,
    standard_errors: str = "auto",
    guessing: bool | None = None,
    epsilon: float = DEFAULT_EPSILON,
    progress: FitProgress | None = None,
    cross_fit_fallback: bool = False,
) -> MixedCalibrationOutcome:
    """Fit the scores 0..m in ``responses`` (``model`` for items with 3+ scores, 2PL or
    with ``guessing`` 3PL for 0/1 ones) and the scores in [0, 1] in ``continuous``
    (``continuous_model``: "crm", "beta" or "auto") together, and write the scored
    items' parameters to ``out``, the continuous ones' to ``continuous_out``, the EAP
    abilities to ``abilities`` and the report to ``report``. ``standard_errors``:
    "auto" (up to ``AUTO_SE_MAX_PARAMETERS`` free parameters), "oakes" or "none". EM
    is deterministic: ``seed`` is only recorded.

    With ``pool`` (a pool folder with continuous items) ``responses`` holds both kinds
    of scores, read on the scales of the pool's items (``continuous`` is not given),
    single-choice items get the 3PL unless ``guessing`` is False, and the calibration
    is stored in the pool (``cat.pools.scored_pool``) with the IRT design's errors
    cross-fitted in ``cross_fit`` folds at ``cross_fit_lengths`` items (with
    ``cross_fit_fallback``, the folds being a default, too few subjects for them give
    leave-one-out and a note).

    Raises:
        CatError: a setting, the data or an output folder is unusable.
        IRTError: a file is unreadable or malformed.
    """
    if model not in GRADED_MODELS:
        raise CatError(f"unknown graded model {model!r}; choose from {', '.join(GRADED_MODELS)}")
    if continuous_model not in CONTINUOUS_CHOICES:
        raise CatError(
            f"unknown continuous model {continuous_model!r}; "
            f"choose from {', '.join(CONTINUOUS_CHOICES)}"
        )
    if standard_errors not in ("auto", "oakes", "none"):
        raise CatError(
            f"--standard-errors {standard_errors} is not available for a mixed pool; "
            "use auto, oakes or none"
        )
    _check_outputs(pool, continuous, out, continuous_out, cross_fit)
    check_output_folders(out, report, abilities, continuous_out)
    questions = read_pool_questions(pool) if pool is not None else None
    if questions is not None:
        data = read_mixed_responses(
            responses,
            continuous=[item.id for item in questions.items if item.continuous],
            n_categories={i.id: i.max_score + 1 for i in questions.items if not i.continuous},
            id_column=id_column,
        )
    else:
        assert continuous is not None
        data = aligned_responses(
            read_scored_responses(responses, id_column=id_column),
            read_continuous_responses(continuous, id_column=id_column),
        )
    answering = int(data.observed.any(axis=1).sum())
    if answering < MIN_SUBJECTS:
        names = responses.name + ("" if continuous is None else f" and {continuous.name}")
        raise CatError(
            f"{answering} subject(s) with answers in {names}; a calibration needs at "
            f"least {MIN_SUBJECTS}"
        )
    if data.continuous is None:
        raise CatError(f"{responses.name} answers none of the pool's continuous items")
    fold_note = None
    if cross_fit is not None:
        cross_fit, fold_note = fold_count(data.n_subjects, cross_fit, not cross_fit_fallback)
    types: list[ItemType] | None = None
    discrete_priors = None
    if data.discrete is not None:
        overrides = None
        if questions is not None:
            overrides = pool_item_types(questions, data.discrete, ItemType(model), guessing)
        types = item_types_for(data.discrete, ItemType(model), bool(guessing), overrides)
        discrete_priors = (
            PolytomousPriors.weakly_informative(types) if priors else PolytomousPriors.none()
        )
        if not discrete_priors.identifying:
            refuse_skipped_scores(data.discrete, responses.name)
    candidates = list(CONTINUOUS_MODELS) if continuous_model == "auto" else [continuous_model]
    fits: dict[str, MixedCalibrator] = {}
    notes: list[str] = [fold_note] if fold_note else []
    for k, name in enumerate(candidates):
        _tell(progress, 0.8 * k / len(candidates), f"fitting {model} + {name}")
        calibrator = MixedCalibrator(
            types,
            name,
            discrete_priors=discrete_priors,
            continuous_priors=(
                ContinuousPriors.weakly_informative() if priors else ContinuousPriors.none()
            ),
            epsilon=epsilon,
            n_quad=quad_points,
            tol=tol,
            max_iter=max_iter,
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DataWarning)
            fits[name] = calibrator.fit(data)
        notes += [str(w.message) for w in caught if issubclass(w.category, DataWarning)]
    chosen = min(fits, key=lambda name: fits[name].aic_)
    fit = fits[chosen]
    params = fit.params_
    se_method, se_note = oakes_unless_too_many(standard_errors, fit.n_parameters_)
    if se_note:
        notes.append(se_note)
    if se_method is not None:
        _tell(progress, 0.85, "standard errors (joint information)")

        def se_progress(done: int, total: int) -> None:
            what = f"standard errors (joint information): parameter {done:,} of {total:,}"
            _tell(progress, 0.85 + 0.1 * done / total, what)

        params = fit_standard_errors(fit, data, se_method, se_progress).apply(params)
    written = []
    if out is not None and continuous_out is not None:
        if params.discrete is not None:
            write_polytomous_params(params.discrete, out)
            written.append(out)
        assert params.continuous is not None
        write_continuous_params(params.continuous, continuous_out)
        written.append(continuous_out)
    scores = None
    if abilities is not None or pool is not None:
        _tell(progress, 0.95, "scoring the subjects (eap)")
        scores = mixed_scores(data, params)
    if abilities is not None and scores is not None:
        write_abilities(as_abilities(scores, "eap"), abilities)
        written.append(abilities)
    errors = None
    if pool is not None and questions is not None and scores is not None:
        stored = record_scored_pool(
            pool,
            questions,
            data,
            params,
            scores,
            _provenance(responses, data, fit, f"{model}+{chosen}", seed),
            cross_fit=cross_fit,
            lengths=cross_fit_lengths,
            seed=seed,
            progress=cross_fit_progress,
        )
        errors = stored.errors
        written.extend(stored.written)
    fit_report = _report(
        (responses, continuous),
        data,
        fit,
        params,
        fits,
        continuous_model,
        model,
        se_method,
        seed=seed,
        notes=notes,
    )
    if report is not None:
        fit_report.write_json(report)
        written.append(report)
    _tell(progress, 1.0, f"{model} + {chosen} fitted")
    return MixedCalibrationOutcome(fit_report, params, written, errors)


def _check_outputs(
    pool: Path | None,
    continuous: Path | None,
    out: Path | None,
    continuous_out: Path | None,
    cross_fit: int | None,
) -> None:
    if pool is None and continuous is None:
        raise CatError(
            "say which scores are continuous: --continuous FILE, or a --pool whose items "
            "say it (continuous: true)"
        )
    if pool is not None and continuous is not None:
        raise CatError(
            "with --pool, RESPONSES holds both kinds of scores (the pool's items say which "
            "are continuous): leave out --continuous"
        )
    if (out is None) != (continuous_out is None) or (pool is None and out is None):
        raise CatError(
            "say where both parts' parameters go: --out PARAMS.csv --continuous-out "
            "CONTINUOUS.csv" + ("" if pool is None else " (or neither, with --pool)")
        )
    if out is not None and continuous_out is not None and out.resolve() == continuous_out.resolve():
        raise CatError("--out and --continuous-out must be two files")
    if cross_fit is not None and pool is None:
        raise CatError("--cross-fit stores its errors in a pool: give --pool DIR")
    if cross_fit is not None and cross_fit < 2:
        raise CatError(f"--cross-fit needs at least 2 folds, got {cross_fit}")


def _provenance(
    source: Path, data: MixedResponses, fit: MixedCalibrator, model: str, seed: int
) -> dict[str, Any]:
    """pool.json's ``calibration`` entry."""
    kinds = list(fit.params_.item_types)
    return {
        "method": "em",
        "model": model,
        "item_types": {k: kinds.count(k) for k in sorted(set(kinds))},
        "priors": {
            "scored": None if fit.discrete_priors_ is None else fit.discrete_priors_.describe(),
            "continuous": (
                None if fit.continuous_priors_ is None else fit.continuous_priors_.describe()
            ),
        },
        "seed": seed,
        "n_subjects": data.n_subjects,
        "n_items": data.n_items,
        "loglik": fit.loglik_,
        "converged": fit.converged_,
        "scoring": "eap",
        "source": source.name,
    }


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


def _report(
    sources: tuple[Path, Path | None],
    data: MixedResponses,
    fit: MixedCalibrator,
    params: MixedParams,
    fits: dict[str, MixedCalibrator],
    requested: str,
    model: str,
    se_method: str | None,
    *,
    seed: int,
    notes: list[str],
) -> MixedCalibrationReport:
    disc, cont = params.discrete, params.continuous
    assert cont is not None and data.continuous is not None
    crm = cont.is_crm
    continuous_parts = {"a": cont.a, "d": cont.d}
    if crm.any():
        continuous_parts["sigma"] = cont.sigma[crm]
    if not crm.all():
        continuous_parts["tau"] = cont.tau[~crm]
    described = fit.describe()
    chosen = next(name for name, f in fits.items() if f is fit)
    return MixedCalibrationReport(
        **scored_fit_figures(fit, f"{model}+{chosen}", data.observed, list(params.item_types)),
        parameters={
            "scored": {} if disc is None else {"a": value_stats(disc.a)},
            "continuous": {k: value_stats(v) for k, v in continuous_parts.items()},
        },
        priors={
            "scored": described["discrete_priors"],
            "continuous": described["continuous_priors"],
        },
        standard_errors=se_method,
        continuous_model={
            "requested": requested,
            "chosen": chosen,
            "rule": "lower AIC (same data, same number of parameters)",
            "fits": {
                name: {"loglik": f.loglik_, "aic": f.aic_, "bic": f.bic_}
                for name, f in fits.items()
            },
        },
        epsilon=fit.epsilon,
        n_clipped=data.continuous.n_clipped(fit.epsilon),
        seed=seed,
        settings={k: described[k] for k in ("method", "n_quad", "bound", "tol", "max_iter")},
        data_notes=notes,
        input=str(sources[0]),
        continuous_input=None if sources[1] is None else str(sources[1]),
        package_version=package_version(),
        created=utc_now(),
    )


def _tell(progress: FitProgress | None, done: float, what: str) -> None:
    if progress is not None:
        progress(done, what)
