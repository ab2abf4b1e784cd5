"""``cat recalibrate``: a new version of a pool, with new responses, on the old scale."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from cat.cli.common import check_writable, handle_errors, progress_bar, say, stdout
from cat.pools.names import Method

if TYPE_CHECKING:
    from cat.pools.recalibration_job import RecalibratedPool


@handle_errors
def recalibrate_pool(
    responses: list[Path] = typer.Argument(..., help="New response matrices (.jsonl / .csv)."),
    pool_dir: Path = typer.Option(..., "--pool", help="The calibrated pool to start from."),
    out: Path = typer.Option(..., "--out", help="Folder for the new version of the pool."),
    method: Method = typer.Option(
        Method.ANCHOR,
        "--method",
        help="anchor: pool items keep their parameters; concurrent: refit every item, then link.",
    ),
    items: Path | None = typer.Option(
        None, "--items", help="items.jsonl lines of the items new to the pool."
    ),
    min_responses: int = typer.Option(
        30, "--min-responses", min=1, help="Flag new items answered by fewer subjects."
    ),
) -> None:
    """Recalibrate a pool with new responses (new models, new items) while keeping its
    θ scale, so that earlier results stay comparable. Writes a new pool version to
    --out with the provenance chain in pool.json.

    --method anchor keeps every pool item's parameters and estimates the new items and
    the new subjects on the pool's scale; --method concurrent refits every item on the
    new data and moves the result onto the pool's scale by Stocking-Lord linking (the
    constants are reported).

    Example:

      cat recalibrate new-models.jsonl --pool item_pools/demo --items new-items.jsonl --out demo-v2
    """
    from cat.pools.recalibration_job import recalibrate_pool as run_recalibration

    check_writable(folders={"--out": out})
    with progress_bar(f"recalibrating ({method.value})", total=None):
        result = run_recalibration(responses, pool_dir, out, method, items, min_responses)
    _print(result)


def _print(result: RecalibratedPool) -> None:
    title = f"Recalibration ({result.method}) → version {result.version}"
    table = Table(title=title, show_header=False)
    table.add_column(style="bold")
    table.add_column()
    scale = result.scale
    from cat.pools.recalibration_job import LinkingConstants

    if isinstance(scale, LinkingConstants):
        table.add_row(
            "linking",
            f"θ_old = {scale.A:.4f} θ_new {scale.B:+.4f} "
            f"(Stocking-Lord, {scale.n_anchors} anchors)",
        )
    else:
        mean = "?" if scale.latent_mean is None else f"{scale.latent_mean:+.3f}"
        sd = "?" if scale.latent_sd is None else f"{scale.latent_sd:.3f}"
        table.add_row("new group", f"mean {mean}, SD {sd} on the pool's scale")
    table.add_row("items", f"{result.n_items} ({len(result.new_items)} new)")
    thin = ", ".join(result.thin_items[:5]) + (" …" if len(result.thin_items) > 5 else "")
    table.add_row("thinly answered new items", f"{len(result.thin_items)} {thin}".strip())
    table.add_row("reference subjects", str(result.n_references))
    stdout.print(table)
    say(f"new pool written to {result.out}")
