"""The HTML report of ``cat assess --report``: one self-contained page with its plots
inline, escaped text, edge cases."""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path
from typing import Any

import pytest

from cat.assessment.result import AssessmentResult
from cat.reports.html import write_report
from tests.cat.reports.build import PARAMS, make_result, result_data
from tests.cat.reports.page_check import inline_images
from tests.cat.scored_pools import scored_params


def _check_images(out: Path, page: str, count: int = 4) -> None:
    """The page is the report's only file, and holds its ``count`` plots inline."""
    assert [p.name for p in out.iterdir()] == ["index.html"]
    images = inline_images(page)
    assert len(images) == count
    assert all(len(data) > 5_000 for data in images)


def test_full_report(tmp_path: Path) -> None:
    result = make_result()
    out = tmp_path / "deep" / "report"
    index = write_report(result, PARAMS, out)
    assert index == out / "index.html"
    page = index.read_text(encoding="utf-8")
    _check_images(out, page)  # four: with the profile, as the result has scenarios
    assert "evil&lt;model&gt;&amp;co" in page
    assert result.model not in page
    assert "&lt;b&gt;" in page and "<b>" not in page  # the settings are escaped too
    assert result.rank is not None
    assert f"{result.rank.position} of 13" in page
    assert "63.4%" in page and "60.0% – 66.0%" in page
    assert "diagnosis" in page and "dosing" in page
    assert "12,345 prompt" in page and "= 14,690 in 30 calls" in page
    assert "30 of 60" in page
    assert "max_length" in page and "2026-11-22T05:30:00+00:00" in page
    assert "lz 0.35" in page and "flagged:" not in page
    assert "True accuracy" not in page  # a live model: its real accuracy is unknown
    assert "the unseen answers&#x27; chance" in page
    assert "0.21 – 0.61" in page
    assert not re.search(r"<script|https?://", page)


def test_result_read_back_from_json(tmp_path: Path) -> None:
    """RESULT.json, read back, gives the same page as the result it was written from."""
    result = make_result()
    again = AssessmentResult.model_validate_json(result.model_dump_json())
    first = write_report(result, PARAMS, tmp_path / "a").read_text(encoding="utf-8")
    second = write_report(again, PARAMS, tmp_path / "b").read_text(encoding="utf-8")
    assert first == second


def test_neighbours_surround_the_model(tmp_path: Path) -> None:
    result = make_result(n_refs=12)
    assert result.rank is not None
    refs = result.rank.above
    split = result.rank.position - 1
    page = write_report(result, PARAMS, tmp_path).read_text(encoding="utf-8")
    section = page.split("<h2>Neighbours</h2>")[1].split("<h2>")[0]
    me = section.index("(this model)")
    assert 0 < split < len(refs)  # the fixture's seed puts the model mid-table
    assert section.index(refs[split - 1].subject_id) < me < section.index(refs[split].subject_id)
    assert section.count("<td>ref-") <= 6  # three above and three below, not the whole table


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"items": [], "n_items": 0}, id="no-items"),
        pytest.param({"rank": {"position": 1, "of": 1, "above": []}}, id="no-references"),
        pytest.param({"rank": None, "usage": None, "scenarios": None}, id="absent-parts"),
        pytest.param(
            {"se": math.inf, "theta_interval": {"low": -math.inf, "high": math.inf}}, id="inf-se"
        ),
        pytest.param(
            {"person_fit": {"lz": None, "flagged": False, "threshold": -1.645}}, id="no-lz"
        ),
    ],
)
def test_edge_cases_still_write_everything(tmp_path: Path, change: dict[str, Any]) -> None:
    data = result_data(scenarios=False)
    for key, value in change.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    if "se" in change:
        for item in data["items"]:
            item["se_after"] = math.inf if item["id"] != "q3" else math.nan
    result = AssessmentResult.model_validate(data)
    page = write_report(result, PARAMS, tmp_path).read_text(encoding="utf-8")
    assert len(inline_images(page)) == 3
    assert "evil&lt;model&gt;&amp;co" in page
    assert "by scenario" not in page
    if result.rank is None or not result.rank.above:
        assert "no reference subjects to rank against" in page
    if result.rank is None:
        assert "<tr><th>Rank among the references</th><td>—</td></tr>" in page
    if result.usage is None:
        assert "Tokens" not in page
    if result.person_fit.lz is None:
        assert "<tr><th>Person fit</th><td>not computed</td></tr>" in page


def test_replay_with_truth_skips_and_a_flag(tmp_path: Path) -> None:
    data = result_data(n_refs=5)
    data["model"] = "replay:/data/runs/responses.jsonl#Qwen2.5-7B-Instruct"
    data["truth"] = {"accuracy": 0.612}
    data["usage"] = None
    data["n_skipped"] = 2
    data["person_fit"] = {"lz": -2.5, "flagged": True, "threshold": -1.645}
    data["pool"]["version"] = None
    for item in data["items"][3:5]:
        item["response"] = None
        item["scenario"] = None
    result = AssessmentResult.model_validate(data)
    page = write_report(result, PARAMS, tmp_path).read_text(encoding="utf-8")
    _check_images(tmp_path, page)
    assert "<h1>replay:/data/runs/responses.jsonl#Qwen2.5-7B-Instruct</h1>" in page
    assert "True accuracy on the whole pool</th><td>61.2%" in page
    assert "30 of 60 (50.0% of the pool); 2 skipped" in page
    assert "lz -2.50, flagged: below -1.645" in page
    assert page.count("<td>skipped</td>") == 2
    assert "None" not in page.split("<h2>Items</h2>")[1].split("<footer>")[0]
    assert "<strong>demo</strong>" in page  # no version, no " vNone"


def test_dollar_signs_and_many_references(tmp_path: Path) -> None:
    data = result_data(n_items=250, n_refs=60)
    data["model"] = "price $5 $x^2$"  # would be parsed as mathtext if not escaped
    data["rank"]["above"][0]["subject_id"] = "a" * 80
    page = write_report(AssessmentResult.model_validate(data), PARAMS, tmp_path).read_text(
        encoding="utf-8"
    )
    _check_images(tmp_path, page)
    assert "of 61" in page


def test_reference_without_se_and_no_warnings(tmp_path: Path) -> None:
    """A reference with no finite SE, and Chinese ids, which lack glyphs in matplotlib's
    default font: neither may raise or leak a warning to the CLI."""
    data = result_data(n_refs=5)
    for ref in data["rank"]["above"]:
        ref["se"] = math.nan
    data["rank"]["above"][0]["subject_id"] = "通义千问-72b"
    result = AssessmentResult.model_validate(data)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        page = write_report(result, PARAMS, tmp_path).read_text(encoding="utf-8")
    _check_images(tmp_path, page)
    assert "通义千问-72b" in page
    assert "0.21 – 0.61" in page


def test_settings_list_the_seed_once(tmp_path: Path) -> None:
    page = write_report(make_result(), PARAMS, tmp_path).read_text(encoding="utf-8")
    settings = page.split("<h2>Settings</h2>")[1]
    assert settings.count("<th>seed</th>") == 1


def test_a_scored_pool_says_how_its_answers_are_marked(tmp_path: Path) -> None:
    params = scored_params(30, 0)
    data = result_data()
    data["pool"]["scored"] = True
    for item, item_id in zip(data["items"], params.item_ids, strict=True):
        item["id"] = item_id
    page = write_report(AssessmentResult.model_validate(data), params, tmp_path).read_text(
        encoding="utf-8"
    )
    assert "(full marks, partial, zero)" in page and "right and wrong" not in page
