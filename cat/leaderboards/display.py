"""The leaderboard's columns as text, once for both the terminal table (``cat
leaderboard``) and the HTML page, so that the two always show the same figures.

Columns: rank, model, accuracy and its 90% interval (a reference's observed accuracy),
the true accuracy (only where some run knows it), θ ± SE, P(above the next row), items
used (a reference's: all it answered) and why the test stopped (length: the maximum
length, se: the target SE, pool: no item left), what ``cat assess`` flagged about the
answers (only where it flagged something); apart, new calls, their tokens and cost
(only where some run made calls), and one column per setting that differs between the
runs, whatever its key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from cat.leaderboards.result import Leaderboard, LeaderboardRow
from cat.reports.labels import shorten

__all__ = [
    "DASH",
    "STOPS",
    "Column",
    "columns",
    "p_text",
    "setting_columns",
    "settings_column",
    "stop_text",
    "usage_columns",
]

DASH = "—"


@dataclass(frozen=True)
class Column:
    """A header, whether the cells are right-aligned numbers, and one cell per row."""

    header: str
    numeric: bool
    cells: list[str]


def p_text(p: float | None) -> str:
    """A probability to two places, never rounded to a certainty it is not."""
    if p is None:
        return DASH
    if p > 0.995:
        return ">0.99"
    if p < 0.005:
        return "<0.01"
    return f"{p:.2f}"


#: Stop reasons as the table shows them (RESULT.json's ``stop_reason`` in full in the files).
STOPS = {"max_length": "length", "se_target": "se", "pool_exhausted": "pool"}
_STOP_SENTENCES = {
    "max_length": "reached its maximum length",
    "se_target": "reached its target SE",
    "pool_exhausted": "ran out of items",
}


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def _accuracy(row: LeaderboardRow) -> str:
    if row.low is None or row.high is None:
        return f"{_pct(row.accuracy)} observed"
    return f"{_pct(row.accuracy)} ({_pct(row.low)}–{_pct(row.high)})"


def stop_text(board: Leaderboard) -> str | None:
    """Why every run stopped, where that is one reason (the items column then leaves it
    out); None where the runs stopped for different reasons."""
    reasons = {row.stop_reason for row in board.models}
    if len(reasons) != 1:
        return None
    reason = next(iter(reasons))
    if reason is None:
        return None
    return f"every run {_STOP_SENTENCES.get(reason, f'stopped by {reason}')}"


def _items(row: LeaderboardRow, with_stop: bool) -> str:
    if row.kind == "reference":
        return f"{row.n_items:,} (all)" if with_stop else f"{row.n_items:,}"
    if not with_stop or row.stop_reason is None:
        return f"{row.n_items:,}"
    return f"{row.n_items:,} ({STOPS.get(row.stop_reason, row.stop_reason)})"


def _calls(row: LeaderboardRow) -> str:
    return DASH if row.calls is None else f"{row.calls:,}"


def _tokens(row: LeaderboardRow) -> str:
    if row.prompt_tokens is None or row.completion_tokens is None:
        return DASH
    return f"{row.prompt_tokens + row.completion_tokens:,}"


def _setting(row: LeaderboardRow, key: str, width: int | None) -> str:
    if row.settings is None:
        return ""  # a reference has no settings: blank rather than a dash per column
    value = row.settings.get(key)
    if value is None:  # unset, whether null or absent (as the comparison takes them)
        return DASH
    text = value if isinstance(value, str) else json.dumps(value)
    return text if width is None else shorten(text.replace("\n", " "), width)


def columns(board: Leaderboard) -> list[Column]:
    """The table's columns of figures (``usage_columns`` has the calls', and
    ``setting_columns`` the settings'). Items
    used show why the test stopped only where the runs stopped for different reasons
    (``stop_text`` says the one reason otherwise)."""
    rows = board.rows
    with_stop = stop_text(board) is None
    measure = board.measure
    cols = [
        Column("#", True, [str(r.rank) for r in rows]),
        Column(
            "model",
            False,
            [r.label + (" (ref)" if r.kind == "reference" else "") for r in rows],
        ),
        Column(f"{measure} % (90%)", True, [_accuracy(r) for r in rows]),
    ]
    if any(r.true_accuracy is not None for r in rows):
        cols.append(
            Column(
                "true",
                True,
                [DASH if r.true_accuracy is None else _pct(r.true_accuracy) for r in rows],
            )
        )
    cols += [
        Column("θ ± se", True, [f"{r.theta:+.2f} ± {r.se:.2f}" for r in rows]),
        Column("P(>next)", True, [p_text(r.p_above_next) for r in rows]),
        Column(
            "items (stop)" if with_stop else "items",
            True,
            [_items(r, with_stop) for r in rows],
        ),
    ]
    if any(r.flags for r in rows):
        cols.append(Column("flags", False, [", ".join(r.flags) for r in rows]))
    return cols


def usage_columns(board: Leaderboard) -> list[Column]:
    """New calls, their tokens and cost; none when no run made calls."""
    rows = board.rows
    if all(r.calls is None for r in rows):
        return []
    return [
        Column("calls", True, [_calls(r) for r in rows]),
        Column("tokens", True, [_tokens(r) for r in rows]),
        Column("cost", True, [DASH if r.cost is None else f"{r.cost:.4f}" for r in rows]),
    ]


def settings_column(board: Leaderboard, width: int = 30) -> Column | None:
    """The settings that differ as one column of ``key=value`` pairs per row, each
    value cut to ``width`` characters (a terminal's form: a column per key is too wide
    there); None when the runs share every setting."""
    keys = board.differing_settings
    if not keys:
        return None
    cells = [
        ", ".join(f"{key}={_setting(row, key, width)}" for key in keys) if row.settings else ""
        for row in board.rows
    ]
    return Column("settings that differ", False, cells)


def setting_columns(board: Leaderboard, width: int | None = 30) -> list[Column]:
    """One column per setting that differs between the runs, a value cut to ``width``
    characters (None: whole); none when the runs share every setting."""
    return [
        Column(key, False, [_setting(r, key, width) for r in board.rows])
        for key in board.differing_settings
    ]
