"""``cat validate``: replay held-out subjects' recorded answers through the adaptive test."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from cat.cli.common import (
    MODEL_NAMES,
    ModelChoice,
    check_writable,
    fail,
    fraction_progress,
    handle_errors,
    model_choice,
    stdout,
)
from cat.engine.names import DEFAULT, CriterionName

if TYPE_CHECKING:
    from cat.prediction.verdicts import ValidationRow
    from cat.validation.report import ValidationReport


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
    policies: str = typer.Option(
        "default",
        "--policies",
        help="Policies to compare; 'default' is what cat assess runs with no options: "
        "it runs the designs irt (MFI + IRT plug-in), mixture and low-rank (built on the "
        "training subjects' answers) and takes the one of smallest cross-fitted error "
        "on the training subjects; any of them, or mfi, kl, astrat... by name.",
    ),
    model: ModelChoice = typer.Option(
        ModelChoice.THREE_PL,
        "--model",
        metavar="MODEL",
        parser=model_choice,
        help=f"IRT model, one of {MODEL_NAMES}. bifactor: the 3PL designs and, beside them, "
        "the bifactor design (a specific factor per --scenarios scenario), which the "
        "default may choose; mirt: the same with a correlated factor per scenario. "
        "graded, gpcm, sequential, nominal: RESPONSES hold scores 0..m, each item with "
        "3+ scores gets that model (0/1 items the 2PL) and the default is the irt "
        "design of a scored pool; so does an item family registered from outside the "
        "package (an irt.families entry point), by its name.",
    ),
    criterion: CriterionName | None = typer.Option(
        None,
        "--criterion",
        help="How the bifactor or mirt design picks items (as cat assess --criterion): "
        "total, profile, general, d-optimal, a-optimal or kl.",
    ),
    folds: int | None = typer.Option(
        None,
        "--folds",
        min=2,
        show_default=False,
        help="Hold out K random folds in turn (instead of --holdout).",
    ),
    holdout: float | None = typer.Option(
        None,
        "--holdout",
        show_default=False,
        help="Share of subjects held out.  [default: 0.3]",
    ),
    leave_one_out: bool = typer.Option(
        False, "--leave-one-out", help="Hold out each subject in turn (small sets)."
    ),
    seed: int = typer.Option(
        0, "--seed", min=0, help="Seed of the split and random draws; recorded."
    ),
    # " /--no-X" declares only the flag that turns X off (see calibrate.py).
    id_column: bool = typer.Option(
        True, " /--no-id-column", show_default=False, help="CSV without subject ids."
    ),
    scenarios: Path | None = typer.Option(
        None,
        "--scenarios",
        help="Item table (CSV with the item id first, or JSONL with 'id') giving each "
        "item's scenario; lets policies named like 'mfi+cb' balance content.",
    ),
    scenario_column: str = typer.Option(
        "scenario", "--scenario-column", help="Column of --scenarios holding the scenario."
    ),
    repeats: int = typer.Option(
        5, "--repeats", min=1, help="Draws of the random rows, reported as mean ± sd."
    ),
    interval_folds: int = typer.Option(
        5, "--interval-folds", min=2, help="Folds of the training subjects behind the intervals."
    ),
    train_size: int | None = typer.Option(
        None,
        "--train-size",
        show_default=False,
        help="Train on K random subjects and hold out all the others (instead of "
        "--holdout): how a pool calibrated on a few dozen participants does. At least 10.",
    ),
    splits: int = typer.Option(
        1,
        "--splits",
        min=1,
        help="With --train-size: draws of the K training subjects (seeded from --seed); "
        "each figure is then the mean over the draws, ± its sd.",
    ),
) -> None:
    """Calibrate on some subjects, replay the others through the adaptive test, and
    compare the predicted full-pool accuracy with their accuracy on every item they
    answered. Random items scored by every predictor ("random", --repeats draws) and
    "random-raw" (plain accuracy on k random items) are always the baselines; one line
    per length says whether "default" (what cat assess runs) beats the best of them.
    Each 90% interval is built from the training subjects only (a cross-fit inside
    them), so its coverage on the held-out subjects can fail.

    Example, on the 40 simulated models that ship in examples/:

      cat validate examples/responses.jsonl --lengths 30,100 --out valid.json

    With --scenarios, a policy name ending in "+cb" (e.g. mfi+cb) keeps each test's mix
    of scenarios at the pool's shares.

    With --train-size K --splits S, S random sets of K training subjects each validate
    on all the other subjects: how a pool calibrated on K participants would do, and
    how much that depends on which K.

      cat validate examples/responses.jsonl --train-size 25 --splits 3 --out valid.json
    """
    from cat.validation.report import validate as run_validation
    from cat.validation.report import validate_scored_responses

    check_writable({"--out": out})
    length_list = _int_list(lengths, "--lengths")
    policy_list = [p.strip() for p in policies.split(",") if p.strip()]
    if model.continuous:
        raise fail(
            f"cat validate replays 0/1 answers or scores 0..m; --model {model.value} (scores "
            "in [0, 1]) is for cat calibrate only"
        )
    if model.graded and criterion is not None:
        raise fail(f"--criterion is for --model bifactor or mirt, not {model.value}")
    if train_size is not None and model.graded:
        raise fail(f"--train-size replays 0/1 answers, not --model {model.value}")
    share = 0.3 if holdout is None else holdout
    run = (
        partial(validate_scored_responses, holdout=share)
        if model.graded
        else partial(
            run_validation,
            criterion=None if criterion is None else criterion.value,
            holdout=holdout,
            train_size=train_size,
            splits=splits,
        )
    )
    with fraction_progress("validating") as progress:
        report = run(
            responses,
            lengths=length_list,
            policies=policy_list,
            model=model.value,
            folds=folds,
            leave_one_out=leave_one_out,
            seed=seed,
            id_column=id_column,
            scenarios=scenarios,
            scenario_column=scenario_column,
            progress=progress,
            repeats=repeats,
            interval_folds=interval_folds,
        )
    out.write_text(json.dumps(report.model_dump(mode="json"), indent=1) + "\n", encoding="utf-8")
    _print(report, out)


def _order(row: ValidationRow) -> tuple[int, int, str, str]:
    """By length, the baseline first, then by policy and predictor."""
    from cat.prediction.replay import RANDOM_RAW

    return (row.length, 0 if row.policy == RANDOM_RAW else 1, row.policy, row.predictor)


def _pm(mean: float | None, sd: float | None, digits: int) -> str:
    """``mean`` with its sd over the repeats (without the leading zero), when there are
    several; "n/a" for a figure not defined (its reason is printed below the table)."""
    if mean is None:
        return "n/a"
    return f"{mean:.{digits}f}" + ("" if sd is None else f"±{sd:.{digits}f}".replace("0.", ".", 1))


def _print(report: ValidationReport, out: Path) -> None:
    from cat.cli.common import say

    for note in report.data_notes:
        say(f"note: {note}")
    table = Table(
        title=f"Replay validation ({report.settings.n_subjects} subjects)",
        caption="cov.: of the 90% interval from training subjects' errors; θ cov.: of the "
        "θ-only interval (no stored errors); ρ, RMSE and more in the JSON",
    )
    for col in ("policy", "predictor", "length", "τ", "MAE", "cov.", "θ cov."):
        left = col in ("policy", "predictor")
        table.add_column(col, justify="left" if left else "right", no_wrap=True)
    for r in sorted(report.results, key=_order):
        theta = r.coverage_theta_only
        table.add_row(
            r.policy,
            r.predictor,
            str(r.length),
            _pm(r.kendall_tau, r.kendall_tau_sd, 3),
            _pm(r.mae, r.mae_sd, 4),
            f"{r.coverage:.2f}",
            "" if theta is None else f"{theta:.2f}",
        )
    stdout.print(table)
    undefined = {(key, why) for r in report.results for key, why in (r.null_reasons or {}).items()}
    for key, why in sorted(undefined):
        say(f"{key} n/a: {why}")
    if (report.settings.splits or 1) > 1:
        stdout.print(
            f"every row: mean ± sd over {report.settings.splits} draws of "
            f"{report.settings.train_size} training subjects"
        )
    elif (report.settings.repeats or 1) > 1:
        stdout.print(f"random rows: mean ± sd over {report.settings.repeats} draws")
    for verdict in report.verdicts:
        stdout.print(verdict.line(), highlight=False, soft_wrap=True)
    for line in _scenario_lines(report):
        stdout.print(line, highlight=False, soft_wrap=True)
    stdout.print(f"results written to {out}")


def _scenario_lines(report: ValidationReport) -> list[str]:
    """Per length, the default's per-scenario intervals: mean and lowest coverage."""
    names = report.settings.scenarios or []
    lines = []
    for r in sorted(report.results, key=_order):
        if r.policy != DEFAULT or r.scenario_coverage is None or r.scenario_mae_mean is None:
            continue
        known = [(c, n) for c, n in zip(r.scenario_coverage, names, strict=False) if c is not None]
        if not known:
            continue
        low, name = min(known)
        lines.append(
            f"{r.length} items: default per scenario, coverage {r.scenario_coverage_mean:.2f} "
            f"on average, lowest {low:.2f} ({name}); MAE {r.scenario_mae_mean:.4f}"
        )
    return lines
