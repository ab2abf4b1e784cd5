"""A human-readable report of one assessment: ``index.html`` beside three PNG plots.

The page is self-contained (inline CSS, no JavaScript, nothing fetched) so it can be
mailed, archived or opened from a file share. It reads the RESULT.json shape of
``cat assess`` and tolerates extra or missing keys: a page with blanks is more useful
than an exception at the end of a paid run.
"""

from __future__ import annotations

import html
import json
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from irt.models import ItemParams, test_information

__all__ = ["write_report"]

_Z90 = 1.645
_DPI = 110
_MODEL_COLOUR = "#d95f02"
_REF_COLOUR = "#4c6a92"
_RIGHT_COLOUR = "#1b9e77"
_WRONG_COLOUR = "#c0392b"
_LABEL_CHARS = 40


def write_report(result: Mapping[str, Any], params: ItemParams, out_dir: Path) -> Path:
    """Write ``index.html``, ``theta.png``, ``ranking.png`` and ``information.png`` into
    ``out_dir`` (created with its parents) and return the path of ``index.html``.

    ``result`` is a ``cat assess`` RESULT.json dict; ``params`` the pool's item parameters,
    used for the test information curve."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    # A subject id in Chinese has no glyphs in matplotlib's default font; boxes in one
    # label are not worth a warning line at the end of a run.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Glyph .* missing", category=UserWarning)
        _save(_theta_figure(result), out_dir / "theta.png")
        _save(_ranking_figure(result), out_dir / "ranking.png")
        _save(_information_figure(result, params), out_dir / "information.png")
    index = out_dir / "index.html"
    index.write_text(_page(result, params), encoding="utf-8")
    return index


# ----------------------------------------------------------------------------- values


def _num(value: object) -> float:
    """A float from a JSON value; NaN for anything missing or non-numeric."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return math.nan
    return float(value)


def _ok(value: float) -> bool:
    return math.isfinite(value)


def _dict(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> list[Any]:
    return list(value) if isinstance(value, Sequence) and not isinstance(value, str) else []


def _references(result: Mapping[str, Any]) -> list[tuple[str, float, float, float]]:
    """(subject id, θ, SE, P(model above)) of every reference with a finite θ, strongest
    first."""
    rows = []
    for ref in _list(_dict(result.get("rank")).get("above")):
        ref = _dict(ref)
        theta = _num(ref.get("theta"))
        if _ok(theta):
            rows.append(
                (
                    str(ref.get("subject_id", "?")),
                    theta,
                    _num(ref.get("se")),
                    _num(ref.get("p_above")),
                )
            )
    return sorted(rows, key=lambda r: -r[1])


def _model_interval(result: Mapping[str, Any]) -> tuple[float, float, float, str]:
    """θ, the ends of its interval (±1.645 SE where the result has none) and the level."""
    theta, se = _num(result.get("theta")), _num(result.get("se"))
    interval = _dict(result.get("theta_interval"))
    low, high = _num(interval.get("low")), _num(interval.get("high"))
    level = _num(interval.get("level"))
    if not (_ok(low) and _ok(high)) and "low" not in interval and _ok(se):
        low, high, level = theta - _Z90 * se, theta + _Z90 * se, 0.9
    return theta, low, high, f"{100 * level:.0f}%" if _ok(level) else "90%"


def _tex_safe(text: str) -> str:
    """Keep matplotlib from reading ``$...$`` in a label as mathtext."""
    short = text if len(text) <= _LABEL_CHARS else text[: _LABEL_CHARS - 1] + "…"
    return short.replace("$", r"\$")


# ----------------------------------------------------------------------------- plots


def _save(fig: Figure, path: Path) -> None:
    fig.savefig(path, dpi=_DPI, format="png")
    fig.clear()


def _note(ax: Axes, text: str, y: float = 0.5) -> None:
    ax.text(0.5, y, text, transform=ax.transAxes, ha="center", va="center", color="0.4")


def _theta_figure(result: Mapping[str, Any]) -> Figure:
    fig = Figure(figsize=(7.5, 3.6), dpi=_DPI, layout="constrained")
    ax = fig.add_subplot()
    ax.set_xlabel("items answered")
    ax.set_ylabel("θ estimate")
    ax.set_title("Ability estimate during the test (band: ±1.645 SE)", fontsize=10, loc="left")
    items = [_dict(i) for i in _list(result.get("items"))]
    final = _num(result.get("theta"))
    if _ok(final):
        ax.axhline(final, color=_MODEL_COLOUR, lw=1, ls="--", label=f"final θ = {final:.2f}")
    if not items:
        ax.set_xlim(0, 1)
        ax.set_xticks([])
        if _ok(final):
            ax.set_ylim(final - 1.0, final + 1.0)
        _note(ax, "no items were given")
        return fig
    step = np.arange(1, len(items) + 1, dtype=np.float64)
    theta = np.array([_num(i.get("theta_after")) for i in items])
    theta[~np.isfinite(theta)] = np.nan  # an infinite θ would stretch the axes to nothing
    se = np.array([_num(i.get("se_after")) for i in items])
    band = np.isfinite(theta) & np.isfinite(se)
    half = np.where(band, _Z90 * np.where(band, se, 0.0), 0.0)
    ax.fill_between(step, theta - half, theta + half, where=band, color=_REF_COLOUR, alpha=0.2)
    ax.plot(step, theta, color=_REF_COLOUR, lw=1.5, marker="." if len(items) <= 60 else None)
    # The first bands span the whole prior: the view follows the path and the bands of the
    # later nine tenths, and lets the early band run off the axes.
    late = band & (step > len(items) // 10)
    shown = np.concatenate(
        [theta[np.isfinite(theta)], (theta - half)[late], (theta + half)[late], [final]]
    )
    shown = shown[np.isfinite(shown)]
    if shown.size:
        low, high = float(shown.min()), float(shown.max())
        pad = 0.08 * max(high - low, 0.5)
        ax.set_ylim(low - 2.5 * pad, high + pad)  # room at the bottom for the answer ticks
    response = np.array([_num(i.get("response")) for i in items])
    for value, y, colour, label in (
        (1.0, 0.07, _RIGHT_COLOUR, "right"),
        (0.0, 0.03, _WRONG_COLOUR, "wrong"),
    ):
        hit = response == value
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
    # Above the axes, so it never hides the early, wide part of the band.
    ax.legend(
        loc="lower right",
        bbox_to_anchor=(1.0, 1.0),
        fontsize=8,
        frameon=False,
        ncols=3,
        borderaxespad=0.0,
    )
    return fig


def _ranking_figure(result: Mapping[str, Any]) -> Figure:
    refs = _references(result)
    model = str(result.get("model", "this model"))
    theta, low, high, _ = _model_interval(result)
    rows: list[tuple[str, float, float, float, bool]] = [
        (sid, t, t - _Z90 * s, t + _Z90 * s, False) if _ok(s) else (sid, t, t, t, False)
        for sid, t, s, _ in refs
    ]
    if _ok(theta):
        rows.append((model, theta, low if _ok(low) else theta, high if _ok(high) else theta, True))
    rows.sort(key=lambda r: r[1])  # bottom to top, so the strongest is drawn at the top
    n = max(len(rows), 1)
    fig = Figure(figsize=(7.5, max(2.6, 0.9 + 0.22 * n)), dpi=_DPI, layout="constrained")
    ax = fig.add_subplot()
    ax.set_xlabel("θ (bars: 90% interval)")
    ax.set_title("Ability of the reference subjects and of this model", fontsize=10)
    if not rows:
        _note(ax, "no reference subjects and no θ to show")
        ax.set_yticks([])
        return fig
    y = np.arange(len(rows), dtype=np.float64)
    for k, (_, t, lo, hi, mine) in enumerate(rows):
        colour = _MODEL_COLOUR if mine else _REF_COLOUR
        ax.plot([lo, hi], [y[k], y[k]], color=colour, lw=2.5 if mine else 1.5)
        ax.plot([t], [y[k]], "D" if mine else "o", color=colour, ms=6 if mine else 4)
    if _ok(theta):
        ax.axvline(theta, color=_MODEL_COLOUR, lw=0.8, alpha=0.5)
    size = 9 if len(rows) <= 30 else 7
    ax.set_yticks(y, [_tex_safe(r[0]) for r in rows], fontsize=size)
    for label, row in zip(ax.get_yticklabels(), rows, strict=True):
        if row[4]:
            label.set_color(_MODEL_COLOUR)
            label.set_fontweight("bold")
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.grid(axis="x", color="0.9")
    if not refs:
        _note(ax, "the pool has no reference subjects", y=0.85)
    return fig


def _information_figure(result: Mapping[str, Any], params: ItemParams) -> Figure:
    fig = Figure(figsize=(7.5, 3.4), dpi=_DPI, layout="constrained")
    ax = fig.add_subplot()
    ax.set_xlabel("θ")
    ax.set_ylabel("test information")
    ax.set_title("Information of the whole pool", fontsize=10)
    theta, low, high, level = _model_interval(result)
    ends = [v for v in (theta, low, high) if _ok(v)]
    # Widen past [-4, 4] only as far as needed to show this model, never without bound.
    left = max(min([-4.0, *(v - 0.5 for v in ends)]), -8.0)
    right = min(max([4.0, *(v + 0.5 for v in ends)]), 8.0)
    grid = np.linspace(left, right, 241)
    if params.n_items:
        ax.plot(grid, test_information(grid, params), color=_REF_COLOUR, lw=1.8)
    else:
        _note(ax, "the pool has no items")
    if _ok(low) and _ok(high):
        ax.axvspan(low, high, color=_MODEL_COLOUR, alpha=0.12, lw=0, label=f"{level} interval")
        for edge in (low, high):
            ax.axvline(edge, color=_MODEL_COLOUR, lw=0.8, ls=":")
    if _ok(theta):
        ax.axvline(theta, color=_MODEL_COLOUR, lw=1.5, label=f"θ = {theta:.2f}")
    ax.set_xlim(left, right)
    ax.set_ylim(bottom=0)
    if ends:
        ax.legend(loc="upper right", fontsize=8, frameon=False)
    return fig


# ----------------------------------------------------------------------------- page

_CSS = """
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: #222; background: #fafafa; margin: 0; }
main { max-width: 860px; margin: 0 auto; padding: 24px 20px 40px; background: #fff; }
h1 { font-size: 1.6em; margin: 0 0 4px; word-break: break-word; }
h2 { font-size: 1.15em; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
.sub { color: #666; margin: 0 0 18px; }
.cards { display: flex; gap: 12px; flex-wrap: wrap; }
.card { flex: 1 1 180px; border: 1px solid #e3e3e3; border-radius: 6px; padding: 10px 14px; }
.card .big { font-size: 1.7em; font-weight: 600; }
.card .small { color: #666; font-size: 0.9em; }
table { border-collapse: collapse; width: 100%; margin: 6px 0; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid #eee; vertical-align: top; }
th { color: #555; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.me td { background: #fdf0e6; font-weight: 600; }
figure { margin: 12px 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #666; font-size: 0.9em; }
footer { margin-top: 32px; color: #666; font-size: 0.85em; }
footer code { word-break: break-all; }
"""

_DASH = "—"


def _e(value: object) -> str:
    return html.escape(str(value))


def _f(value: float, digits: int = 2) -> str:
    return f"{value:.{digits}f}" if _ok(value) else _DASH


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%" if _ok(value) else _DASH


def _count(value: object) -> str:
    number = _num(value)
    return f"{number:,.0f}" if _ok(number) else _DASH


def _interval(low: float, high: float, fmt: Callable[[float], str] = _f) -> str:
    return f"{fmt(low)} – {fmt(high)}" if _ok(low) and _ok(high) else _DASH


def _rows(rows: Sequence[tuple[str, str]]) -> str:
    """Table rows from (label, already-escaped HTML) pairs."""
    return "".join(f"<tr><th>{_e(label)}</th><td>{cell}</td></tr>" for label, cell in rows)


def _page(result: Mapping[str, Any], params: ItemParams) -> str:
    model = str(result.get("model", "unknown model"))
    pool = _dict(result.get("pool"))
    pool_size = _num(pool.get("n_items"))
    pool_size = pool_size if _ok(pool_size) else float(params.n_items)
    theta, low, high, level_text = _model_interval(result)
    se = _num(result.get("se"))
    acc = _dict(result.get("predicted_accuracy"))
    acc_value, acc_low, acc_high = (_num(acc.get(k)) for k in ("value", "low", "high"))
    rank = _dict(result.get("rank"))
    position, of = _num(rank.get("position")), _num(rank.get("of"))
    rank_text = f"{position:.0f} of {of:.0f}" if _ok(position) and _ok(of) else _DASH
    n_items = _num(result.get("n_items"))
    if not _ok(n_items):
        n_items = float(len(_list(result.get("items"))))
    used = f"{n_items:,.0f} of {pool_size:,.0f}"
    if pool_size > 0:
        used += f" ({100 * n_items / pool_size:.1f}% of the pool)"

    summary = [
        ("Ability θ", f"{_f(theta)} ({level_text} interval {_interval(low, high)}), SE {_f(se)}"),
        (
            "Predicted accuracy on the whole pool",
            f"{_pct(acc_value)} (interval {_interval(acc_low, acc_high, _pct)})",
        ),
        ("Rank among the references", _e(rank_text)),
        ("Items used", _e(used)),
    ]
    usage = _dict(result.get("usage"))
    if usage:
        prompt, completion = _num(usage.get("prompt_tokens")), _num(usage.get("completion_tokens"))
        tokens = f"{_count(prompt)} prompt + {_count(completion)} completion"
        if _ok(prompt) and _ok(completion):
            tokens += f" = {prompt + completion:,.0f}"
        if "calls" in usage:
            tokens += f" in {_count(usage.get('calls'))} calls"
        summary.append(("Tokens", _e(tokens)))
    summary.append(("Stop reason", _e(result.get("stop_reason", _DASH))))

    pool_text = f"{pool.get('name', 'unnamed pool')}"
    if "version" in pool:
        pool_text += f" v{pool['version']}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>CAT assessment: {_e(model)}</title><style>{_CSS}</style></head><body><main>",
        f"<h1>{_e(model)}</h1>",
        f'<p class="sub">Adaptive test on pool <strong>{_e(pool_text)}</strong> '
        f"({_e(_count(pool_size))} items)</p>",
        '<div class="cards">',
        _card("Predicted accuracy", _pct(acc_value), _interval(acc_low, acc_high, _pct)),
        _card("Ability θ", _f(theta), f"{level_text}: {_interval(low, high)}"),
        _card("Rank", rank_text, f"{_count(n_items)} items answered"),
        "</div>",
        "<h2>Summary</h2>",
        f"<table>{_rows(summary)}</table>",
        _scenarios(result),
        "<h2>Plots</h2>",
        _figure(
            "theta.png",
            "θ estimate after each item with its ±1.645 SE band",
            "Ability estimate after each item; ticks at the bottom mark right and wrong answers.",
        ),
        _figure(
            "ranking.png",
            "θ of every reference subject and of this model with intervals",
            "Reference subjects and this model (highlighted), with 90% intervals.",
        ),
        _figure(
            "information.png",
            "test information of the pool over θ",
            "Test information of the whole pool; the lines mark this model's θ and its interval.",
        ),
        _neighbours(result, model, theta, se),
        _items(result),
        _footer(result),
        "</main></body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def _card(title: str, big: str, small: str) -> str:
    return (
        f'<div class="card"><div class="small">{_e(title)}</div>'
        f'<div class="big">{_e(big)}</div><div class="small">{_e(small)}</div></div>'
    )


def _figure(src: str, alt: str, caption: str) -> str:
    return (
        f'<figure><img src="{_e(src)}" alt="{_e(alt)}">'
        f"<figcaption>{_e(caption)}</figcaption></figure>"
    )


def _scenarios(result: Mapping[str, Any]) -> str:
    scenarios = _dict(result.get("scenarios"))
    if not scenarios:
        return ""
    body = "".join(
        f"<tr><td>{_e(name)}</td><td class='num'>{_pct(_num(_dict(s).get('value')))}</td>"
        f"<td class='num'>{_interval(_num(_dict(s).get('low')), _num(_dict(s).get('high')), _pct)}"
        f"</td><td class='num'>{_count(_dict(s).get('n_given'))}</td></tr>"
        for name, s in scenarios.items()
    )
    return (
        "<h2>Predicted accuracy by scenario</h2><table><tr><th>Scenario</th>"
        "<th class='num'>Predicted</th><th class='num'>Interval</th>"
        f"<th class='num'>Items given</th></tr>{body}</table>"
    )


def _neighbours(result: Mapping[str, Any], model: str, theta: float, se: float) -> str:
    refs = _references(result)
    if not refs:
        return "<h2>Neighbours</h2><p>The pool has no reference subjects to rank against.</p>"
    # Same rule as the rank: a reference is above when its θ is strictly higher.
    split = sum(1 for r in refs if r[1] > theta) if _ok(theta) else len(refs)
    shown = [*refs[max(split - 3, 0) : split], None, *refs[split : split + 3]]

    def row(ref: tuple[str, float, float, float] | None) -> str:
        if ref is None:
            return (
                f"<tr class='me'><td>{_e(model)} (this model)</td><td class='num'>{_f(theta)}</td>"
                f"<td class='num'>{_f(se)}</td><td class='num'></td></tr>"
            )
        sid, t, s, p = ref
        return (
            f"<tr><td>{_e(sid)}</td><td class='num'>{_f(t)}</td><td class='num'>{_f(s)}</td>"
            f"<td class='num'>{_f(p)}</td></tr>"
        )

    return (
        "<h2>Neighbours</h2><p>The reference subjects just above and below this model. "
        "P(above) is the probability that this model's ability is higher than theirs.</p>"
        "<table><tr><th>Subject</th><th class='num'>θ</th><th class='num'>SE</th>"
        f"<th class='num'>P(above)</th></tr>{''.join(row(r) for r in shown)}</table>"
    )


def _items(result: Mapping[str, Any]) -> str:
    items = [_dict(i) for i in _list(result.get("items"))]
    if not items:
        return ""
    marks = {1.0: "right", 0.0: "wrong"}
    body = "".join(
        f"<tr><td class='num'>{k}</td><td>{_e(i.get('id', ''))}</td>"
        f"<td>{_e(i.get('scenario', ''))}</td>"
        f"<td>{marks.get(_num(i.get('response')), _DASH)}</td>"
        f"<td class='num'>{_f(_num(i.get('theta_after')))}</td>"
        f"<td class='num'>{_f(_num(i.get('se_after')))}</td></tr>"
        for k, i in enumerate(items, start=1)
    )
    # <details> folds the long list away without JavaScript.
    return (
        f"<h2>Items</h2><details><summary>All {len(items)} items in the order given</summary>"
        "<table><tr><th class='num'>#</th><th>Item</th><th>Scenario</th><th>Answer</th>"
        f"<th class='num'>θ after</th><th class='num'>SE after</th></tr>{body}</table></details>"
    )


def _footer(result: Mapping[str, Any]) -> str:
    rows = [
        (key, f"<code>{_e(json.dumps(value, sort_keys=True, default=str))}</code>")
        for key, value in _dict(result.get("settings")).items()
    ]
    for key in ("seed", "created"):
        if key in result:
            rows.append((key, _e(result[key])))
    table = f"<table>{_rows(rows)}</table>" if rows else ""
    return f"<footer><h2>Settings</h2>{table}<p>Written by cat-llm.</p></footer>"
