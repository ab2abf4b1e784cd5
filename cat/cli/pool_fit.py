"""``cat pool fit``: item fit, broken items and drift of a calibrated pool."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from cat.cli.common import (
    check_writable,
    handle_errors,
    package_version,
    progress_bar,
    say,
    stdout,
)
from cat.pool_fit import REASONS, FitSettings, check_pool_fit, read_choices
from cat.pool_format import load_pool
from cat.recalibration import merge_responses
from irt.item_fit import CORRECTIONS
from irt.readers import read_responses


@handle_errors
def fit_pool(
    pool_dir: Path = typer.Argument(..., help="The calibrated pool folder."),
    responses: list[Path] = typer.Argument(
        ..., help="Response matrices (.jsonl / .csv, .gz): the subjects to test the items on."
    ),
    baseline: list[Path] | None = typer.Option(
        None,
        "--baseline",
        help="Responses from an earlier period (repeatable): flags items whose difficulty "
        "changed since.",
    ),
    choices: Path | None = typer.Option(
        None,
        "--choices",
        help="Chosen options (JSONL, as cat synth writes) for the answer-key check.",
    ),
    alpha: float = typer.Option(0.05, "--alpha", help="Level of every test, after correction."),
    correction: str = typer.Option(
        "bh", "--correction", help="bh (false discovery rate) or holm (family-wise error)."
    ),
    replicates: int = typer.Option(
        50, "--replicates", min=20, help="Parametric-bootstrap replicates per item."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap (recorded in --out)."),
    min_responses: int = typer.Option(
        10, "--min-responses", min=3, help="Items answered by fewer subjects are not tested."
    ),
    out: Path | None = typer.Option(
        None, "--out", help="Write every item's statistics and flags here (JSON)."
    ),
    show: int = typer.Option(25, "--show", min=0, help="Flagged items to list (worst first)."),
) -> None:
    """Check a pool's health on a set of responses: items that misfit the model, items
    that look broken, items that drifted.

    Reasons an item is flagged: misfit (a chi-square over ability groups, bootstrap p-values
    corrected for the number of items), low_discrimination (a < 0.2), c_at_prior_edge,
    all_right / all_wrong, key_suspect (a distractor preferred by the strongest third,
    with --choices; and right answers going with lower ability), and with
    --baseline easier / harder (difficulty moved beyond chance: an item that became much
    easier for new models only is the contamination signal).

    Each subject's θ is scored on the pool's scale and taken as known, which suits
    subjects that answered many items (a warning says when θ is imprecise). --out keeps
    every item's statistics, the settings and the seed.

    Examples:

      cat synth --pool my-pool ... --out run.jsonl      # also writes run.choices.jsonl

      cat pool fit my-pool run.jsonl --choices run.choices.jsonl --out fit.json

      cat pool fit my-pool new-models.jsonl --baseline reference-models.jsonl
    """
    if correction not in CORRECTIONS:
        raise typer.BadParameter(f"takes {', '.join(CORRECTIONS)}", param_hint="--correction")
    check_writable(out)
    settings = FitSettings(alpha, correction, replicates, seed, min_responses)
    pool = load_pool(pool_dir)
    matrix = merge_responses([read_responses(p) for p in responses])
    earlier = merge_responses([read_responses(p) for p in baseline]) if baseline else None
    chosen = read_choices(choices) if choices is not None else None
    with progress_bar("bootstrap", total=replicates) as update:

        def report(done: int, total: int) -> None:
            update(completed=done, description=f"bootstrap replicate {done} of {total}")

        figures = check_pool_fit(
            pool, matrix, settings, baseline=earlier, choices=chosen, progress=report
        )
    figures["package_version"] = package_version()
    figures["date"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    figures["responses"] = [str(p) for p in responses]
    figures["baseline"] = [str(p) for p in baseline] if baseline else None
    if out is not None:
        out.write_text(json.dumps(figures, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    _print(figures, show, out)


def _print(figures: dict[str, Any], show: int, out: Path | None) -> None:
    pool, settings = figures["pool"], figures["settings"]
    version = f" v{pool['version']}" if pool["version"] else ""
    lo, hi = figures["theta_range"]
    say(
        f"{pool['name']}{version}: {figures['items']} items, {figures['subjects']} subjects "
        f"(θ {lo:+.2f} … {hi:+.2f}); {figures['items_tested']} items tested"
        + (
            f"; {figures['items_not_in_pool']} response items not in the pool ignored"
            if figures["items_not_in_pool"]
            else ""
        )
    )
    say(f"method: {figures['method']}")
    if figures["warning"]:
        say(f"warning: {figures['warning']}")
    share = figures["share_p_below_alpha"]
    if share is None:
        say(
            f"no item was answered by {settings['min_responses']} subjects (--min-responses): "
            "fit not tested; the other checks still ran"
        )
    else:
        say(
            f"unadjusted p < {settings['alpha']}: {share:.1%} of tested items "
            f"(about {settings['alpha']:.0%} if every item fitted)"
        )
    counts = figures["flag_counts"]
    summary = ", ".join(f"{reason} {counts[reason]}" for reason in REASONS if counts[reason])
    say(f"flagged: {figures['flagged']} items" + (f" ({summary})" if summary else ""))
    flagged = [row for row in figures["item_rows"] if row["flags"]]
    rank = {reason: k for k, reason in enumerate(REASONS)}
    flagged.sort(
        key=lambda row: (min(rank[f["reason"]] for f in row["flags"]), row["p_adjusted"] or 1.0)
    )
    if flagged and show:
        table = Table(title=f"Flagged items ({min(show, len(flagged))} of {len(flagged)})")
        for col in ("item", "n", "a", "b", "c", "outfit", "reasons"):
            table.add_column(col, justify="left" if col in ("item", "reasons") else "right")
        for row in flagged[:show]:
            table.add_row(
                row["item_id"],
                str(row["n"]),
                f"{row['a']:.2f}",
                f"{row['b']:+.2f}",
                f"{row['c']:.2f}",
                "" if row["outfit"] is None else f"{row['outfit']:.2f}",
                "\n".join(f"{f['reason']}: {f['detail']}" for f in row["flags"]),
            )
        stdout.print(table)
    if out is not None:
        say(f"every item's statistics written to {out}")
