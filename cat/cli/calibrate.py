"""``cat calibrate``: fit item parameters to a response matrix."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import numpy as np
import typer
from rich.table import Table

from cat.cli.common import (
    check_writable,
    fail,
    handle_errors,
    package_version,
    progress_bar,
    stdout,
)
from cat.pool_calibration import record_calibration, reference_rows
from irt.checks import check_responses
from irt.fit import CalibrationMethod, CalibrationResult, parameter_summary
from irt.fit import calibrate as fit_items
from irt.models import ModelKind
from irt.params_io import write_abilities, write_params
from irt.priors import ItemPriors
from irt.readers import read_responses
from irt.responses import ResponseMatrix
from irt.scoring import AbilityMethod, score_abilities


@handle_errors
def calibrate(
    responses: Path = typer.Argument(
        ..., help="Response matrix: .jsonl or wide .csv (optionally .gz).", show_default=False
    ),
    model: ModelKind = typer.Option(ModelKind.THREE_PL, "--model", help="IRT model."),
    out: Path | None = typer.Option(
        None, "--out", help="Write item parameters here (params.csv format)."
    ),
    report: Path | None = typer.Option(None, "--report", help="Write a JSON fit report here."),
    method: CalibrationMethod = typer.Option(
        CalibrationMethod.EM, "--method", help="em: marginal ML / Bayes modal; bayes: pyro SVI."
    ),
    abilities: Path | None = typer.Option(
        None, "--abilities", help="Write each subject's θ and SE here (CSV)."
    ),
    scoring: AbilityMethod = typer.Option(
        AbilityMethod.EAP, "--scoring", help="Ability estimator for --abilities and --pool."
    ),
    pool: Path | None = typer.Option(
        None,
        "--pool",
        help="Item-pool folder: write params.csv and reference.jsonl there and record "
        "the calibration in its pool.json.",
    ),
    cross_fit: int | None = typer.Option(
        None,
        "--cross-fit",
        min=2,
        help="With --pool: replay each reference model with the pool calibrated on the "
        "other K-1 folds and store the predicted-accuracy errors, so that cat assess "
        "widens its interval by them (costs K more calibrations).",
    ),
    cross_fit_lengths: str = typer.Option(
        "100,250", "--cross-fit-lengths", help="Test lengths of the --cross-fit replays."
    ),
    seed: int = typer.Option(
        0, "--seed", help="Random seed (Bayesian fits, --cross-fit folds); recorded."
    ),
    no_priors: bool = typer.Option(
        False, "--no-priors", help="Plain marginal ML: no priors on item parameters."
    ),
    max_iter: int = typer.Option(500, "--max-iter", min=1, help="EM cycle cap."),
    tol: float = typer.Option(1e-4, "--tol", min=0.0, help="EM tolerance on parameter change."),
    quad_points: int = typer.Option(61, "--quad-points", min=5, help="Quadrature points."),
    no_id_column: bool = typer.Option(
        False, "--no-id-column", help="CSV has no subject-id column (ids s0001, s0002, ...)."
    ),
) -> None:
    """Fit an IRT model to RESPONSES and write its item parameters.

    Examples:

      cat calibrate responses.jsonl --model 3pl --out params.csv --report fit.json

      cat calibrate responses.csv --model 2pl --no-priors --out params.csv
    """
    if out is None and pool is None:
        raise fail("say where the parameters go: --out PARAMS.csv and/or --pool DIR")
    if pool is not None and not pool.is_dir():
        raise fail(f"--pool {pool}: no such folder")
    if cross_fit is not None and pool is None:
        raise fail("--cross-fit stores its errors in a pool: give --pool DIR")
    lengths = _lengths(cross_fit_lengths)
    check_writable(out, report, abilities)
    matrix = read_responses(responses, id_column=not no_id_column)
    data_warnings = check_responses(matrix)
    for message in data_warnings:
        stdout.print(f"[yellow]note:[/] {message}", highlight=False)
    priors = ItemPriors.none() if no_priors else None

    with progress_bar(f"calibrating {model.value.upper()}", total=1.0) as update:

        def progress(done: float, status: str) -> None:
            update(completed=done, description=status)

        result = fit_items(
            matrix,
            model,
            method,
            priors=priors,
            seed=seed,
            tol=tol,
            max_iter=max_iter,
            n_quad=quad_points,
            progress=progress,
        )

    need_scores = abilities is not None or pool is not None
    scores = score_abilities(matrix, result.params, scoring) if need_scores else None
    fit_report = _report(responses, matrix, result, data_warnings)
    if out is not None:
        write_params(result.params, out)
    if abilities is not None and scores is not None:
        write_abilities(scores, abilities)
    if pool is not None and scores is not None:
        provenance = _provenance(responses, matrix, result, scoring)
        errors = None
        if cross_fit is not None:
            with progress_bar(f"cross-fitting {cross_fit} folds", total=None):
                errors = _cross_fit(pool, matrix, model, cross_fit, lengths, seed)
        record_calibration(pool, result.params, reference_rows(matrix, scores), provenance, errors)
        if errors is not None:
            _print_cross_fit(errors)
    if report is not None:
        report.write_text(json.dumps(fit_report, indent=2) + "\n", encoding="utf-8")
    _print_summary(fit_report, out, pool)


def _lengths(text: str) -> list[int]:
    try:
        lengths = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise fail(f"--cross-fit-lengths takes whole numbers like 100,250, got {text!r}") from None
    if not lengths or min(lengths) < 1:
        raise fail(f"--cross-fit-lengths takes positive whole numbers, got {text!r}")
    return lengths


def _cross_fit(
    pool: Path, matrix: ResponseMatrix, model: ModelKind, folds: int, lengths: list[int], seed: int
) -> dict[str, Any]:
    """The references' cross-fitted errors, content-balanced when every item has a
    scenario in the pool."""
    from cat.cross_fit import cross_fit_errors
    from cat.scenarios import scenarios_of
    from synth.items import read_pool

    items = read_pool(pool).items
    known = {item.id for item in items}
    scenario = None
    if all(item.scenario for item in items) and known.issuperset(matrix.item_ids):
        scenario = scenarios_of(items, matrix.item_ids).codes
    errors = cross_fit_errors(matrix, model, folds, lengths, seed, scenario)
    return errors.model_dump()


def _print_cross_fit(errors: dict[str, Any]) -> None:
    for length, values in errors["errors"].items():
        err = np.abs(np.asarray(values))
        stdout.print(
            f"cross-fit ({errors['folds']} folds, {errors['policy']}, {length} items): "
            f"mean absolute error {err.mean():.4f}, largest {err.max():.4f} over {len(err)} "
            "reference models; stored in pool.json for cat assess",
            highlight=False,
        )


def _provenance(
    source: Path, matrix: ResponseMatrix, result: CalibrationResult, scoring: AbilityMethod
) -> dict[str, Any]:
    return {
        "method": result.method.value,
        "model": result.model.value,
        "priors": result.priors.describe(),
        "seed": result.seed,
        "n_subjects": matrix.n_subjects,
        "n_items": matrix.n_items,
        "loglik": result.loglik,
        "converged": result.converged,
        "scoring": scoring.value,
        "source": source.name,
        "package_version": package_version(),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        **result.settings,
    }


def _report(
    source: Path, matrix: ResponseMatrix, result: CalibrationResult, notes: list[str]
) -> dict[str, Any]:
    observed = matrix.observed
    return {
        "model": result.model.value,
        "method": result.method.value,
        "n_subjects": matrix.n_subjects,
        "n_items": matrix.n_items,
        "n_responses": int(observed.sum()),
        "missing_share": float(1 - observed.mean()),
        "loglik": result.loglik,
        "logpost": result.logpost,
        "n_iter": result.n_iter,
        "converged": result.converged,
        "seconds": round(result.seconds, 4),
        "priors": result.priors.describe(),
        "seed": result.seed,
        "settings": result.settings,
        "parameters": parameter_summary(result.params),
        "data_notes": notes,
        "input": str(source),
        "package_version": package_version(),
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


def _print_summary(report: dict[str, Any], out: Path | None, pool: Path | None) -> None:
    table = Table(
        title=f"{report['model'].upper()} calibration ({report['method']})", show_header=False
    )
    table.add_column(style="bold")
    table.add_column()
    table.add_row("subjects x items", f"{report['n_subjects']:,} x {report['n_items']:,}")
    table.add_row("responses", f"{report['n_responses']:,} ({report['missing_share']:.1%} missing)")
    table.add_row("log-likelihood", f"{report['loglik']:,.3f}")
    table.add_row(
        "iterations",
        f"{report['n_iter']} ({'converged' if report['converged'] else 'NOT converged'})",
    )
    table.add_row("time", f"{report['seconds']:.2f} s")
    for name in ("a", "b", "c"):
        s = report["parameters"][name]
        table.add_row(
            name, f"mean {s['mean']:.3f}  sd {s['sd']:.3f}  range [{s['min']:.3f}, {s['max']:.3f}]"
        )
    priors = report["priors"]
    table.add_row("priors", ", ".join(_prior_text(k, v) for k, v in priors.items()) or "none")
    stdout.print(table)
    if out is not None:
        stdout.print(f"parameters written to {out}")
    if pool is not None:
        stdout.print(f"pool {pool} updated: params.csv, reference.jsonl, pool.json")


def _prior_text(name: str, spec: dict[str, Any]) -> str:
    args = ", ".join(f"{v:g}" for k, v in spec.items() if k != "dist")
    return f"{name} ~ {spec['dist']}({args})"
