"""``cat pool fit``: item fit, broken items and drift of a calibrated pool."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from cat.cli.common import check_writable, handle_errors, progress_bar, say, stdout

if TYPE_CHECKING:
    from cat.pools.fit import PoolFitReport


class Correction(StrEnum):
    """How p-values are adjusted for the number of items (``irt.fit.items.CORRECTIONS``)."""

    BH = "bh"
    HOLM = "holm"


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
    correction: Correction = typer.Option(
        Correction.BH, "--correction", help="bh (false discovery rate) or holm (family-wise error)."
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

    Examples, on the demo pool: the answers of a cat synth run (which also writes the
    options chosen, to run.choices.jsonl), then newer models' answers against earlier
    ones:

      cat synth --pool item_pools/demo-en --agents qwen2.5:7b,llama3.1:8b \\
          --base-url http://localhost:11434/v1 --store run.db --out run.jsonl
      cat pool fit item_pools/demo-en run.jsonl --choices run.choices.jsonl \\
          --out fit.json

      cat pool fit item_pools/demo-en new-models.jsonl \\
          --baseline reference-models.jsonl
    """
    check_writable({"--out": out})
    from cat.pools import fit

    settings = fit.FitSettings(alpha, correction.value, replicates, seed, min_responses)
    with progress_bar("bootstrap", total=replicates) as update:

        def report(done: int, total: int) -> None:
            update(completed=done, description=f"bootstrap replicate {done} of {total}")

        result = fit.fit_pool(
            pool_dir,
            responses,
            baseline=baseline,
            choices=choices,
            settings=settings,
            progress=report,
        )
    if out is not None:
        dump = result.model_dump(mode="json")
        out.write_text(json.dumps(dump, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    _print(result, show, out)


def _count(n: int, noun: str) -> str:
    """``1 item``, ``2 items``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _print(report: PoolFitReport, show: int, out: Path | None) -> None:
    from cat.pools import fit

    pool, settings = report.pool, report.settings
    version = f" v{pool.version}" if pool.version else ""
    lo, hi = report.theta_range
    say(
        f"{pool.name}{version}: {_count(report.items, 'item')}, "
        f"{_count(report.subjects, 'subject')} (θ {lo:+.2f} … {hi:+.2f}); "
        f"{_count(report.items_tested, 'item')} tested"
        + (
            f"; {_count(report.items_not_in_pool, 'response item')} not in the pool ignored"
            if report.items_not_in_pool
            else ""
        )
    )
    say(f"method: {report.method}")
    if report.warning:
        say(f"warning: {report.warning}")
    share = report.share_p_below_alpha
    if share is None:
        say(
            f"no item was answered by {settings.min_responses} subjects (--min-responses): "
            "fit not tested; the other checks still ran"
        )
    else:
        say(
            f"unadjusted p < {settings.alpha}: {share:.1%} of tested items "
            f"(about {settings.alpha:.0%} if every item fitted)"
        )
    counts = report.flag_counts
    summary = ", ".join(f"{reason} {counts[reason]}" for reason in fit.REASONS if counts[reason])
    say(f"flagged: {_count(report.flagged, 'item')}" + (f" ({summary})" if summary else ""))
    flagged = [row for row in report.item_rows if row.flags]
    rank = {reason: k for k, reason in enumerate(fit.REASONS)}
    flagged.sort(key=lambda row: (min(rank[f.reason] for f in row.flags), row.p_adjusted or 1.0))
    if flagged and show:
        table = Table(title=f"Flagged items ({min(show, len(flagged))} of {len(flagged)})")
        for col in ("item", "n", "a", "b", "c", "outfit", "reasons"):
            table.add_column(col, justify="left" if col in ("item", "reasons") else "right")
        for row in flagged[:show]:
            table.add_row(
                row.item_id,
                str(row.n),
                f"{row.a:.2f}",
                f"{row.b:+.2f}",
                f"{row.c:.2f}",
                "" if row.outfit is None else f"{row.outfit:.2f}",
                "\n".join(f"{f.reason}: {f.detail}" for f in row.flags),
            )
        stdout.print(table)
    if out is not None:
        say(f"every item's statistics written to {out}")
