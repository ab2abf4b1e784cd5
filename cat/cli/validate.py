"""``cat validate``: replay held-out subjects' recorded answers through the adaptive test."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import numpy as np
import typer
from rich.table import Table

from cat.cli.common import check_writable, fail, handle_errors, progress_bar, stdout
from cat.scenarios import read_item_scenarios
from cat.validation import RANDOM_RAW, Predictions
from cat.validation import validate as run_validation
from irt.models import ModelKind
from irt.readers import read_responses


def _int_list(text: str, what: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError as exc:
        raise fail(f"{what} must be whole numbers separated by commas, got {text!r}") from exc
    if not values or min(values) < 1:
        raise fail(f"{what} must be positive, got {text!r}")
    return values


@handle_errors
def validate(
    responses: Path = typer.Argument(..., help="Response matrix (.jsonl or wide .csv)."),
    out: Path = typer.Option(..., "--out", help="Write the results here (JSON)."),
    lengths: str = typer.Option("30,100,250", "--lengths", help="Test lengths, e.g. 30,100,250."),
    policies: str = typer.Option("mfi,random", "--policies", help="Policies to compare."),
    model: ModelKind = typer.Option(ModelKind.THREE_PL, "--model", help="IRT model."),
    holdout: float = typer.Option(0.3, "--holdout", help="Share of subjects held out."),
    leave_one_out: bool = typer.Option(
        False, "--leave-one-out", help="Hold out each subject in turn (small sets)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the split and random draws; recorded."),
    no_id_column: bool = typer.Option(False, "--no-id-column", help="CSV without subject ids."),
    scenarios: Path | None = typer.Option(
        None,
        "--scenarios",
        help="Item table (CSV with the item id first, or JSONL with 'id') giving each "
        "item's scenario; lets policies named like 'mfi+cb' balance content.",
    ),
    scenario_column: str = typer.Option(
        "scenario", "--scenario-column", help="Column of --scenarios holding the scenario."
    ),
) -> None:
    """Calibrate on some subjects, replay the others through the adaptive test, and
    compare the predicted full-pool accuracy with their accuracy on every item they
    answered. "random-raw" (plain accuracy on k random items) is always the baseline.

    Example:

      cat validate responses.csv.gz --leave-one-out --lengths 30,100,250 --out valid.json

    With --scenarios, a policy name ending in "+cb" (e.g. mfi+cb) keeps each test's mix
    of scenarios at the pool's shares.
    """
    check_writable(out)
    length_list = _int_list(lengths, "--lengths")
    policy_list = [p.strip() for p in policies.split(",") if p.strip()]
    matrix = read_responses(responses, id_column=not no_id_column)
    item_scenarios = (
        read_item_scenarios(scenarios, matrix.item_ids, scenario_column) if scenarios else None
    )
    with progress_bar("validating", total=1.0) as update:
        predictions = run_validation(
            matrix,
            model,
            policy_list,
            length_list,
            np.random.default_rng(seed),
            holdout=None if leave_one_out else holdout,
            leave_one_out=leave_one_out,
            progress=lambda what, done: update(completed=done, description=what),
            scenario=item_scenarios.codes if item_scenarios else None,
        )
    results = [p.metrics() for p in predictions]
    settings = {
        "responses": str(responses),
        "model": model.value,
        "policies": policy_list,
        "lengths": length_list,
        "holdout": None if leave_one_out else holdout,
        "leave_one_out": leave_one_out,
        "seed": seed,
        "scenarios": None if item_scenarios is None else list(item_scenarios.names),
        "estimator": "mle",
        "interval": "90%: cross-conformal over the other held-out subjects (random-raw: "
        "its binomial sampling interval)",
        "predictors": "plug-in: answers given + IRT-expected score on the rest, less the "
        "drift the training subjects show at their ML abilities; chosen: per subject, "
        "whichever of plug-in and ridge erred less on the other held-out subjects; ridge: "
        "answers given + ridge across the training subjects (penalty by exact LOO)",
    }
    report: dict[str, Any] = {
        "results": results,
        "settings": settings,
        "subjects": _subjects(predictions, matrix.subject_ids),
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    _print(results, matrix.n_subjects, out)


def _subjects(predictions: list[Predictions], ids: tuple[str, ...]) -> list[dict[str, Any]]:
    rows: dict[int, dict[str, Any]] = {}
    for p in predictions:
        for k, row in enumerate(p.subject):
            entry = rows.setdefault(int(row), {"subject_id": ids[row], "truth": float(p.truth[k])})
            entry[f"{p.policy}/{p.predictor}@{p.length}"] = float(p.predicted[:, k].mean())
    return [rows[r] for r in sorted(rows)]


def _print(results: list[dict[str, Any]], n_subjects: int, out: Path) -> None:
    table = Table(title=f"Replay validation ({n_subjects} subjects)")
    for col in ("policy", "predictor", "length", "τ", "ρ", "MAE", "RMSE", "cov. 90%"):
        left = col in ("policy", "predictor")
        table.add_column(col, justify="left" if left else "right", no_wrap=True)
    baseline_first = {RANDOM_RAW: 0}
    for r in sorted(
        results,
        key=lambda r: (
            r["length"],
            baseline_first.get(r["policy"], 1),
            r["policy"],
            r["predictor"],
        ),
    ):
        table.add_row(
            str(r["policy"]),
            str(r["predictor"]),
            str(r["length"]),
            f"{r['kendall_tau']:.3f}",
            f"{r['spearman']:.3f}",
            f"{r['mae']:.4f}",
            f"{r['rmse']:.4f}",
            f"{r['coverage']:.2f}",
        )
    stdout.print(table)
    stdout.print(f"results written to {out}")
