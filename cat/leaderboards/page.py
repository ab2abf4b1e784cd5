"""The leaderboard as one self-contained HTML page (``cat leaderboard --html``): the
table, the dot-and-interval plot inlined as a PNG data URI, the notes and the settings
every run shares. Inline CSS, no JavaScript, nothing fetched or linked; every piece of
text from the runs is HTML-escaped."""

from __future__ import annotations

import html
import json
import warnings
from pathlib import Path

from cat.arguments import PathArg, api_errors, as_path
from cat.errors import CatError
from cat.leaderboards.display import columns, setting_columns, stop_text, usage_columns
from cat.leaderboards.plot import accuracy_figure
from cat.leaderboards.result import Leaderboard
from cat.reports.inline import figure_html, png_data_uri

__all__ = ["write_leaderboard_html"]

_CSS = """
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: #222; background: #fafafa; margin: 0; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 20px 40px; background: #fff; }
h1 { font-size: 1.6em; margin: 0 0 4px; }
h2 { font-size: 1.15em; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
.sub { color: #666; margin: 0 0 18px; }
.wide { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; margin: 6px 0; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid #eee;
  vertical-align: top; white-space: nowrap; }
th { color: #555; font-weight: 600; background: #f4f4f4; border-bottom: 2px solid #ddd; }
th.sorted::after { content: " \\25BE"; color: #999; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.ref td { color: #666; }
tbody tr:nth-child(even) td { background: #fbfbfb; }
figure { margin: 12px 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption, footer { color: #666; font-size: 0.9em; }
code { word-break: break-all; }
table.settings td { white-space: normal; }
"""


def _e(value: object) -> str:
    return html.escape(str(value))


#: A list setting longer than this (the few-shot examples' item ids) shows its count
#: and first few, the whole list folded under them.
_LIST_SHOWN = 5


def _setting_cell(value: object) -> str:
    """One setting's value as JSON, wrapping in its cell; a long list folded."""
    text = _e(json.dumps(value, sort_keys=True))
    if not isinstance(value, list) or len(value) <= _LIST_SHOWN:
        return f"<code>{text}</code>"
    first = ", ".join(json.dumps(v) for v in value[:3])
    return (
        f"<details><summary>{len(value):,} values: <code>{_e(first)}</code>, …</summary>"
        f"<code>{text}</code></details>"
    )


@api_errors
def write_leaderboard_html(board: Leaderboard, path: PathArg) -> Path:
    """Write ``board`` as one self-contained HTML page at ``path``; return the path."""
    if not isinstance(board, Leaderboard):
        raise CatError(f"board must be a Leaderboard (cat.leaderboard), got {type(board).__name__}")
    out = as_path(path, "path")
    # Model names in scripts without glyphs in matplotlib's font: boxes, not a warning.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Glyph .* missing", category=UserWarning)
        plot = png_data_uri(accuracy_figure(board))
    out.write_text(_page(board, plot), encoding="utf-8")
    return out


def _table(board: Leaderboard) -> str:
    # One table: the page scrolls sideways where the terminal would have to wrap.
    cols = columns(board) + usage_columns(board) + setting_columns(board, width=60)
    sort_column = 2  # the accuracy column: the rows' order

    def cell(tag: str, text: str, numeric: bool, extra: str = "") -> str:
        classes = " ".join(c for c in ("num" if numeric else "", extra) if c)
        attribute = f' class="{classes}"' if classes else ""
        return f"<{tag}{attribute}>{_e(text)}</{tag}>"

    head = "".join(
        cell("th", c.header, c.numeric, "sorted" if k == sort_column else "")
        for k, c in enumerate(cols)
    )
    body = "".join(
        ("<tr class='ref'>" if row.kind == "reference" else "<tr>")
        + "".join(cell("td", c.cells[k], c.numeric) for c in cols)
        + "</tr>"
        for k, row in enumerate(board.rows)
    )
    return (
        f'<div class="wide"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def _page(board: Leaderboard, plot: str) -> str:
    pool = board.pool
    pool_text = pool.name if pool.version is None else f"{pool.name} v{pool.version}"
    runs = len(board.models)
    refs = len(board.rows) - runs
    counted = f"{runs} run{'s' if runs != 1 else ''}" + (
        f" and {refs} reference models" if refs else ""
    )
    notes = "".join(f"<li>{_e(note)}</li>" for note in board.notes)
    common = "".join(
        f"<tr><th>{_e(key)}</th><td>{_setting_cell(value)}</td></tr>"
        for key, value in board.common_settings.items()
    )
    sources = "".join(f"<li><code>{_e(source)}</code></li>" for source in board.sources)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>CAT leaderboard: {_e(pool_text)}</title><style>{_CSS}</style></head>",
        "<body><main>",
        f"<h1>Leaderboard on {_e(pool_text)}</h1>",
        f'<p class="sub">{_e(counted)} on pool <strong>{_e(pool_text)}</strong> '
        f"({pool.n_items:,} items), sorted by {_e(board.measure)} on the whole pool</p>",
        _table(board),
        f"<p>{_e(_legend(board))}</p>",
        f"<h2>Notes</h2><ul>{notes}</ul>" if notes else "",
        "<h2>Plot</h2>",
        figure_html(
            plot,
            f"predicted {board.measure} of each run with its 90% interval",
            f"Predicted {board.measure} on the whole pool with its 90% interval"
            + ("; open dots: reference models' observed values" if refs else "")
            + ("; crosses: true values, where known" if _has_truth(board) else "")
            + ".",
        ),
        "<footer>",
        f'<h2>Settings all runs share</h2><table class="settings">{common}</table>'
        if common
        else "",
        f"<h2>Results read</h2><ul>{sources}</ul>" if sources else "",
        f"<p>Written by cat-llm {_e(board.package_version)} on {_e(board.created)}.</p>",
        "</footer></main></body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def _legend(board: Leaderboard) -> str:
    stopped = stop_text(board)
    return (
        ("" if stopped is None else stopped[0].upper() + stopped[1:] + ". ")
        + "P(>next) is the probability that a row's accuracy is above the next row's, "
        "from both and their intervals (a reference's accuracy is observed on the whole "
        "pool): near 0.5 the test has not told the two apart."
        + (
            f" Settings that differ between the runs: {', '.join(board.differing_settings)}."
            if board.differing_settings
            else ""
        )
    )


def _has_truth(board: Leaderboard) -> bool:
    return any(row.true_accuracy is not None for row in board.rows)
