"""``cat assess`` with several models: run them at once (``cat.assess_many``), write one
RESULT.json and one report each, and print one row per model."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table

from cat.cli.common import (
    EXIT_BAD_INPUT,
    fail,
    print_error,
    progress_bar,
    say,
    stdout,
    warn_off_protocol,
)

if TYPE_CHECKING:
    from cat.assessment.many import ModelRun
    from cat.assessment.result import ItemRecord
    from cat.assessment.session import AssessmentSession
    from itempool import LoadedPool


def model_specs(models: list[str] | None, models_file: Path | None) -> list[str]:
    """The models of --model and --models FILE, in that order (one a line in the file;
    a line starting with # is a comment)."""
    specs = list(models or [])
    if models_file is not None:
        try:
            lines = models_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or exc
            raise fail(f"--models {models_file}: cannot read it ({reason})") from exc
        listed = [line.strip() for line in lines]
        listed = [line for line in listed if line and not line.startswith("#")]
        if not listed:
            raise fail(f"--models {models_file}: names no model")
        specs += listed
    if not specs:
        raise fail("missing option --model (or --models FILE; see cat assess --help)")
    return specs


def assess_models(
    pool: LoadedPool,
    specs: list[str],
    endpoint: dict[str, Any],
    options: dict[str, Any],
    out: Path | None,
    report: Path | None,
    resume: bool,
    concurrency: int,
) -> None:
    """Assess every model of ``specs`` at once and render the outcome; exit non-zero
    when any failed (each failure in one line, after the others finished)."""
    from cat.assessment.examinees import parse_model_spec
    from cat.assessment.many import assess_many, output_paths

    examinees = [parse_model_spec(spec, **endpoint) for spec in specs]
    labels = [e.label for e in examinees]
    length = int(options["length"])
    given = dict.fromkeys(labels, 0)
    lock = threading.Lock()
    with progress_bar(f"assessing {len(labels)} models", total=length * len(labels)) as update:

        def step(label: str, session: AssessmentSession, items: list[ItemRecord]) -> None:
            # Called from each model's thread.
            with lock:
                given[label] = len(session.given)
                update(
                    completed=sum(given.values()),
                    description=" · ".join(f"{m} {n}/{length}" for m, n in given.items()),
                )

        runs = assess_many(
            pool, examinees, concurrency=concurrency, resume=resume, on_step=step, **options
        )
    files = {} if out is None else output_paths(labels, out, ".json")
    folders = {} if report is None else output_paths(labels, report)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    for run in runs:
        if run.result is None:
            continue
        if run.model in files:
            run.result.write_json(files[run.model])
        if run.model in folders:
            from cat.reports.html import write_report

            assert pool.params is not None  # assess refuses an uncalibrated pool
            write_report(run.result, pool.params, folders[run.model])
    _print(runs)
    failed = [run for run in runs if run.result is None]
    if out is not None and len(failed) < len(runs):
        say(f"results written to {out}/ (one MODEL.json each)")
    if report is not None and len(failed) < len(runs):
        say(f"reports written to {report}/ (one MODEL/index.html each)")
    for run in failed:
        error = run.error or "failed"
        print_error(error if error.startswith(f"{run.model}:") else f"{run.model}: {error}")
    if failed:
        raise typer.Exit(EXIT_BAD_INPUT)


def _print(runs: list[ModelRun]) -> None:
    first = next((run.result for run in runs if run.result is not None), None)
    what = "score" if first is not None and first.pool.scored else "accuracy"
    title = f"{len(runs)} models on {first.pool.name}" if first is not None else "models"
    table = Table(title=title)
    columns = ("model", "θ", f"predicted {what} (90%)", "rank", "items", "new calls")
    for col in columns:
        table.add_column(col, justify="left" if col == "model" else "right")
    for run in runs:
        result = run.result
        if result is None:
            table.add_row(run.model, "failed", *[""] * (len(columns) - 2))
            continue
        acc = result.predicted_accuracy
        rank = "—" if result.rank is None else f"{result.rank.position}/{result.rank.of}"
        usage = result.usage
        table.add_row(
            run.model,
            f"{result.theta:+.2f}",
            f"{acc.value:.3f} ({acc.low:.3f} … {acc.high:.3f})",
            rank,
            str(result.n_items),
            "—" if usage is None else str(usage.calls),
        )
    stdout.print(table)
    for run in runs:
        if run.result is not None:
            warn_off_protocol(run.result.settings.protocol, run.model)
