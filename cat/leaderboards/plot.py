"""The leaderboard's dot-and-interval plot: each run's predicted accuracy with its 90%
interval, best at the top, the references (where shown) as open grey dots at their
observed accuracy, and a run's true accuracy, where known, as a cross."""

from __future__ import annotations

import math

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import PercentFormatter

from cat.leaderboards.result import Leaderboard
from cat.reports.labels import model_label, reference_label, tex_safe
from cat.reports.plots import DPI

__all__ = ["accuracy_figure"]

_MODEL = "#d95f02"
_REFERENCE = "#4c6a92"
_TRUTH = "#222222"


def accuracy_figure(board: Leaderboard) -> Figure:
    """The figure, one row per leaderboard row."""
    rows = board.rows
    height = 1.3 + 0.28 * len(rows)
    fig = Figure(figsize=(7.5, height), dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    ys = list(range(len(rows)))[::-1]  # the best at the top
    for y, row in zip(ys, rows, strict=True):
        if row.kind == "reference":
            ax.plot(row.accuracy, y, "o", mfc="white", mec=_REFERENCE, ms=5)
            continue
        if row.low is not None and row.high is not None and math.isfinite(row.low + row.high):
            ax.plot([row.low, row.high], [y, y], color=_MODEL, lw=2, solid_capstyle="butt")
        ax.plot(row.accuracy, y, "o", color=_MODEL, ms=6)
        if row.true_accuracy is not None:
            ax.plot(row.true_accuracy, y, "x", color=_TRUTH, ms=6)
    ax.set_yticks(ys)
    ax.set_yticklabels(
        [
            tex_safe(reference_label(r.label) if r.kind == "reference" else model_label(r.label))
            for r in rows
        ]
    )
    for label, row in zip(ax.get_yticklabels(), rows, strict=True):
        if row.kind == "reference":
            label.set_color("0.4")
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlabel(f"{board.measure} on the whole pool")
    ax.xaxis.set_major_formatter(PercentFormatter(xmax=1.0, decimals=0))  # as the table
    ax.grid(axis="x", color="0.9")
    ax.set_axisbelow(True)
    handles = [Line2D([], [], color=_MODEL, marker="o", lw=2, label="predicted, 90% interval")]
    if any(r.kind == "reference" for r in rows):
        handles.append(
            Line2D([], [], ls="", marker="o", mfc="white", mec=_REFERENCE, label="reference")
        )
    if any(r.true_accuracy is not None for r in rows):
        handles.append(Line2D([], [], ls="", marker="x", color=_TRUTH, label="true"))
    ax.legend(handles=handles, loc="lower right", fontsize="small", frameon=False)
    return fig
