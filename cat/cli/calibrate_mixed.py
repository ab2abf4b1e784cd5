"""``cat calibrate SCORES --model graded|gpcm|sequential --continuous SIMILARITY``: the
flags that apply, the call to ``cat.pools.mixed_calibration.calibrate_mixed`` and its
summary table."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table

from cat.cli.common import ModelChoice, fail, print_cross_fit, progress_bar, say, stdout, time_text

if TYPE_CHECKING:
    from cat.pools.mixed_calibration import MixedCalibrationReport


class ContinuousModelChoice(StrEnum):
    """``--continuous-model`` (``cat.pools.mixed_calibration.CONTINUOUS_CHOICES``)."""

    AUTO = "auto"
    CRM = "crm"
    BETA = "beta"


def refuse_for_mixed(model: ModelChoice, given: dict[str, bool]) -> None:
    """Fail unless ``model`` is one for scores 0..m, or if a flag a mixed fit does not
    take was given."""
    if not model.graded:
        raise fail(
            f"--continuous goes with --model graded|gpcm|sequential (the scored items' "
            f"model), not --model {model.value}"
        )
    for flag, present in given.items():
        if present:
            raise fail(f"{flag} does not apply to a mixed calibration (--continuous)")


def has_continuous(pool: Path) -> bool:
    """Whether the pool has continuous items (open items scored in [0, 1])."""
    from cat.pools.loading import read_pool_questions

    return any(item.continuous for item in read_pool_questions(pool).items)


def calibrate_mixed_cli(
    responses: Path,
    continuous: Path | None,
    model: ModelChoice,
    continuous_model: ContinuousModelChoice,
    *,
    pool: Path | None,
    cross_fit: int | None,
    cross_fit_lengths: list[int],
    out: Path | None,
    continuous_out: Path | None,
    report: Path | None,
    abilities: Path | None,
    seed: int,
    priors: bool,
    max_iter: int,
    tol: float,
    quad_points: int,
    id_column: bool,
    standard_errors: str,
    guessing: bool | None,
    cross_fit_fallback: bool = False,
) -> None:
    """Run the mixed calibration and print its notes and summary."""
    from cat.pools.mixed_calibration import calibrate_mixed

    with progress_bar(f"calibrating {model.value} + continuous", total=1.0) as update:

        def progress(done: float, status: str) -> None:
            update(completed=done, description=status)

        def cross_fitting(what: str, done: float) -> None:
            update(completed=done, description=f"cross-fit: {what}")

        outcome = calibrate_mixed(
            responses,
            continuous,
            pool=pool,
            cross_fit=cross_fit,
            cross_fit_lengths=cross_fit_lengths,
            cross_fit_progress=cross_fitting,
            model=model.value,
            continuous_model=continuous_model.value,
            out=out,
            continuous_out=continuous_out,
            report=report,
            abilities=abilities,
            seed=seed,
            priors=priors,
            max_iter=max_iter,
            tol=tol,
            quad_points=quad_points,
            id_column=id_column,
            standard_errors=standard_errors,
            guessing=guessing,
            progress=progress,
            cross_fit_fallback=cross_fit_fallback,
        )
    for message in outcome.report.data_notes:
        say(f"note: {message}")
    if outcome.cross_fit is not None:
        print_cross_fit({"irt": outcome.cross_fit})
    _print(outcome.report)
    if out is not None:
        say(f"parameters written to {out} (scored items) and {continuous_out} (continuous items)")
    if pool is not None:
        say(f"pool {pool} calibrated: params.csv, continuous_params.csv, reference.jsonl")


def _print(report: MixedCalibrationReport) -> None:
    table = Table(title=f"Mixed calibration: {report.model}", show_header=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    table.add_row("subjects x items", f"{report.n_subjects:,} x {report.n_items:,}")
    kinds = ", ".join(f"{n:,} {kind}" for kind, n in report.item_types.items())
    table.add_row("items", kinds)
    table.add_row("responses", f"{report.n_responses:,} ({report.missing_share:.1%} missing)")
    table.add_row("clipped to [ε, 1 − ε]", f"{report.n_clipped:,} scores (ε = {report.epsilon:g})")
    choice = report.continuous_model
    for name, figures in choice["fits"].items():
        mark = " (kept)" if name == choice["chosen"] and len(choice["fits"]) > 1 else ""
        table.add_row(
            f"continuous: {name}",
            f"log-likelihood {figures['loglik']:,.1f}, AIC {figures['aic']:,.1f}{mark}",
        )
    state = "converged" if report.converged else "NOT converged"
    table.add_row("iterations", f"{report.n_iter} ({state})")
    table.add_row("time", time_text(report.seconds, "fitting the kept model"))
    table.add_row("standard errors", report.standard_errors or "not computed")
    stdout.print(table)
