"""``cat leaderboard``: runs of ``cat assess`` on one pool in one table, best first."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table
from rich.text import Text

from cat.cli.common import check_writable, handle_errors, say, stdout

if TYPE_CHECKING:
    from cat.leaderboards.display import Column
    from cat.leaderboards.result import Leaderboard


@handle_errors
def leaderboard(
    results: list[Path] = typer.Argument(
        ..., help="RESULT.json files of cat assess, or folders of them."
    ),
    references: bool = typer.Option(
        False,
        "--references",
        help="Add the pool's reference models, at their observed accuracy (the pool is "
        "found at the results' pool path, or give --pool).",
    ),
    pool_dir: Path | None = typer.Option(
        None,
        "--pool",
        help="The pool folder to take the references from; implies --references.",
    ),
    prices: Path | None = typer.Option(
        None,
        "--prices",
        help='Prices per million tokens by model (JSON: {"MODEL": {"input": 2.5, '
        '"output": 10}}, as cat synth --prices) for the cost column.',
    ),
    out: Path | None = typer.Option(
        None, "--out", help="Write the table here: .csv, or .json (every key, documented)."
    ),
    html: Path | None = typer.Option(
        None, "--html", help="Write a self-contained HTML page: the table and a plot."
    ),
) -> None:
    """Rank runs of cat assess on one pool: a table sorted by predicted accuracy with
    its 90% interval, θ ± SE, the probability that each row is above the next one down,
    items used and why the test stopped, calls, tokens and cost where known, and the
    settings that differ between the runs. Runs on different pools are refused; a model
    run twice is kept twice, labelled by its file.

    Examples:

      cat leaderboard a.json b.json c.json

      cat leaderboard runs/ --references --out board.csv --html board.html

      cat leaderboard runs/ --prices prices.json --out board.json
    """
    from cat.leaderboards.build import leaderboard as build
    from cat.leaderboards.files import table_format, write_leaderboard
    from cat.leaderboards.page import write_leaderboard_html

    if out is not None:
        table_format(out)  # a wrong suffix is an error before any reading
    check_writable({"--out": out, "--html": html})
    board = build(results, references=references, pool=pool_dir, prices=prices)
    # The files first: a reader piping the table into head must still get them.
    if out is not None:
        write_leaderboard(board, out)
    if html is not None:
        write_leaderboard_html(board, html)
    _print(board)
    for note in board.notes:
        say(f"note: {note}")
    if out is not None:
        say(f"table written to {out}")
    if html is not None:
        say(f"page written to {html}")


def _print(board: Leaderboard) -> None:
    from cat.leaderboards.display import columns, settings_column, stop_text, usage_columns

    pool = board.pool
    name = pool.name if pool.version is None else f"{pool.name} v{pool.version}"
    refs = [row.kind == "reference" for row in board.rows]
    figures = columns(board)
    _show(f"Leaderboard on {name} ({pool.n_items:,} items)", figures, refs)
    stopped = stop_text(board)
    say(
        ("" if stopped is None else f"{stopped}; ")
        + "P(>next): the probability that a row's accuracy is above the next row's"
    )
    # Calls and settings are the runs' only (a reference has neither), in tables of
    # their own keyed by rank and model, so that each fits a terminal.
    runs = [k for k, ref in enumerate(refs) if not ref]
    settings = settings_column(board)
    for title, extra in (
        ("Calls and cost", usage_columns(board)),
        ("Settings that differ between the runs", [] if settings is None else [settings]),
    ):
        if extra:
            keyed = [replace(c, cells=[c.cells[k] for k in runs]) for c in (*figures[:2], *extra)]
            _show(title, keyed, [False] * len(runs))


def _show(title: str, cols: list[Column], dim: list[bool]) -> None:
    from rich import box

    # No vertical rules: a leaderboard is wide, and its figures must not wrap; names,
    # flags and settings wrap on a narrow terminal (to 8 characters at the least).
    table = Table(title=title, box=box.SIMPLE_HEAD, collapse_padding=True)
    for col in cols:
        table.add_column(
            col.header,
            justify="right" if col.numeric else "left",
            no_wrap=col.numeric,
            overflow="fold",
            min_width=None if col.numeric else min(max(map(len, col.cells), default=1), 8),
        )
    for k, faint in enumerate(dim):
        # Text, not str: a model's name in brackets is no rich markup.
        table.add_row(*(Text(col.cells[k]) for col in cols), style="dim" if faint else None)
    stdout.print(table)
