"""``cat simulate``: adaptive tests of simulated examinees on a calibrated pool."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from cat.cli.common import check_writable, fraction_progress, handle_errors, stdout
from cat.engine.names import EstimatorName, PolicyName

if TYPE_CHECKING:
    from cat.engine.simulate_result import SimulationResult


@handle_errors
def simulate(
    params: list[Path] = typer.Option(
        ...,
        "--params",
        help="Item parameters: params.csv of 0/1 items, or of scored items "
        "(item_id,type,a,d1..dM,c, as cat calibrate --model graded writes), whose "
        "answers are drawn as scores 0..m, or of continuous items "
        "(item_id,type,a,d,sigma,tau,epsilon, as cat calibrate --model crm|beta "
        "writes), whose scores in [0, 1] are drawn from their densities. Give it twice, "
        "a 0/1 or scored file and a continuous one, for a mixed pool.",
    ),
    examinees: int = typer.Option(..., "--examinees", min=1, help="Simulated examinees."),
    length: int = typer.Option(250, "--length", min=1, help="Maximum test length."),
    out: Path = typer.Option(..., "--out", help="Write the results here (JSON)."),
    policy: PolicyName = typer.Option(
        PolicyName.MFI,
        "--policy",
        help="Item selection: maximum Fisher information, Kullback-Leibler, random, "
        "randomesque (random among the top k), a-stratified with b-blocking, "
        "proportional (drawn in proportion to information).",
    ),
    estimator: EstimatorName = typer.Option(
        EstimatorName.MLE,
        "--estimator",
        help="Ability estimator (ML falls back to MAP while all answers agree; on scored "
        "items, while all sit at their lowest or all at their highest score). wle is for "
        "0/1 items only.",
    ),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of abilities and answers; recorded."),
    se_target: float | None = typer.Option(
        None, "--se-target", min=0.0, help="Also stop once SE reaches this."
    ),
    min_length: int = typer.Option(
        0, "--min-length", min=0, help="Never stop before this (at most --length)."
    ),
    randomesque_k: int = typer.Option(5, "--randomesque-k", min=1, help="k for randomesque."),
    max_exposure: float | None = typer.Option(
        None, "--max-exposure", min=0.0, max=1.0, help="Cap each item's exposure rate."
    ),
    sympson_hetter: float | None = typer.Option(
        None,
        "--sympson-hetter",
        min=0.0,
        max=1.0,
        help="Sympson-Hetter exposure control at this rate; its parameters are first "
        "set by simulating 1,000 other examinees per round (up to 30 rounds: minutes "
        "on a large pool).",
    ),
    batch_size: int = typer.Option(
        1, "--batch-size", min=1, help="Items chosen per round at one estimate (parallel calls)."
    ),
) -> None:
    """Give N simulated examinees (θ ~ N(0, 1)) an adaptive test and score the result.

    Example, on the demo pool that ships with the project:

      cat simulate --params item_pools/demo-en/params.csv --examinees 200 --out sim.json

    On scored items (graded, partial credit, sequential, 0/1 mixed), the true parameters
    of the scored example in examples/:

      cat simulate --params examples/true_scored_params.csv --examinees 500 \\
          --length 100 --estimator eap --out sim.json

    On a mixed pool, scored items and continuous ones (similarity scores in [0, 1]):

      cat simulate --params examples/true_scored_params.csv \\
          --params examples/true_similarity_params.csv \\
          --examinees 500 --length 100 --out sim.json
    """
    from cat.engine.simulate_job import simulate as run_simulation

    check_writable({"--out": out})
    with fraction_progress(f"simulating {examinees} examinees") as progress:
        result = run_simulation(
            params,
            examinees=examinees,
            length=length,
            policy=policy,
            estimator=estimator,
            seed=seed,
            se_target=se_target,
            min_length=min_length,
            randomesque_k=randomesque_k,
            max_exposure=max_exposure,
            sympson_hetter=sympson_hetter,
            batch_size=batch_size,
            progress=progress,
        )
    out.write_text(json.dumps(result.model_dump(mode="json"), indent=1) + "\n", encoding="utf-8")
    _print(result, out)


def _print(result: SimulationResult, out: Path) -> None:
    summary, settings = result.summary, result.settings
    # A short title: rich wraps a title at the table's width, not the terminal's.
    table = Table(title="CAT simulation", show_header=False)
    table.add_column(style="bold")
    table.add_column()
    table.add_row("design", f"{settings.policy} + {settings.estimator}")
    table.add_row("examinees", f"{settings.examinees:,}, pool of {settings.n_pool:,} items")
    if settings.item_types:
        kinds = ", ".join(f"{n:,} {kind}" for kind, n in settings.item_types.items())
        table.add_row("items", kinds)
    table.add_row("mean length", f"{summary.mean_length:.1f} items")
    table.add_row("bias", f"{summary.bias:+.4f}")
    table.add_row("RMSE", f"{summary.rmse:.4f}")
    table.add_row("mean SE", f"{summary.mean_se:.4f}")
    tau = summary.kendall_tau
    table.add_row("Kendall τ", "n/a (one examinee)" if tau is None else f"{tau:.4f}")
    table.add_row("max exposure", f"{summary.max_exposure:.3f}")
    table.add_row(
        "time",
        f"{summary.wall_seconds:.2f} s (simulation {summary.seconds:.2f} s, "
        f"{summary.seconds_per_examinee * 1e3:.1f} ms each)",
    )
    stdout.print(table)
    note = _length_note(result)
    if note:
        from cat.cli.common import say

        say(f"note: {note}")
    stdout.print(f"results written to {out}")


def _length_note(result: SimulationResult) -> str | None:
    """Why tests stopped short of --length, when some did for want of items: a mean
    length of 150.0 under --length 500 should not leave the reader guessing."""
    summary, settings = result.summary, result.settings
    if not summary.pool_exhausted:
        return None
    if settings.length > settings.n_pool:
        return (
            f"the pool has {settings.n_pool:,} items; tests stopped there, not at "
            f"--length {settings.length}"
        )
    return (
        f"{summary.pool_exhausted:,} of {settings.examinees:,} tests ran out of items "
        f"before --length {settings.length} (exposure control held the rest back)"
    )
