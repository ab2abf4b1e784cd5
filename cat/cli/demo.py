"""``cat demo``: synthesis, calibration and assessment end to end, offline, in minutes."""

from __future__ import annotations

import json
import time
from pathlib import Path

import typer
from rich.table import Table

from cat.cli.common import check_writable, handle_errors, stdout

DEMO_POOL = Path(__file__).resolve().parents[2] / "item_pools" / "demo"


@handle_errors
def demo(
    pool_dir: Path = typer.Option(DEMO_POOL, "--pool", help="The pool to run on."),
    work: Path = typer.Option(
        Path("cat-demo"), "--work", help="Folder for the run store, responses and pool."
    ),
    n_items: int = typer.Option(300, "--items", min=20, help="Pool items to synthesise."),
    length: int = typer.Option(80, "--length", min=5, help="Adaptive items per new model."),
    seed: int = typer.Option(0, "--seed", help="Seed of everything random; recorded."),
) -> None:
    """Run the whole method offline: a local OpenAI-compatible server plays simulated
    models; five answer part of the demo pool alone and in ordered pairs (generation ->
    debate -> reflection), their answers calibrate a 3PL model, and three new models are
    assessed adaptively through real HTTP. Prints each new model's estimated rank and
    predicted accuracy beside the truth.

    Example:

      cat demo
    """
    from cat.demo import run_demo

    check_writable(work)
    t0 = time.perf_counter()
    rows = run_demo(pool_dir, work, n_items, length, seed, say=lambda s: stdout.print(f"· {s}"))
    seconds = time.perf_counter() - t0
    pool_size = rows[0].result["pool"]["n_items"] if rows else n_items
    table = Table(title=f"New models after {length} adaptive items (of {pool_size})")
    for col in (
        "model",
        "true θ",
        "estimated θ (90%)",
        "rank",
        "true rank",
        "predicted accuracy (90%)",
        "true accuracy",
    ):
        table.add_column(col, justify="left" if col == "model" else "right")
    summary = []
    for row in rows:
        r = row.result
        ci, acc = r["theta_interval"], r["predicted_accuracy"]
        rank = r["rank"]
        table.add_row(
            row.model,
            f"{row.true_theta:+.2f}",
            f"{r['theta']:+.2f} ({ci['low']:+.2f} … {ci['high']:+.2f})",
            f"{rank['position']} of {rank['of']}",
            f"{row.true_rank} of {rank['of']}",
            f"{acc['value']:.3f} ({acc['low']:.3f} … {acc['high']:.3f})",
            f"{row.true_accuracy:.3f}",
        )
        summary.append(
            {
                "model": row.model,
                "true_theta": row.true_theta,
                "true_accuracy": row.true_accuracy,
                "true_rank": row.true_rank,
                "result": r,
            }
        )
    stdout.print(table)
    (work / "demo.json").write_text(
        json.dumps(
            {
                "seed": seed,
                "items": n_items,
                "length": length,
                "seconds": seconds,
                "assessed": summary,
            },
            indent=1,
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )
    stdout.print(
        f"done in {seconds:.0f} s; calibrated pool in {work / 'pool'}, run stores and "
        f"responses in {work}, this table in {work / 'demo.json'}"
    )
