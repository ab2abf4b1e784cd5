"""A human-readable report of one assessment: one file, ``index.html``.

The page is self-contained (inline CSS, the plots inlined as PNG data URIs, no
JavaScript, nothing fetched or linked) so it can be mailed, attached to a ticket,
archived or opened from a file share. Every piece of text from the result is
HTML-escaped. The plots are drawn by ``cat.reports.plots`` and
``cat.reports.profile_plot``; ``cat.reports.inline`` puts them into the page.
"""

from __future__ import annotations

import html
import json
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cat.arguments import PathArg, api_errors, as_path
from cat.assessment.result import AssessmentResult, Neighbour
from cat.engine.pool_params import calibrated_params
from cat.engine.selection import PoolParams, as_pool_params
from cat.errors import CatError
from cat.reports.inline import figure_html, png_data_uri
from cat.reports.plots import DPI, information_figure, ranking_figure, theta_figure
from cat.reports.profile_plot import profile_figure
from cat.reports.values import finite, model_interval, references
from itempool import LoadedPool

__all__ = ["write_report"]


@api_errors
def write_report(
    result: AssessmentResult, params: LoadedPool | PoolParams, out_dir: PathArg
) -> Path:
    """Write the report, ``index.html``, into ``out_dir`` (a str or path, created with
    its parents) and return its path. The page needs no other file: its plots (θ during
    the test, the ranking, the test information and, where the pool has scenarios, the
    profile) are inlined.

    ``params`` is the pool assessed (``cat.load_pool``) or its item parameters, used for
    the test information curve."""
    if not isinstance(result, AssessmentResult):
        raise CatError(
            f"result must be an AssessmentResult (cat.assess), got {type(result).__name__}"
        )
    if isinstance(params, LoadedPool):
        params = calibrated_params(params)
    checked = as_pool_params(params)
    if checked is None:
        raise CatError(
            "params must be the pool (cat.load_pool) or its item parameters, got "
            f"{type(params).__name__}"
        )
    params = checked
    out_dir = as_path(out_dir, "out_dir")
    if out_dir.exists() and not out_dir.is_dir():
        raise CatError(f"out_dir {out_dir} is a file: the report is a folder")
    out_dir.mkdir(parents=True, exist_ok=True)
    # A subject id in Chinese has no glyphs in matplotlib's default font; boxes in one
    # label are not worth a warning line at the end of a run.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Glyph .* missing", category=UserWarning)
        profile = profile_figure(result)
        figures = _Figures(
            theta=png_data_uri(theta_figure(result, params)),
            ranking=png_data_uri(ranking_figure(result).figure),
            information=png_data_uri(information_figure(result, params)),
            # drawn at matplotlib's default dpi; shown at the other plots' scale
            profile=None if profile is None else png_data_uri(profile, DPI),
        )
    index = out_dir / "index.html"
    index.write_text(_page(result, figures), encoding="utf-8")
    return index


@dataclass(frozen=True)
class _Figures:
    """The page's plots as data URIs; ``profile`` is None on a pool without scenarios."""

    theta: str
    ranking: str
    information: str
    profile: str | None


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
_ANSWERS = {1: "right", 0: "wrong", None: "skipped"}


def _answer(response: float | None, scored: bool) -> str:
    """An item's answer as the table shows it: right/wrong, or its score on a pool of
    scored items (0..m, or a continuous item's value in [0, 1])."""
    if scored and response is not None:
        return f"{response:.3g}"
    return _ANSWERS.get(None if response is None else int(response), _DASH)


def _e(value: object) -> str:
    return html.escape(str(value))


def _f(value: float, digits: int = 2) -> str:
    return f"{value:.{digits}f}" if finite(value) else _DASH


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%" if finite(value) else _DASH


def _interval(low: float, high: float, fmt: Callable[[float], str] = _f) -> str:
    return f"{fmt(low)} – {fmt(high)}" if finite(low) and finite(high) else _DASH


def _rows(rows: Sequence[tuple[str, str]]) -> str:
    """Table rows from (label, already-escaped HTML) pairs."""
    return "".join(f"<tr><th>{_e(label)}</th><td>{cell}</td></tr>" for label, cell in rows)


def _rank_text(result: AssessmentResult) -> str:
    rank = result.rank
    return _DASH if rank is None else f"{rank.position} of {rank.of}"


def measure(result: AssessmentResult) -> str:
    """What the predictions are of: "accuracy", or on a pool of scored items "score" (the
    mean share of each item's top score)."""
    return "score" if result.pool.scored else "accuracy"


def _summary(result: AssessmentResult) -> list[tuple[str, str]]:
    """(label, escaped HTML) rows of the summary table."""
    own = model_interval(result)
    what = measure(result)
    acc = result.predicted_accuracy
    used = f"{result.n_items:,} of {result.pool.n_items:,}"
    if result.pool.n_items > 0:
        used += f" ({100 * result.n_items / result.pool.n_items:.1f}% of the pool)"
    if result.n_skipped:
        used += f"; {result.n_skipped:,} skipped"
    rows = [
        (
            "Ability θ",
            f"{_f(own.theta)} ({own.level} interval {_interval(own.low, own.high)}), "
            f"SE {_f(result.se)}",
        ),
        (
            f"Predicted {what} on the whole pool",
            f"{_pct(acc.value)} (interval {_interval(acc.low, acc.high, _pct)})",
        ),
        (f"{what.capitalize()} interval from", _e(result.accuracy_interval.method)),
    ]
    if result.truth is not None:
        rows.append((f"True {what} on the whole pool", _pct(result.truth.accuracy)))
    rows += [("Rank among the references", _e(_rank_text(result))), ("Items used", _e(used))]
    fit = result.person_fit
    if fit.lz is None:
        fit_text = "not computed"
    elif fit.flagged:
        fit_text = f"lz {_f(fit.lz)}, flagged: below {fit.threshold:g} (an unusual pattern)"
    else:
        fit_text = f"lz {_f(fit.lz)} (flagged below {fit.threshold:g})"
    rows.append(("Person fit", _e(fit_text)))
    unlike = result.unlike_references
    if unlike is not None:
        verdict = (
            "flagged: unlike the references, and the interval widened for it"
            if unlike.flagged
            else "as the references'"
        )
        rows.append(
            (
                "Disagreement",
                _e(
                    f"{100 * unlike.disagreement:.1f} points from the {unlike.companion} "
                    f"prediction of the same answers ({_pct(unlike.companion_accuracy)}); "
                    f"9 in 10 references at most {100 * unlike.threshold:.1f}; {verdict}"
                ),
            )
        )
    slope = result.slope_check
    if slope is not None:
        verdict = "flagged: the answers do not follow item difficulty" if slope.flagged else "fits"
        rows.append(
            ("Slope check", _e(f"z {_f(slope.z)} (flagged below {_f(slope.threshold)}); {verdict}"))
        )
    fallback = result.fallback
    if fallback is not None:
        was = fallback.replaced
        rows.append(
            (
                "Fallback",
                _e(
                    "the answers' own accuracy, recalibrated on the items' difficulty (slope "
                    f"{_f(fallback.slope)}), in place of the design's {_pct(was.value)} "
                    f"(interval {_interval(was.low, was.high, _pct)})"
                ),
            )
        )
    usage = result.usage
    if usage is not None:
        total = usage.prompt_tokens + usage.completion_tokens
        tokens = (
            f"{usage.prompt_tokens:,} prompt + {usage.completion_tokens:,} completion = "
            f"{total:,} in {usage.calls:,} calls"
        )
        if usage.calls_from_store:
            tokens += f" ({usage.calls_from_store:,} more answered from the store)"
        if usage.reasoning_tokens:
            tokens += f"; {usage.reasoning_tokens:,} of them reasoning"
        if usage.truncated:
            tokens += f"; {usage.truncated:,} answers cut off at the token limit"
        rows.append(("Tokens", _e(tokens)))
    protocol = result.settings.protocol
    if protocol is not None:
        if protocol.followed:
            asked = f"{protocol.name}: asked and graded as the references were"
        else:
            asked = (
                f"OFF PROTOCOL: not asked as {protocol.name} says "
                f"({', '.join(protocol.differs)} differ); θ and the prediction are not on "
                "the references' scale"
            )
        rows.append(("Protocol", _e(asked)))
    rows.append(("Stop reason", _e(result.stop_reason or _DASH)))
    return rows


def _page(result: AssessmentResult, figures: _Figures) -> str:
    own = model_interval(result)
    acc = result.predicted_accuracy
    pool = result.pool
    pool_text = pool.name if pool.version is None else f"{pool.name} v{pool.version}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>CAT assessment: {_e(result.model)}</title><style>{_CSS}</style></head>",
        "<body><main>",
        f"<h1>{_e(result.model)}</h1>",
        f'<p class="sub">Adaptive test on pool <strong>{_e(pool_text)}</strong> '
        f"({pool.n_items:,} items)</p>",
        '<div class="cards">',
        _card(f"Predicted {measure(result)}", _pct(acc.value), _interval(acc.low, acc.high, _pct)),
        _card("Ability θ", _f(own.theta), f"{own.level}: {_interval(own.low, own.high)}"),
        _card("Rank", _rank_text(result), f"{result.n_items:,} items answered"),
        "</div>",
        "<h2>Summary</h2>",
        f"<table>{_rows(_summary(result))}</table>",
        _scenarios(result),
        _profile(result, figures.profile),
        "<h2>Plots</h2>",
        figure_html(
            figures.theta,
            "θ estimate after each item with its ±1.645 SE band",
            "Ability estimate after each item; ticks at the bottom mark "
            + (
                "each answer's score as a share of the item's top score (full marks, "
                "partial, zero)."
                if pool.scored
                else "right and wrong answers."
            ),
        ),
        figure_html(
            figures.ranking,
            "θ of every reference subject and of this model with intervals",
            "Reference subjects and this model (highlighted), with 90% intervals.",
        ),
        figure_html(
            figures.information,
            "test information of the pool over θ",
            "Test information of the whole pool; the lines mark this model's θ and its interval.",
        ),
        _neighbours(result),
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


#: A data table's columns: (header HTML, whether the column holds right-aligned numbers).
_Columns = Sequence[tuple[str, bool]]

_SCENARIO_COLUMNS: _Columns = (
    ("Scenario", False),
    ("Predicted", True),
    ("Interval", True),
    ("Items given", True),
)
_NEIGHBOUR_COLUMNS: _Columns = (("Subject", False), ("θ", True), ("SE", True), ("P(above)", True))
_ITEM_COLUMNS: _Columns = (
    ("#", True),
    ("Item", False),
    ("Scenario", False),
    ("Answer", False),
    ("θ after", True),
    ("SE after", True),
)


def _tr(columns: _Columns, cells: Sequence[str], tag: str = "td", attrs: str = "") -> str:
    """One row of a data table from already-escaped HTML cells."""
    inner = "".join(
        f"<{tag} class='num'>{cell}</{tag}>" if numeric else f"<{tag}>{cell}</{tag}>"
        for (_, numeric), cell in zip(columns, cells, strict=True)
    )
    return f"<tr{attrs}>{inner}</tr>"


def _table(columns: _Columns, rows: Sequence[Sequence[str]], marked: int | None = None) -> str:
    """A data table of already-escaped HTML cells, row ``marked`` highlighted; "" (no
    table, and the caller shows no section) when there are no rows."""
    if not rows:
        return ""
    body = "".join(
        _tr(columns, cells, attrs=" class='me'" if k == marked else "")
        for k, cells in enumerate(rows)
    )
    return f"<table>{_tr(columns, [name for name, _ in columns], tag='th')}{body}</table>"


def _scenarios(result: AssessmentResult) -> str:
    table = _table(
        _SCENARIO_COLUMNS,
        [
            [_e(name), _pct(s.value), _interval(s.low, s.high, _pct), f"{s.n_given:,}"]
            for name, s in (result.scenarios or {}).items()
        ],
    )
    return table and f"<h2>Predicted {measure(result)} by scenario</h2>{table}"


def _profile(result: AssessmentResult, uri: str | None) -> str:
    if not result.scenarios or uri is None:
        return ""
    text = f"Predicted {measure(result)} per scenario with its 90% interval (dashed: overall)"
    profile = result.profile
    lines = []
    if profile is not None:
        text += "; right: each scenario's factor score with its 90% band"
        general = profile.factors[0]
        ranks = []
        if profile.general_rank is not None:
            ranks.append(f"rank {profile.general_rank.position} of {profile.general_rank.of}")
        if profile.model == "bifactor":
            lines.append(
                f"<p>{_e(profile.model)} model: general factor {_e(_f(general.score))} "
                f"(sd {_e(_f(general.sd))}){_e('; ' + ', '.join(ranks)) if ranks else ''}</p>"
            )
    return "".join(["<h2>Profile</h2>", *lines, figure_html(uri, "profile across scenarios", text)])


def _neighbours(result: AssessmentResult) -> str:
    refs = references(result)
    if not refs:
        return "<h2>Neighbours</h2><p>The pool has no reference subjects to rank against.</p>"
    theta = result.theta
    # Same rule as the rank: a reference is above when its θ is strictly higher.
    split = sum(1 for r in refs if r.theta > theta) if finite(theta) else len(refs)
    above, below = refs[max(split - 3, 0) : split], refs[split : split + 3]

    def cells(ref: Neighbour) -> list[str]:
        return [_e(ref.subject_id), _f(ref.theta), _f(ref.se), _f(ref.p_above)]

    me = [f"{_e(result.model)} (this model)", _f(theta), _f(result.se), ""]
    rows = [*map(cells, above), me, *map(cells, below)]
    return (
        "<h2>Neighbours</h2><p>The reference subjects just above and below this model. "
        "P(above) is the probability that this model's ability is higher than theirs.</p>"
        + _table(_NEIGHBOUR_COLUMNS, rows, marked=len(above))
    )


def _items(result: AssessmentResult) -> str:
    table = _table(
        _ITEM_COLUMNS,
        [
            [
                str(k),
                _e(i.id),
                _e(i.scenario or ""),
                _answer(i.response, result.pool.scored),
                _f(i.theta_after),
                _f(i.se_after),
            ]
            for k, i in enumerate(result.items, start=1)
        ],
    )
    # <details> folds the long list away without JavaScript.
    return table and (
        f"<h2>Items</h2><details><summary>All {len(result.items)} items in the order given"
        f"</summary>{table}</details>"
    )


def _footer(result: AssessmentResult) -> str:
    settings = result.settings.model_dump(mode="json")
    rows = [
        (key, f"<code>{_e(json.dumps(value, sort_keys=True))}</code>")
        for key, value in settings.items()
    ]
    rows.append(("pool file", f"<code>{_e(result.pool.path)}</code>"))
    if "seed" not in settings:  # the session's settings hold it: list it once
        rows.append(("seed", _e(result.seed)))
    rows.append(("created", _e(result.created)))
    return (
        f"<footer><h2>Settings</h2><table>{_rows(rows)}</table><p>Written by cat-llm.</p></footer>"
    )
