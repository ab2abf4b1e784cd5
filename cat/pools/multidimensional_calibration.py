"""The multidimensional family of ``cat.calibrate`` (``bifactor``, ``mirt``): the 3PL
fitted as the 0/1 family fits it, then the multidimensional model beside it
(``cat.pools.mirt_calibration``) on the items' groups, one report comparing the two,
its items in mirt_params.csv, and in a pool both models, with that model's design in
the cross-fit.

The 3PL stays the pool's params.csv and scores the references; the multidimensional
model is recorded beside it (pool.json's ``multidimensional`` entry).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cat.engine.registry import CRITERION_NAMES
from cat.errors import CatError
from cat.pools import binary_calibration as binary
from cat.pools.binary_calibration import BinaryFit, CalibrationReport
from cat.pools.calibration import record_multidimensional
from cat.pools.calibration_steps import CalibrationRequest, Family, Fitted, Stored
from cat.pools.mirt_calibration import (
    MultidimensionalFit,
    MultidimensionalModel,
    fit_multidimensional,
)
from cat.pools.report_keys import value_stats
from cat.pools.scenarios import ItemScenarios, read_item_scenarios, scenarios_of
from irt.mirt_model import Structure
from irt.models import ModelKind
from irt.names import ModelGroup, model_names
from irt.responses import ResponseMatrix
from irt.scoring import Abilities
from itempool import MIRT_PARAMS, MultidimensionalEntry, QuestionSet
from itempool.formats.mirt_params import write_mirt_params

__all__ = ["MULTIDIMENSIONAL"]


def _check(request: CalibrationRequest) -> None:
    binary.refuse_scored_only(request)
    if request.criterion is not None and request.dims is not None:
        raise CatError(
            "--criterion is how the bifactor or mirt design picks items: give --model "
            "bifactor, or mirt with one factor per scenario"
        )
    _check_criterion(request)
    if request.dims is not None and request.groups is not None:
        raise CatError("--model mirt takes --dims K (exploratory) or --groups (one factor each)")
    binary.check_pool_folder(request)


def _grouped(request: CalibrationRequest) -> bool:
    """Whether the model takes the items' groups: the bifactor model, and mirt with one
    factor per group (without ``dims``)."""
    return request.model == MultidimensionalModel.BIFACTOR or request.dims is None


def _fit(
    request: CalibrationRequest,
    matrix: ResponseMatrix,
    questions: QuestionSet | None,
    fold_note: str | None,
) -> Fitted[BinaryFit]:
    """The 3PL, then the multidimensional model on the items' groups (from ``groups``
    or the pool's items); the report is the latter's, the 3PL's figures beside."""
    groups = _item_groups(request, matrix, questions) if _grouped(request) else None
    result, uni = binary.fit_unidimensional(request, matrix, ModelKind.THREE_PL, fold_note)
    model = MultidimensionalModel(request.model)
    request.tell(1.0, f"fitting the {model.value} model")
    found = fit_multidimensional(
        matrix,
        model,
        groups,
        request.guessing is not False,
        request.priors_on,
        tol=request.tol,
        max_iter=request.max_iter,
        dims=request.dims,
        unidimensional=result.params,
        unidimensional_priors=result.priors.describe(),
    )
    report = _report(uni, model, found, matrix.n_subjects)
    detail = BinaryFit(matrix, result, groups, found, _figures(report))
    return Fitted(report, result.params, detail, mirt=found.params)


def _item_groups(
    request: CalibrationRequest, matrix: ResponseMatrix, questions: QuestionSet | None
) -> ItemScenarios | None:
    """Each item's scenario from ``groups`` or else from the pool's items."""
    if isinstance(request.groups, Mapping):
        return _given_groups(request.groups, matrix.item_ids)
    if request.groups is not None:
        return read_item_scenarios(request.groups, tuple(matrix.item_ids), request.group_column)
    if questions is None:
        return None
    known = {item.id for item in questions.items}
    missing = [i for i in matrix.item_ids if i not in known]
    if missing:
        raise CatError(f"{len(missing)} answered item(s) are not in the pool (e.g. {missing[0]})")
    return scenarios_of(questions.items, matrix.item_ids)


def _given_groups(groups: Mapping[str, str], item_ids: Sequence[str]) -> ItemScenarios:
    """The scenario of each item from ``groups`` (item id -> scenario), names sorted as
    ``read_item_scenarios`` sorts a file's."""
    missing = [i for i in item_ids if i not in groups]
    if missing:
        raise CatError(
            f"groups: no scenario for {len(missing)} of the {len(item_ids)} items "
            f"(e.g. {', '.join(missing[:5])})"
        )
    names = tuple(sorted({str(groups[i]) for i in item_ids}))
    index = {name: k for k, name in enumerate(names)}
    return ItemScenarios(tuple(index[str(groups[i])] for i in item_ids), names)


def _report(
    uni: CalibrationReport, model: MultidimensionalModel, fit: MultidimensionalFit, n: int
) -> CalibrationReport:
    """The report of the multidimensional fit, the unidimensional one beside it."""
    companion = {
        "model": uni.model,
        "loglik": uni.loglik,
        "n_parameters": uni.n_parameters,
        "aic": uni.aic,
        "bic": uni.bic,
        "converged": uni.converged,
        "seconds": uni.seconds,
    }
    params = fit.params
    if params.structure is Structure.BIFACTOR:
        loaded = params.pattern[:, 1:].any(axis=1)
        summary = {
            "a_general": params.slopes[:, 0],
            "a_specific": params.slopes[loaded, 1:].sum(axis=1),
        }
    else:
        summary = {"a (free slopes)": params.slopes[params.pattern]}
    summary["d"] = params.d
    if fit.params.c is not None:
        summary["c"] = fit.params.c
    return uni.model_copy(
        update={
            "model": model.value,
            "method": fit.method,
            "loglik": fit.loglik,
            "logpost": fit.logpost,
            "n_iter": fit.n_iter,
            "converged": fit.converged,
            "seconds": round(uni.seconds + fit.seconds, 4),
            "priors": fit.priors,
            "settings": {**fit.settings, "guessing": fit.params.guessing},
            "parameters": {name: value_stats(values) for name, values in summary.items()},
            "n_parameters": fit.n_parameters,
            **fit.criteria(n),
            "factors": list(fit.params.factors),
            "unidimensional": companion,
        }
    )


def _write(request: CalibrationRequest, fitted: Fitted[BinaryFit]) -> list[Path]:
    if request.out is None or fitted.mirt is None:
        return []
    write_mirt_params(fitted.mirt, request.out)
    return [request.out]


def _store(
    request: CalibrationRequest,
    fitted: Fitted[BinaryFit],
    abilities: Abilities,
    questions: QuestionSet,
    folds: int | None,
) -> Stored:
    """The 0/1 family's pool (the 3PL in params.csv, the cross-fit with this model's
    design when it has groups), then mirt_params.csv and its manifest entry."""
    found, figures = fitted.detail.multidimensional, fitted.detail.figures
    assert request.pool is not None and found is not None and figures is not None
    stored = binary.store(request, fitted, abilities, questions, folds)
    entry = MultidimensionalEntry.of(found.params, figures, found.offset, request.criterion)
    record_multidimensional(request.pool, found.params, entry.model_dump(mode="json"))
    return Stored(stored.errors, [*stored.written, request.pool / MIRT_PARAMS])


def _figures(report: CalibrationReport) -> dict[str, Any]:
    """The fit's figures for pool.json's ``multidimensional`` entry."""
    return {
        "model": report.model,
        "loglik": report.loglik,
        "n_parameters": report.n_parameters,
        "aic": report.aic,
        "bic": report.bic,
        "converged": report.converged,
        "n_iter": report.n_iter,
        "priors": report.priors,
        "unidimensional": report.unidimensional,
        "date": report.created,
        "package_version": report.package_version,
    }


def _check_criterion(request: CalibrationRequest) -> None:
    if request.criterion is not None and request.criterion not in CRITERION_NAMES:
        raise CatError(
            f"unknown criterion {request.criterion!r}; choose from {', '.join(CRITERION_NAMES)}"
        )


MULTIDIMENSIONAL: Family[ResponseMatrix, BinaryFit, Abilities] = Family(
    name="multidimensional",
    models=model_names(ModelGroup.MULTIDIMENSIONAL),
    check=_check,
    read=binary.read,
    fit=_fit,
    write=_write,
    score=binary.score,
    abilities=binary.BINARY.abilities,
    store=_store,
)
