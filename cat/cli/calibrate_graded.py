"""``cat calibrate --model graded|gpcm|sequential``: the flags that apply, the call to
``cat.pools.graded_calibration.calibrate_scored`` and its summary table."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.table import Table

from cat.cli.common import ModelChoice, fail, print_cross_fit, progress_bar, say, stdout, time_text
from cat.engine.names import DesignName
from irt.names import AbilityMethod, CalibrationMethod

if TYPE_CHECKING:
    from cat.pools.graded_calibration import GradedCalibrationReport

# How each model is named in the summary's title.
_TITLES = {"graded": "Graded response", "gpcm": "Generalized partial credit"}


class StandardErrorChoice(StrEnum):
    """``--standard-errors`` (``cat.pools.graded_calibration.SE_CHOICES``)."""

    AUTO = "auto"
    OAKES = "oakes"
    XPD = "xpd"
    NONE = "none"


def refuse_inapplicable(
    model: ModelChoice,
    *,
    method: CalibrationMethod,
    groups: Path | None,
    dims: int | None,
    criterion: object | None,
) -> None:
    """Fail, naming the first flag given that a graded model does not take."""
    given = (
        (method is CalibrationMethod.BAYES, "--method bayes"),
        (groups is not None, "--groups"),
        (dims is not None, "--dims"),
        (criterion is not None, "--criterion"),
    )
    for present, flag in given:
        if present:
            raise fail(f"{flag} does not apply to --model {model.value}")


def refuse_graded_only(standard_errors: StandardErrorChoice, collapse_scores: bool) -> None:
    """Fail on a flag of the graded models given to a binary or multidimensional one."""
    if standard_errors is not StandardErrorChoice.AUTO:
        raise fail(
            "--standard-errors applies to --model graded, gpcm, sequential, crm and beta only"
        )
    if collapse_scores:
        raise fail("--collapse-scores applies to --model graded, gpcm and sequential only")


def calibrate_graded(
    responses: Path,
    model: ModelChoice,
    *,
    out: Path | None,
    report: Path | None,
    abilities: Path | None,
    scoring: AbilityMethod,
    seed: int,
    priors: bool,
    max_iter: int,
    tol: float,
    quad_points: int,
    id_column: bool,
    standard_errors: StandardErrorChoice,
    guessing: bool | None,
    collapse_scores: bool,
    pool: Path | None,
    cross_fit: int | None,
    cross_fit_lengths: list[int],
    cross_fit_fallback: bool = False,
) -> None:
    """Run the graded calibration and print its notes and summary."""
    from cat.pools.graded_calibration import calibrate_scored

    with progress_bar(f"calibrating {model.value}", total=1.0) as update:

        def progress(done: float, status: str) -> None:
            update(completed=done, description=status)

        def cross_fitting(what: str, done: float) -> None:
            update(completed=done, description=f"cross-fit: {what}")

        outcome = calibrate_scored(
            responses,
            model=model.value,
            out=out,
            report=report,
            abilities=abilities,
            scoring=scoring,
            seed=seed,
            priors=priors,
            max_iter=max_iter,
            tol=tol,
            quad_points=quad_points,
            id_column=id_column,
            standard_errors=standard_errors.value,
            guessing=guessing,
            collapse_scores=collapse_scores,
            progress=progress,
            pool=pool,
            cross_fit=cross_fit,
            cross_fit_lengths=cross_fit_lengths,
            cross_fit_progress=cross_fitting,
            cross_fit_fallback=cross_fit_fallback,
        )
    for message in outcome.report.data_notes:
        say(f"note: {message}")
    if outcome.cross_fit is not None:
        print_cross_fit({DesignName.IRT.value: outcome.cross_fit})
    elif pool is not None:
        say("no cross-fit (--no-cross-fit): cat assess will give an interval from theta alone")
    print_graded_summary(outcome.report)
    if out is not None:
        say(f"parameters written to {out}")
    if pool is not None:
        say(
            f"pool {pool} updated: params.csv, reference.jsonl, reference_answers.csv.gz, pool.json"
        )


def print_graded_summary(report: GradedCalibrationReport) -> None:
    """The fit in a table, as the binary path's summary."""
    title = _TITLES.get(report.model, report.model.capitalize())
    table = Table(title=f"{title} calibration ({report.method})", show_header=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    table.add_row("subjects x items", f"{report.n_subjects:,} x {report.n_items:,}")
    table.add_row("responses", f"{report.n_responses:,} ({report.missing_share:.1%} missing)")
    by_count = sorted(report.categories.items(), key=lambda kv: -int(kv[0]))
    table.add_row("categories", ", ".join(f"{n:,} items with {k}" for k, n in by_count))
    table.add_row("item types", ", ".join(f"{k} {n:,}" for k, n in report.item_types.items()))
    table.add_row("log-likelihood", f"{report.loglik:,.3f}")
    table.add_row("AIC / BIC", f"{report.aic:,.1f} / {report.bic:,.1f}")
    state = "converged" if report.converged else "NOT converged"
    table.add_row("iterations", f"{report.n_iter} ({state})")
    table.add_row("time", time_text(report.seconds))
    names = {"a": "a", "d": "d (thresholds)", "c": "c (3PL items)"}
    for name, s in report.parameters.items():
        table.add_row(
            names.get(name, name),
            f"mean {s['mean']:.3f}  sd {s['sd']:.3f}  range [{s['min']:.3f}, {s['max']:.3f}]",
        )
    priors = ", ".join(prior_text(k, v) for k, v in report.priors.items())
    table.add_row("priors", priors or "none (marginal ML)")
    table.add_row("standard errors", report.standard_errors or "not computed")
    stdout.print(table)


def prior_text(name: str, spec: dict[str, Any]) -> str:
    """``a ~ lognormal(0, 0.5)`` from a prior's description (``describe()``)."""
    args = ", ".join(f"{v:g}" for k, v in spec.items() if k != "dist")
    return f"{name} ~ {spec['dist']}({args})"
