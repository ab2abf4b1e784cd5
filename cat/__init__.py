"""Rank large language models by computerized adaptive testing.

The library's public API; the ``cat`` command line is a thin layer over it::

    import cat
    pool = cat.load_pool("item_pools/demo-en")
    result = cat.assess(pool, cat.SimulatedExaminee(theta=0.8, seed=1), length=100)
    print(result.theta, result.se, result.predicted_accuracy.value, result.rank.position)
    result.model_dump(mode="json")   # the same keys as RESULT.json

Each command is one function here returning a typed result (pydantic) whose
``model_dump(mode="json")`` is the file the command writes: ``assess``, ``calibrate``,
``simulate``, ``validate``, ``summarize_pool`` (``cat pool info``), ``validate_pool``,
``fit_pool``, ``diff_pools``, ``recalibrate_pool``, ``compare`` (``cat compare``;
``compare_results`` for two RESULT.json files), ``leaderboard`` (``cat leaderboard``;
``write_leaderboard`` and ``write_leaderboard_html`` write its table and page). Paths may
be given as str or ``os.PathLike``, a pool as loaded (``load_pool``) or as its folder,
and every problem with the input is a ``CatError`` naming the argument.

Where things live, lowest floor first (each imports only from the floors below it;
docs/development.md, "Architecture"): ``cat.engine`` (estimators, selection,
constraints, exposure, stopping, simulation, the registry of names), ``cat.designs``
(the reference designs), ``cat.prediction`` (predictors, conformal intervals, cross-fit,
replays), ``cat.pools`` (loading, import, calibration, recalibration, diff, fit,
summary), ``cat.assessment`` (the session, examinees, the run, the result) and
``cat.validation`` (``cat validate``), ``cat.reports`` (the HTML report) and
``cat.comparison`` (``cat compare``), ``cat.leaderboards`` (the table across runs) and
``cat.cli`` (parsing and rendering only).

This module stays light: the ``cat`` console script imports it before deciding whether a
call is for us or for the system ``cat``, so names are loaded on first use.
"""

from __future__ import annotations

# A plain name rather than ``typing.TYPE_CHECKING``: type checkers treat any variable of
# this name as true, and at run time the block below imports nothing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from cat.assessment.assess import assess
    from cat.assessment.examinees import (
        EndpointExaminee,
        Examinee,
        ReplayExaminee,
        SimulatedExaminee,
    )
    from cat.assessment.generation_settings import GenerationSettings
    from cat.assessment.many import ModelRun, assess_many
    from cat.assessment.result import AssessmentResult
    from cat.assessment.session import AssessmentSession, SessionConfig
    from cat.comparison.compare import compare
    from cat.comparison.from_results import compare_results
    from cat.comparison.result import CompareResult
    from cat.engine.registry import (
        ESTIMATOR_NAMES,
        POLICY_NAMES,
        CriterionName,
        DesignChoice,
        EstimatorName,
        PolicyName,
    )
    from cat.engine.simulate_job import simulate
    from cat.engine.simulate_result import SimulationResult
    from cat.errors import CatError
    from cat.leaderboards.build import leaderboard
    from cat.leaderboards.files import write_leaderboard
    from cat.leaderboards.page import write_leaderboard_html
    from cat.leaderboards.result import Leaderboard, LeaderboardRow
    from cat.pools.calibration_job import CalibrationOutcome, CalibrationReport, calibrate
    from cat.pools.check import validate_pool
    from cat.pools.diff import diff_pools
    from cat.pools.fit import fit_pool
    from cat.pools.fit_report import PoolFitReport
    from cat.pools.loading import load_pool
    from cat.pools.recalibration_job import recalibrate_pool
    from cat.pools.summary import PoolSummary, summarize_pool
    from cat.reports.html import write_report
    from cat.validation.report import ValidationReport, validate

#: Public name → (module, attribute in it).
_WHERE: dict[str, tuple[str, str]] = {
    "CatError": ("cat.errors", "CatError"),
    "load_pool": ("cat.pools.loading", "load_pool"),
    "assess": ("cat.assessment.assess", "assess"),
    "assess_many": ("cat.assessment.many", "assess_many"),
    "ModelRun": ("cat.assessment.many", "ModelRun"),
    "GenerationSettings": ("cat.assessment.generation_settings", "GenerationSettings"),
    "AssessmentResult": ("cat.assessment.result", "AssessmentResult"),
    "compare": ("cat.comparison.compare", "compare"),
    "compare_results": ("cat.comparison.from_results", "compare_results"),
    "CompareResult": ("cat.comparison.result", "CompareResult"),
    "Examinee": ("cat.assessment.examinees", "Examinee"),
    "SimulatedExaminee": ("cat.assessment.examinees", "SimulatedExaminee"),
    "ReplayExaminee": ("cat.assessment.examinees", "ReplayExaminee"),
    "EndpointExaminee": ("cat.assessment.examinees", "EndpointExaminee"),
    "AssessmentSession": ("cat.assessment.session", "AssessmentSession"),
    "SessionConfig": ("cat.assessment.session", "SessionConfig"),
    "PolicyName": ("cat.engine.registry", "PolicyName"),
    "EstimatorName": ("cat.engine.registry", "EstimatorName"),
    "DesignChoice": ("cat.engine.registry", "DesignChoice"),
    "CriterionName": ("cat.engine.registry", "CriterionName"),
    "POLICY_NAMES": ("cat.engine.registry", "POLICY_NAMES"),
    "ESTIMATOR_NAMES": ("cat.engine.registry", "ESTIMATOR_NAMES"),
    "simulate": ("cat.engine.simulate_job", "simulate"),
    "SimulationResult": ("cat.engine.simulate_result", "SimulationResult"),
    "validate": ("cat.validation.report", "validate"),
    "ValidationReport": ("cat.validation.report", "ValidationReport"),
    "calibrate": ("cat.pools.calibration_job", "calibrate"),
    "CalibrationReport": ("cat.pools.calibration_job", "CalibrationReport"),
    "CalibrationOutcome": ("cat.pools.calibration_job", "CalibrationOutcome"),
    "summarize_pool": ("cat.pools.summary", "summarize_pool"),
    "PoolSummary": ("cat.pools.summary", "PoolSummary"),
    "validate_pool": ("cat.pools.check", "validate_pool"),
    "fit_pool": ("cat.pools.fit", "fit_pool"),
    "PoolFitReport": ("cat.pools.fit_report", "PoolFitReport"),
    "diff_pools": ("cat.pools.diff", "diff_pools"),
    "recalibrate_pool": ("cat.pools.recalibration_job", "recalibrate_pool"),
    "write_report": ("cat.reports.html", "write_report"),
    "leaderboard": ("cat.leaderboards.build", "leaderboard"),
    "Leaderboard": ("cat.leaderboards.result", "Leaderboard"),
    "LeaderboardRow": ("cat.leaderboards.result", "LeaderboardRow"),
    "write_leaderboard": ("cat.leaderboards.files", "write_leaderboard"),
    "write_leaderboard_html": ("cat.leaderboards.page", "write_leaderboard_html"),
}

__all__ = [
    "ESTIMATOR_NAMES",
    "POLICY_NAMES",
    "AssessmentResult",
    "AssessmentSession",
    "CalibrationOutcome",
    "CalibrationReport",
    "CatError",
    "CompareResult",
    "CriterionName",
    "DesignChoice",
    "EndpointExaminee",
    "EstimatorName",
    "Examinee",
    "GenerationSettings",
    "Leaderboard",
    "LeaderboardRow",
    "ModelRun",
    "PolicyName",
    "PoolFitReport",
    "PoolSummary",
    "ReplayExaminee",
    "SessionConfig",
    "SimulatedExaminee",
    "SimulationResult",
    "ValidationReport",
    "assess",
    "assess_many",
    "calibrate",
    "compare",
    "compare_results",
    "diff_pools",
    "fit_pool",
    "leaderboard",
    "load_pool",
    "recalibrate_pool",
    "simulate",
    "summarize_pool",
    "validate",
    "validate_pool",
    "write_leaderboard",
    "write_leaderboard_html",
    "write_report",
]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        from importlib import import_module

        module, attribute = _WHERE[name]
        return getattr(import_module(module), attribute)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    # The public API and the module's dunders; not the helpers this file needs
    # (TYPE_CHECKING, annotations, _WHERE) nor the submodules imported so far.
    return sorted({*__all__, *(n for n in globals() if n.startswith("__") and n.endswith("__"))})
