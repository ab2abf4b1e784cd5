"""``cat calibrate --model crm|beta``: the flags that apply, the call to
``cat.pools.continuous_calibration.calibrate_continuous`` and its summary table."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table

from cat.cli.calibrate_graded import prior_text
from cat.cli.common import ModelChoice, fail, progress_bar, say, stdout, time_text

if TYPE_CHECKING:
    from cat.pools.continuous_calibration import ContinuousCalibrationReport

_TITLES = {"crm": "Continuous response model", "beta": "Beta IRT"}


def refuse_for_continuous(model: ModelChoice, given: dict[str, bool]) -> None:
    """Fail, naming the first flag given that a continuous model does not take."""
    for flag, present in given.items():
        if present:
            raise fail(f"{flag} does not apply to --model {model.value}")


def calibrate_continuous_cli(
    responses: Path,
    model: ModelChoice,
    *,
    out: Path | None,
    report: Path | None,
    abilities: Path | None,
    seed: int,
    priors: bool,
    max_iter: int,
    tol: float,
    quad_points: int,
    id_column: bool,
    standard_errors: str,
) -> None:
    """Run the continuous calibration and print its notes and summary."""
    from cat.pools.continuous_calibration import calibrate_continuous

    with progress_bar(f"calibrating {model.value}", total=1.0) as update:

        def progress(done: float, status: str) -> None:
            update(completed=done, description=status)

        outcome = calibrate_continuous(
            responses,
            model=model.value,
            out=out,
            report=report,
            abilities=abilities,
            seed=seed,
            priors=priors,
            max_iter=max_iter,
            tol=tol,
            quad_points=quad_points,
            id_column=id_column,
            standard_errors=standard_errors,
            progress=progress,
        )
    for message in outcome.report.data_notes:
        say(f"note: {message}")
    _print(outcome.report)
    say(f"parameters written to {out}")


def _print(report: ContinuousCalibrationReport) -> None:
    title = _TITLES.get(report.model, report.model)
    table = Table(title=f"{title} calibration ({report.method})", show_header=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    table.add_row("subjects x items", f"{report.n_subjects:,} x {report.n_items:,}")
    table.add_row("responses", f"{report.n_responses:,} ({report.missing_share:.1%} missing)")
    table.add_row("clipped to [ε, 1 − ε]", f"{report.n_clipped:,} scores (ε = {report.epsilon:g})")
    table.add_row("log-likelihood", f"{report.loglik:,.3f}")
    table.add_row("AIC / BIC", f"{report.aic:,.1f} / {report.bic:,.1f}")
    state = "converged" if report.converged else "NOT converged"
    table.add_row("iterations", f"{report.n_iter} ({state})")
    table.add_row("time", time_text(report.seconds))
    for name, s in report.parameters.items():
        table.add_row(
            name,
            f"mean {s['mean']:.3f}  sd {s['sd']:.3f}  range [{s['min']:.3f}, {s['max']:.3f}]",
        )
    priors = ", ".join(prior_text(k, v) for k, v in report.priors.items())
    table.add_row("priors", priors or "none (marginal ML)")
    table.add_row("standard errors", report.standard_errors or "not computed")
    stdout.print(table)
