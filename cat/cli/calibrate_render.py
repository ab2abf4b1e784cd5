"""``cat calibrate``'s output: the data's notes, the cross-fit, a summary table of the fit
in its family's terms, and what was written where."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.table import Table

from cat.cli.common import print_cross_fit, say, stdout, time_text
from irt.errors import IRTError
from irt.names import model_named

if TYPE_CHECKING:
    from cat.pools.calibration_job import CalibrationOutcome


def _title(model: str) -> str:
    """How the summary's title names ``model`` (``irt.names.MODELS``' title)."""
    try:
        return model_named(model).title
    except IRTError:  # a family no longer registered: its name
        return model


def render(
    outcome: CalibrationOutcome,
    *,
    out: Path | None,
    continuous_out: Path | None,
    pool: Path | None,
    no_cross_fit: bool,
) -> None:
    """Print the notes, the cross-fit, the summary of ``outcome``'s family and what
    was written."""
    for message in outcome.report.data_notes:
        say(f"note: {message}")
    if outcome.cross_fit is not None:
        print_cross_fit(outcome.cross_fit)
    elif pool is not None and outcome.family in ("binary", "multidimensional"):
        if no_cross_fit:  # else a note said why there is none
            say(
                "no cross-fit (--no-cross-fit): cat assess will run the IRT design with an "
                "interval from theta alone"
            )
    elif pool is not None and outcome.family == "graded":
        say("no cross-fit (--no-cross-fit): cat assess will give an interval from theta alone")
    _SUMMARIES[outcome.family](outcome.report)
    if out is not None:
        written = f"{out} (scored items) and {continuous_out} (continuous items)"
        say(f"parameters written to {written if outcome.family == 'mixed' else out}")
    if pool is not None:
        say(f"pool {pool} {_POOL_FILES[outcome.family](outcome)}")
    if outcome.protocol is not None:
        say(
            f"protocol {outcome.protocol.name} ({outcome.protocol.style} style) from "
            f"{outcome.protocol_source}: cat assess asks the way the references were asked"
        )


def _pool_files(outcome: CalibrationOutcome) -> str:
    extra = ", mirt_params.csv" if outcome.mirt is not None else ""
    return (
        "updated: params.csv, reference.jsonl, reference_answers.csv.gz, "
        f"low_rank.csv{extra}, pool.json"
    )


_POOL_FILES: dict[str, Callable[[CalibrationOutcome], str]] = {
    "binary": _pool_files,
    "multidimensional": _pool_files,
    "graded": lambda _: "updated: params.csv, reference.jsonl, reference_answers.csv.gz, pool.json",
    "mixed": lambda _: "calibrated: params.csv, continuous_params.csv, reference.jsonl",
}


def _table(title: str) -> Table:
    table = Table(title=title, show_header=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    return table


def _stats(s: dict[str, float]) -> str:
    return f"mean {s['mean']:.3f}  sd {s['sd']:.3f}  range [{s['min']:.3f}, {s['max']:.3f}]"


def _state(report: Any) -> str:
    state = "converged" if report.converged else "NOT converged"
    return f"{report.n_iter} ({state})"


def _device_row(table: Table, report: Any) -> None:
    """Where the fit ran, said only where it left numpy (``--device``)."""
    device = report.settings.get("device", "cpu")
    if device != "cpu":
        table.add_row("device", device)


def _binary(report: Any) -> None:
    """The 1PL-4PL and the multidimensional models (``CalibrationReport``)."""
    table = _table(f"{report.model.upper()} calibration ({report.method})")
    table.add_row("subjects x items", f"{report.n_subjects:,} x {report.n_items:,}")
    table.add_row("responses", f"{report.n_responses:,} ({report.missing_share:.1%} missing)")
    table.add_row("log-likelihood", f"{report.loglik:,.3f}")
    table.add_row("iterations", _state(report))
    table.add_row("time", time_text(report.seconds))
    _device_row(table, report)
    if report.aic is not None and report.bic is not None:
        table.add_row("AIC / BIC", f"{report.aic:,.1f} / {report.bic:,.1f}")
    companion = report.unidimensional
    if companion is not None:
        table.add_row("factors", f"{len(report.factors or [])}: {', '.join(report.factors or [])}")
        table.add_row(
            f"{companion['model'].upper()} beside it",
            f"log-likelihood {companion['loglik']:,.3f}, AIC {companion['aic']:,.1f}, "
            f"BIC {companion['bic']:,.1f}",
        )
    for name, s in report.parameters.items():
        if name == "d" and report.model != "4pl" and companion is None:
            continue  # the 1PL-3PL have no upper asymptote to show
        table.add_row(name, _stats(s))
    priors = report.priors
    table.add_row("priors", ", ".join(prior_text(k, v) for k, v in priors.items()) or "none")
    stdout.print(table)


def _graded(report: Any) -> None:
    """The graded models (``GradedCalibrationReport``)."""
    title = _title(report.model)
    table = _table(f"{title} calibration ({report.method})")
    table.add_row("subjects x items", f"{report.n_subjects:,} x {report.n_items:,}")
    table.add_row("responses", f"{report.n_responses:,} ({report.missing_share:.1%} missing)")
    by_count = sorted(report.categories.items(), key=lambda kv: -int(kv[0]))
    table.add_row("categories", ", ".join(f"{n:,} items with {k}" for k, n in by_count))
    table.add_row("item types", ", ".join(f"{k} {n:,}" for k, n in report.item_types.items()))
    table.add_row("log-likelihood", f"{report.loglik:,.3f}")
    table.add_row("AIC / BIC", f"{report.aic:,.1f} / {report.bic:,.1f}")
    table.add_row("iterations", _state(report))
    table.add_row("time", time_text(report.seconds))
    _device_row(table, report)
    names = {"a": "a", "d": "d (thresholds)", "c": "c (3PL items)"}
    for name, s in report.parameters.items():
        table.add_row(names.get(name, name), _stats(s))
    priors = ", ".join(prior_text(k, v) for k, v in report.priors.items())
    table.add_row("priors", priors or "none (marginal ML)")
    table.add_row("standard errors", report.standard_errors or "not computed")
    stdout.print(table)


def _continuous(report: Any) -> None:
    """The continuous models (``ContinuousCalibrationReport``)."""
    title = _title(report.model)
    table = _table(f"{title} calibration ({report.method})")
    table.add_row("subjects x items", f"{report.n_subjects:,} x {report.n_items:,}")
    table.add_row("responses", f"{report.n_responses:,} ({report.missing_share:.1%} missing)")
    table.add_row("clipped to [ε, 1 − ε]", f"{report.n_clipped:,} scores (ε = {report.epsilon:g})")
    table.add_row("log-likelihood", f"{report.loglik:,.3f}")
    table.add_row("AIC / BIC", f"{report.aic:,.1f} / {report.bic:,.1f}")
    table.add_row("iterations", _state(report))
    table.add_row("time", time_text(report.seconds))
    for name, s in report.parameters.items():
        table.add_row(name, _stats(s))
    priors = ", ".join(prior_text(k, v) for k, v in report.priors.items())
    table.add_row("priors", priors or "none (marginal ML)")
    table.add_row("standard errors", report.standard_errors or "not computed")
    stdout.print(table)


def _mixed(report: Any) -> None:
    """Scored and continuous items fitted together (``MixedCalibrationReport``)."""
    table = _table(f"Mixed calibration: {report.model}")
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
    table.add_row("iterations", _state(report))
    table.add_row("time", time_text(report.seconds, "fitting the kept model"))
    table.add_row("standard errors", report.standard_errors or "not computed")
    stdout.print(table)


#: Each family's summary table.
_SUMMARIES: dict[str, Callable[[Any], None]] = {
    "binary": _binary,
    "multidimensional": _binary,
    "graded": _graded,
    "continuous": _continuous,
    "mixed": _mixed,
}


def prior_text(name: str, spec: dict[str, Any]) -> str:
    """``a ~ lognormal(0, 0.5)`` from a prior's description (``describe()``)."""
    args = ", ".join(f"{v:g}" for k, v in spec.items() if k != "dist")
    return f"{name} ~ {spec['dist']}({args})"
