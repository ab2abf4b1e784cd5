"""The report's figures: readable ranking labels that fit the figure, and θ limits that
hold every estimate."""

from __future__ import annotations

import math

import numpy as np
import pytest
from matplotlib.figure import Figure

from cat.assessment.result import AssessmentResult
from cat.reports.labels import MODEL_CHARS, model_label, reference_label, shorten, tex_safe
from cat.reports.plots import (
    BAND_REACH,
    THETA_CAP,
    answer_marks,
    ranking_figure,
    theta_figure,
    theta_limits,
)
from tests.cat.reports.build import make_result, result_data
from tests.cat.scored_pools import scored_params

REPLAY = "replay:/very/long/path/to/some/benchmark/run/responses.jsonl#Qwen2.5-7B-Instruct"


def _tick_texts(fig: Figure) -> list[str]:
    return [t.get_text() for t in fig.axes[0].get_yticklabels()]


def _inside_figure(fig: Figure) -> None:
    """The tight box of the y tick labels (and of the whole y axis) lies in the figure."""
    fig.draw_without_rendering()
    ax = fig.axes[0]
    canvas = fig.bbox
    for label in ax.get_yticklabels():
        box = label.get_window_extent()
        assert canvas.x0 <= box.x0 and box.x1 <= canvas.x1, label.get_text()
        assert canvas.y0 <= box.y0 and box.y1 <= canvas.y1, label.get_text()
    axis = ax.yaxis.get_tightbbox()
    assert axis is not None
    assert canvas.x0 <= axis.x0 and axis.x1 <= canvas.x1
    # The axes keep a useful width beside the labels.
    assert ax.get_window_extent().width > 0.5 * canvas.width


@pytest.mark.parametrize(
    ("model", "label"),
    [
        (REPLAY, "Qwen2.5-7B-Instruct (replay)"),
        ("replay:C:/runs/a#b.jsonl#subject-1", "subject-1 (replay)"),  # the last # splits
        ("sim:0.8", "sim:0.8"),
        (
            "meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo",
            "meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo",
        ),
        ("replay:#", "replay:#"),  # not a replay spec: kept as it is
    ],
)
def test_model_label(model: str, label: str) -> None:
    assert model_label(model) == label


def test_long_labels_lose_their_middle() -> None:
    name = "org/" + "x" * 80 + "-72B-Instruct"
    short = model_label(name)
    assert len(short) == MODEL_CHARS
    assert short.startswith("org/x") and short.endswith("-72B-Instruct") and "…" in short
    assert model_label("replay:f.jsonl#" + "y" * 100).endswith("(replay)")
    assert reference_label("a" * 80) == shorten("a" * 80, 40)
    assert len(reference_label("a" * 80)) == 40
    assert reference_label("ref-01") == "ref-01"
    assert tex_safe("price $5") == r"price \$5"


@pytest.mark.parametrize("n_refs", [0, 12, 60])
def test_ranking_labels_readable_and_inside(n_refs: int) -> None:
    data = result_data(n_refs=n_refs)
    data["model"] = REPLAY
    if n_refs:
        data["rank"]["above"][0]["subject_id"] = "meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo"
    else:
        data.pop("rank")
    plot = ranking_figure(AssessmentResult.model_validate(data))
    assert "Qwen2.5-7B-Instruct (replay)" in plot.labels
    assert _tick_texts(plot.figure) == list(plot.labels)
    assert len(plot.labels) == n_refs + 1
    _inside_figure(plot.figure)


def test_ranking_widens_for_a_long_model_name() -> None:
    data = result_data(n_refs=12)
    data["model"] = "an-organisation-with-a-long-name/" + "a-model-with-an-even-longer-name-v2"
    plot = ranking_figure(AssessmentResult.model_validate(data))
    mine = model_label(data["model"])
    assert mine in plot.labels and len(mine) == MODEL_CHARS
    assert plot.figure.get_figwidth() > 7.5  # widened rather than squeezing the axes
    _inside_figure(plot.figure)


def test_ranking_escapes_dollars_in_the_figure_only() -> None:
    data = result_data(n_refs=3)
    data["model"] = "price $5 $x^2$"
    plot = ranking_figure(AssessmentResult.model_validate(data))
    assert "price $5 $x^2$" in plot.labels
    assert r"price \$5 \$x^2\$" in _tick_texts(plot.figure)
    _inside_figure(plot.figure)


def _extreme_start(n_items: int = 30) -> AssessmentResult:
    data = result_data(n_items=n_items, n_refs=3)
    first = [(4.0, 1.5), (-4.2, 1.5), (3.6, 1.3)]
    for item, (theta, se) in zip(data["items"], first, strict=False):
        item["theta_after"], item["se_after"] = theta, se
    return AssessmentResult.model_validate(data)


@pytest.mark.parametrize("n_items", [3, 30, 250])
def test_theta_limits_hold_every_estimate(n_items: int) -> None:
    result = _extreme_start(n_items)
    fig = theta_figure(result)
    low, high = fig.axes[0].get_ylim()
    thetas = [i.theta_after for i in result.items]
    assert low < min(thetas) and max(thetas) < high
    assert low < result.theta < high
    # The bands are shown too, as far as BAND_REACH beyond the estimates and ±THETA_CAP ...
    lows = [i.theta_after - 1.645 * i.se_after for i in result.items]
    highs = [i.theta_after + 1.645 * i.se_after for i in result.items]
    assert low <= max(min(lows), min(thetas) - BAND_REACH, -THETA_CAP)
    assert high >= min(max(highs), max(thetas) + BAND_REACH, THETA_CAP)
    # ... and no further, so that the later path is not squashed flat.
    span = max(thetas) - min(thetas) + 2 * BAND_REACH
    assert high - low < 1.3 * span


def test_theta_view_follows_the_path_not_the_prior() -> None:
    """A long test whose first bands span the prior: the view stays near the path."""
    result = make_result(n_items=250, n_refs=3)
    low, high = theta_figure(result).axes[0].get_ylim()
    thetas = [i.theta_after for i in result.items]
    assert max(i.se_after for i in result.items) * 1.645 > 2.0  # the first band is wide
    assert high - low < 1.3 * (max(thetas) - min(thetas) + 2 * BAND_REACH)


def test_theta_limits_keep_estimates_beyond_the_cap() -> None:
    theta = np.array([6.0, -7.0, 0.5])
    half = np.array([2.0, math.nan, 0.2])
    limits = theta_limits(theta, half, 0.5)
    assert limits is not None
    assert limits[0] < -7.0 and limits[1] > 6.0
    assert theta_limits(np.array([math.nan]), np.array([math.nan]), math.nan) is None


def test_theta_figure_marks_skipped_items() -> None:
    data = result_data(n_items=10, n_refs=3)
    data["items"][2]["response"] = None
    fig = theta_figure(AssessmentResult.model_validate(data))
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [
        "final θ = 0.41",
        "right",
        "wrong",
        "skipped",
    ]


def _ticks(fig: Figure) -> dict[str, int]:
    """The answer ticks of the θ plot: how many under each legend label."""
    return {
        str(c.get_label()): len(np.asarray(c.get_offsets()))
        for c in fig.axes[0].collections
        if not str(c.get_label()).startswith("_")
    }


def test_theta_figure_marks_scores_by_their_share_of_the_top_score() -> None:
    """On a pool of scored items every answer gets a tick, by its share of the item's
    top score: a 1 of 4 is partial (not "right"), a 4 of 4 full marks."""
    params = scored_params(9, 0)  # top scores 3, 4, 1, 4, 3, 1, 3, 4, 1
    responses = [3, 1, 1, 4, None, 0, 2, 0, 1]
    data = result_data(n_items=9, n_refs=3)
    data["pool"]["scored"] = True
    for item, item_id, response in zip(data["items"], params.item_ids, responses, strict=True):
        item["id"], item["response"] = item_id, response
    result = AssessmentResult.model_validate(data)
    assert answer_marks(result, params) == [
        "full",
        "partial",
        "full",
        "full",
        "skipped",
        "zero",
        "partial",
        "zero",
        "full",
    ]
    fig = theta_figure(result, params)
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [
        "final θ = 0.41",
        "full marks",
        "partial",
        "zero",
        "skipped",
    ]
    assert _ticks(fig) == {"full marks": 4, "partial": 2, "zero": 2, "skipped": 1}


def test_theta_figure_keeps_right_and_wrong_on_a_pool_of_0_1_items() -> None:
    result = make_result(n_items=10, n_refs=3)
    right = sum(i.response == 1 for i in result.items)
    assert _ticks(theta_figure(result)) == {"right": right, "wrong": 10 - right}
