"""The HTML report of ``cat assess --report``: a page, three PNGs, escaped text, edge cases."""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cat.report_html import write_report
from irt.simulate import random_params

PARAMS = random_params(60, np.random.default_rng(0), "3pl")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
IMAGES = ("theta.png", "ranking.png", "information.png")
MODEL = "evil<model>&co"


def _result(n_items: int = 30, n_refs: int = 12, scenarios: bool = True) -> dict[str, Any]:
    rng = np.random.default_rng(1)
    theta, se = 0.41, 0.12
    refs: list[dict[str, Any]] = [
        {"subject_id": f"ref-{k:02d}", "theta": float(t), "se": 0.1, "p_above": 0.5}
        for k, t in enumerate(rng.normal(0, 1, n_refs))
    ]
    refs.sort(key=lambda r: -r["theta"])  # strongest first, as cat.report writes them
    position = sum(1 for r in refs if r["theta"] > theta) + 1
    names = ["dosing", "diagnosis", "triage"]
    items = [
        {
            "id": f"q{k}",
            "scenario": names[k % 3],
            "response": int(rng.random() < 0.6),
            "theta_after": float(theta + rng.normal(0, 1) / (k + 1)),
            "se_after": 1.5 / math.sqrt(k + 1),
        }
        for k in range(n_items)
    ]
    result: dict[str, Any] = {
        "model": MODEL,
        "pool": {"name": "demo", "version": "1", "n_items": PARAMS.n_items},
        "theta": theta,
        "se": se,
        "theta_interval": {"low": 0.21, "high": 0.61, "level": 0.9},
        "predicted_accuracy": {"value": 0.634, "low": 0.60, "high": 0.66},
        "n_items": n_items,
        "stop_reason": "max_length",
        "rank": {"position": position, "of": n_refs + 1, "above": refs},
        "items": items,
        "usage": {"prompt_tokens": 12345, "completion_tokens": 2345, "calls": 30},
        "settings": {"policy": "mfi", "estimator": "eap", "note": "<b>"},
        "seed": 0,
        "created": "2026-11-22T05:30:00+00:00",
        "something_new": [1, 2, 3],
    }
    if scenarios:
        result["scenarios"] = {
            name: {"value": 0.7, "low": 0.65, "high": 0.74, "n_given": 10} for name in names
        }
    return result


def _check_images(out: Path, page: str) -> None:
    for name in IMAGES:
        assert f'src="{name}"' in page
        data = (out / name).read_bytes()
        assert data.startswith(PNG_MAGIC)
        assert len(data) > 5_000


def test_full_report(tmp_path: Path) -> None:
    result = _result()
    out = tmp_path / "deep" / "report"
    index = write_report(result, PARAMS, out)
    assert index == out / "index.html"
    page = index.read_text(encoding="utf-8")
    _check_images(out, page)
    assert "evil&lt;model&gt;&amp;co" in page
    assert MODEL not in page
    assert "&lt;b&gt;" in page and "<b>" not in page
    rank = result["rank"]
    assert f"{rank['position']} of 13" in page
    assert "63.4%" in page and "60.0% – 66.0%" in page
    assert "diagnosis" in page and "dosing" in page
    assert "12,345 prompt" in page
    assert "30 of 60" in page
    assert "max_length" in page and "2026-11-22T05:30:00+00:00" in page
    assert not re.search(r"<script|https?://", page)


def test_neighbours_surround_the_model(tmp_path: Path) -> None:
    result = _result(n_refs=12)
    refs = result["rank"]["above"]
    split = result["rank"]["position"] - 1
    page = write_report(result, PARAMS, tmp_path).read_text(encoding="utf-8")
    section = page.split("<h2>Neighbours</h2>")[1].split("<h2>")[0]
    me = section.index("(this model)")
    assert 0 < split < len(refs)  # the fixture's seed puts the model mid-table
    assert (
        section.index(refs[split - 1]["subject_id"]) < me < section.index(refs[split]["subject_id"])
    )
    assert section.count("<td>ref-") <= 6  # three above and three below, not the whole table


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"items": [], "n_items": 0}, id="no-items"),
        pytest.param({"rank": {"position": 1, "of": 1, "above": []}}, id="no-references"),
        pytest.param({"rank": None, "usage": None, "scenarios": None}, id="absent-keys"),
        pytest.param(
            {"se": math.inf, "theta_interval": {"low": -math.inf, "high": math.inf}}, id="inf-se"
        ),
    ],
)
def test_edge_cases_still_write_everything(tmp_path: Path, change: dict[str, Any]) -> None:
    result = _result(scenarios=False)
    for key, value in change.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = value
    if "se" in change:
        for item in result["items"]:
            item["se_after"] = math.inf if item["id"] != "q3" else math.nan
    page = write_report(result, PARAMS, tmp_path).read_text(encoding="utf-8")
    for name in IMAGES:
        assert f'src="{name}"' in page
        assert (tmp_path / name).read_bytes().startswith(PNG_MAGIC)
    assert "evil&lt;model&gt;&amp;co" in page
    assert "by scenario" not in page


def test_dollar_signs_and_many_references(tmp_path: Path) -> None:
    result = _result(n_items=250, n_refs=60)
    result["model"] = "price $5 $x^2$"  # would be parsed as mathtext if not escaped
    result["rank"]["above"][0]["subject_id"] = "a" * 80
    page = write_report(result, PARAMS, tmp_path).read_text(encoding="utf-8")
    _check_images(tmp_path, page)
    assert "of 61" in page


def test_summarize_shape_without_se_and_no_warnings(tmp_path: Path) -> None:
    """``cat.report.summarize`` lists references without an SE; Chinese ids lack glyphs in
    matplotlib's default font. Neither may raise or leak a warning to the CLI."""
    result = _result(n_refs=5)
    for ref in result["rank"]["above"]:
        del ref["se"]
    result["rank"]["above"][0]["subject_id"] = "通义千问-72b"
    del result["theta_interval"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        page = write_report(result, PARAMS, tmp_path).read_text(encoding="utf-8")
    _check_images(tmp_path, page)
    assert "通义千问-72b" in page
    assert "0.21 – 0.61" in page  # θ ± 1.645 SE when the result has no interval
