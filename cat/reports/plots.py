"""The three figures of the report: θ during the test, the ranking among the reference
subjects, and the pool's test information.

Each function builds a ``matplotlib.figure.Figure`` without pyplot (no global state, no
GUI backend); ``cat.reports.inline`` puts it into the page.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from cat.assessment.result import AssessmentResult
from cat.engine.selection import PoolParams, pool_information
from cat.reports.labels import model_label, reference_label, tex_safe
from cat.reports.values import finite, model_interval, references
from irt.types import FloatArray

__all__ = [
    "BAND_REACH",
    "DPI",
    "THETA_CAP",
    "RankingPlot",
    "answer_marks",
    "information_figure",
    "ranking_figure",
    "theta_figure",
    "theta_limits",
]

DPI = 110
THETA_CAP = 6.0  # the estimators' bounds: the view never follows a band past them
BAND_REACH = 1.0  # how far the view follows a band beyond the outermost θ̂
_Z90 = 1.645
_MODEL_COLOUR = "#d95f02"
_REF_COLOUR = "#4c6a92"
# Per mark of an answer (``answer_marks``): height on the axes, colour, legend label.
_ANSWER_MARKS = {
    "right": (0.07, "#1b9e77", "right"),
    "wrong": (0.03, "#c0392b", "wrong"),
    "full": (0.085, "#1b9e77", "full marks"),
    "partial": (0.065, "#e6ab02", "partial"),
    "zero": (0.025, "#c0392b", "zero"),
    "skipped": (0.045, "0.55", "skipped"),
}
_BINARY_MARKS = ("right", "wrong", "skipped")
_SCORED_MARKS = ("full", "partial", "zero", "skipped")
_WIDTH = 7.5  # inches, as wide as the page's column shows them
_RANKING_PLOT_WIDTH = 6.2  # inches left to the ranking's axes beside its labels


def _note(ax: Axes, text: str, y: float = 0.5) -> None:
    ax.text(0.5, y, text, transform=ax.transAxes, ha="center", va="center", color="0.4")


def theta_limits(theta: FloatArray, half: FloatArray, final: float) -> tuple[float, float] | None:
    """y-limits that hold every finite θ̂ and the final θ, and the bands (θ̂ ± ``half``) as far
    as ``BAND_REACH`` beyond the outermost θ̂ and never past ±``THETA_CAP``, so that the first,
    prior-wide bands do not squash the rest of the path; with room below for the answer
    ticks. None when there is nothing finite to show."""
    finite_theta = np.isfinite(theta)
    points = np.concatenate([theta[finite_theta], [final] if finite(final) else []])
    if not points.size:
        return None
    low, high = float(points.min()), float(points.max())
    band = finite_theta & np.isfinite(half)
    if band.any():
        floor, ceiling = max(low - BAND_REACH, -THETA_CAP), min(high + BAND_REACH, THETA_CAP)
        low = min(low, max(float((theta - half)[band].min()), floor))
        high = max(high, min(float((theta + half)[band].max()), ceiling))
    pad = 0.06 * max(high - low, 0.5)
    return low - 3.0 * pad, high + pad  # the answer ticks take the bottom tenth


def answer_marks(result: AssessmentResult, params: PoolParams | None = None) -> list[str]:
    """How the θ plot marks each item given: "right", "wrong" or "skipped" on a pool of
    0/1 items; on a pool of scored items by the score as a share of the item's top
    score in ``params``: "full" (full marks), "partial", "zero" or "skipped" (an item
    ``params`` lacks, or every item without them, counts a score of 1 as full marks)."""
    if not result.pool.scored:
        kinds = {1: "right", 0: "wrong"}
        return [
            "skipped" if i.response is None else kinds.get(int(i.response), "wrong")
            for i in result.items
        ]
    tops: dict[str, float] = {}
    if params is not None and params.scored:
        tops = dict(zip(params.item_ids, params.max_scores.astype(float).tolist(), strict=True))
    marks = []
    for item in result.items:
        if item.response is None:
            marks.append("skipped")
            continue
        share = float(item.response) / max(tops.get(item.id, 1.0), 1e-12)
        # A hair of slack: a continuous item's 0.9999999 of 1 is full marks.
        marks.append("full" if share >= 1 - 1e-9 else "zero" if share <= 1e-9 else "partial")
    return marks


def theta_figure(result: AssessmentResult, params: PoolParams | None = None) -> Figure:
    """θ̂ after each item with its ±1.645 SE band; ticks at the bottom mark the answers:
    right or wrong, or on a pool of scored items full marks, partial or zero by each
    item's top score in ``params`` (``answer_marks``)."""
    fig = Figure(figsize=(_WIDTH, 3.6), dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    ax.set_xlabel("items answered")
    ax.set_ylabel("θ estimate")
    ax.set_title("Ability estimate during the test (band: ±1.645 SE)", fontsize=10, loc="left")
    final = result.theta
    if finite(final):
        ax.axhline(final, color=_MODEL_COLOUR, lw=1, ls="--", label=f"final θ = {final:.2f}")
    items = result.items
    if not items:
        ax.set_xlim(0, 1)
        ax.set_xticks([])
        if finite(final):
            ax.set_ylim(final - 1.0, final + 1.0)
        _note(ax, "no items were given")
        return fig
    step = np.arange(1, len(items) + 1, dtype=np.float64)
    theta = np.array([i.theta_after for i in items], dtype=np.float64)
    theta[~np.isfinite(theta)] = np.nan  # an infinite θ would stretch the axes to nothing
    se = np.array([i.se_after for i in items], dtype=np.float64)
    band = np.isfinite(theta) & np.isfinite(se)
    half = np.where(band, _Z90 * np.where(band, se, 0.0), np.nan)
    ax.fill_between(step, theta - half, theta + half, where=band, color=_REF_COLOUR, alpha=0.2)
    ax.plot(step, theta, color=_REF_COLOUR, lw=1.5, marker="." if len(items) <= 60 else None)
    limits = theta_limits(theta, half, final)
    if limits is not None:
        ax.set_ylim(*limits)
    marks = np.array(answer_marks(result, params))
    for kind in _SCORED_MARKS if result.pool.scored else _BINARY_MARKS:
        y, colour, label = _ANSWER_MARKS[kind]
        hit = marks == kind
        if hit.any():
            ax.scatter(
                step[hit],
                np.full(int(hit.sum()), y),
                marker="|",
                s=40,
                color=colour,
                transform=ax.get_xaxis_transform(),
                label=label,
            )
    ax.set_xlim(0.5, len(items) + 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    # Below the figure, so it neither hides the early, wide part of the band nor the title.
    fig.legend(loc="outside lower center", fontsize=8, frameon=False, ncols=5)
    return fig


@dataclass(frozen=True)
class RankingPlot:
    """``ranking.png`` and its row labels, bottom to top as drawn (before ``$`` escaping)."""

    figure: Figure
    labels: tuple[str, ...]


@dataclass(frozen=True)
class _Row:
    label: str
    theta: float
    low: float
    high: float
    mine: bool


def _band(theta: float, se: float) -> tuple[float, float]:
    """The ends of θ's 90% interval; θ itself for both when the SE is not finite."""
    return (theta - _Z90 * se, theta + _Z90 * se) if finite(se) else (theta, theta)


def ranking_figure(result: AssessmentResult) -> RankingPlot:
    """θ with its 90% interval for every reference subject and for the model (highlighted),
    weakest at the bottom. The figure is widened to its longest label, so that the axes
    keep their width and no label runs off the left edge."""
    refs = references(result)
    rows = [
        _Row(reference_label(r.subject_id), r.theta, *_band(r.theta, r.se), False) for r in refs
    ]
    own = model_interval(result)
    if finite(own.theta):
        low, high = (own.low, own.high) if own.bounded else (own.theta, own.theta)
        rows.append(_Row(model_label(result.model), own.theta, low, high, True))
    rows.sort(key=lambda r: r.theta)  # bottom to top, so the strongest is drawn at the top
    height = max(2.6, 0.9 + 0.22 * max(len(rows), 1))
    fig = Figure(figsize=(_WIDTH, height), dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    ax.set_xlabel("θ (bars: 90% interval)")
    ax.set_title("Ability of the reference subjects and of this model", fontsize=10)
    if not rows:
        _note(ax, "no reference subjects and no θ to show")
        ax.set_yticks([])
        return RankingPlot(fig, ())
    y = np.arange(len(rows), dtype=np.float64)
    for k, row in enumerate(rows):
        colour = _MODEL_COLOUR if row.mine else _REF_COLOUR
        ax.plot([row.low, row.high], [y[k], y[k]], color=colour, lw=2.5 if row.mine else 1.5)
        ax.plot(
            [row.theta], [y[k]], "D" if row.mine else "o", color=colour, ms=6 if row.mine else 4
        )
    if finite(own.theta):
        ax.axvline(own.theta, color=_MODEL_COLOUR, lw=0.8, alpha=0.5)
    size = 9 if len(rows) <= 30 else 7
    ax.set_yticks(y, [tex_safe(r.label) for r in rows], fontsize=size)
    for text, row in zip(ax.get_yticklabels(), rows, strict=True):
        if row.mine:
            text.set_color(_MODEL_COLOUR)
            text.set_fontweight("bold")
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.grid(axis="x", color="0.9")
    if not refs:
        _note(ax, "the pool has no reference subjects", y=0.85)
    FigureCanvasAgg(fig)  # the canvas whose renderer measures the labels below
    widest = max(t.get_window_extent().width for t in ax.get_yticklabels()) / DPI
    fig.set_size_inches(max(_WIDTH, _RANKING_PLOT_WIDTH + widest), height)
    return RankingPlot(fig, tuple(r.label for r in rows))


def information_figure(result: AssessmentResult, params: PoolParams) -> Figure:
    """The pool's test information over θ, with the model's θ and interval marked."""
    fig = Figure(figsize=(_WIDTH, 3.4), dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    ax.set_xlabel("θ")
    ax.set_ylabel("test information")
    ax.set_title("Information of the whole pool", fontsize=10)
    own = model_interval(result)
    ends = [v for v in (own.theta, own.low, own.high) if finite(v)]
    # Widen past [-4, 4] only as far as needed to show this model, never without bound.
    left = max(min([-4.0, *(v - 0.5 for v in ends)]), -8.0)
    right = min(max([4.0, *(v + 0.5 for v in ends)]), 8.0)
    grid = np.linspace(left, right, 241)
    if params.n_items:
        ax.plot(grid, pool_information(params, grid), color=_REF_COLOUR, lw=1.8)
    else:
        _note(ax, "the pool has no items")
    if own.bounded:
        label = f"{own.level} interval"
        ax.axvspan(own.low, own.high, color=_MODEL_COLOUR, alpha=0.12, lw=0, label=label)
        for edge in (own.low, own.high):
            ax.axvline(edge, color=_MODEL_COLOUR, lw=0.8, ls=":")
    if finite(own.theta):
        ax.axvline(own.theta, color=_MODEL_COLOUR, lw=1.5, label=f"θ = {own.theta:.2f}")
    ax.set_xlim(left, right)
    ax.set_ylim(bottom=0)
    if ends:
        ax.legend(loc="upper right", fontsize=8, frameon=False)
    return fig
