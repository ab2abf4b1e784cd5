"""``cat demo``: synthesis, calibration and assessment end to end, offline, in minutes.

A command that ``catdemo`` adds to ``cat`` through the entry point ``demo`` of the group
``cat.commands`` (``pyproject.toml``; ``cat.cli.plugins``): ``catdemo`` imports ``cat``,
so ``cat`` never imports it. This module stays light, as ``cat``'s own command modules
do: ``cat --help`` imports it to list the command, ``catdemo.run`` loads on a run.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from cat.cli.common import check_writable, fraction_progress, handle_errors, say, stdout

DEMO_POOL = Path(__file__).resolve().parents[1] / "item_pools" / "demo-open"


@handle_errors
def demo(
    pool_dir: Path = typer.Option(
        DEMO_POOL,
        "--pool",
        # The project's own copy, named as in a clone: its absolute path differs per install.
        show_default="the shipped item_pools/demo-open",
        help="The pool to run on (default: Chinese single-choice and open items; "
        "item_pools/demo for single-choice, multiple-answer and ordering items only).",
    ),
    work: Path = typer.Option(
        Path("cat-demo"), "--work", help="Folder for the run store, responses and pool."
    ),
    n_items: int = typer.Option(300, "--items", min=20, help="Pool items to synthesise."),
    length: int = typer.Option(80, "--length", min=5, help="Adaptive items per new model."),
    seed: int = typer.Option(0, "--seed", help="Seed of everything random; recorded."),
) -> None:
    """Run the whole method offline: a local OpenAI-compatible server plays simulated
    models; five answer part of the demo pool alone and in ordered pairs (generation ->
    debate -> reflection), their answers are graded (open ones in free text, to scores
    0..m) and calibrate the model (graded response, 3PL for single-choice items; a 3PL
    on a pool of choice items), and three new models are assessed adaptively through
    real HTTP. Prints each new model's estimated rank and predicted score (its accuracy
    on a pool of choice items) beside the truth.

    Example:

      cat demo
    """
    from catdemo.run import run_demo

    check_writable(folders={"--work": work})
    with fraction_progress("demo") as progress:
        result = run_demo(
            pool_dir, work, n_items, length, seed, say=lambda s: say(f"· {s}"), progress=progress
        )
    pool_size = result.assessed[0].result.pool.n_items if result.assessed else result.items
    table = Table(title=f"New models after {length} adaptive items (of {pool_size})")
    table.add_column("model", no_wrap=True)
    scored = bool(result.assessed) and result.assessed[0].result.pool.scored
    what = "score" if scored else "accuracy"
    for col in ("θ̂ (true)", "rank (true)", f"{what} (90%)", "true"):
        table.add_column(col, justify="right", no_wrap=True)
    for row in result.assessed:
        r = row.result
        acc = r.predicted_accuracy
        of = f" of {r.rank.of}" if r.rank is not None else ""
        position = r.rank.position if r.rank is not None else "—"
        table.add_row(
            row.model,
            f"{r.theta:+.2f} ({row.true_theta:+.2f})",
            f"{position}{of} ({row.true_rank})",
            f"{acc.value:.3f} ({acc.low:.3f}–{acc.high:.3f})",
            f"{row.true_accuracy:.3f}",
        )
    stdout.print(table)
    result.write_json(work / "demo.json")
    say(
        f"done in {result.seconds:.0f} s; calibrated pool in {result.pool}, run stores and "
        f"responses in {work}, this table in {work / 'demo.json'}"
    )
