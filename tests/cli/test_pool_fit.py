"""``cat pool fit``: the report on the terminal and in JSON, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner, Result

from cat.cli.app import app
from tests.cat.test_pool_fit import setting  # noqa: F401  (the module's fixture)

runner = CliRunner()


def _fit(tmp: Path, responses: str, *extra: str) -> Result:
    """``cat pool fit`` on the fixture's pool with 20 replicates."""
    args = ["pool", "fit", str(tmp / "pool"), str(tmp / responses), "--replicates", "20"]
    return runner.invoke(app, [*args, *extra])


def test_fit_with_a_baseline_writes_every_item(
    setting: dict[str, Any],  # noqa: F811
) -> None:
    tmp = setting["tmp"]
    out = tmp / "fit.json"
    result = _fit(
        tmp,
        "later.jsonl",
        "--baseline",
        str(tmp / "earlier.jsonl"),
        "--seed",
        "3",
        "--out",
        str(out),
    )
    assert result.exit_code == 0, result.output
    assert "method: grouped chi-square" in result.output
    assert "Flagged items" in result.output and "easier: b" in result.output
    report = json.loads(out.read_text())
    assert len(report["item_rows"]) == 200 and report["settings"]["seed"] == 3
    assert report["package_version"] and report["baseline"] == [str(tmp / "earlier.jsonl")]
    assert report["flag_counts"]["key_suspect"] >= 3  # from the item–θ correlation
    assert report["flag_counts"]["easier"] >= 4 and report["drift"]["tested"] == 200
    first = report["item_rows"][0]
    assert {"outfit", "infit", "z", "p", "p_adjusted", "b_earlier", "b_later"} <= set(first)


def test_choices_name_the_distractor(setting: dict[str, Any]) -> None:  # noqa: F811
    tmp = setting["tmp"]
    result = _fit(
        tmp,
        "earlier.jsonl",
        "--choices",
        str(tmp / "choices.jsonl"),
        "--out",
        str(tmp / "keys.json"),
    )
    assert result.exit_code == 0, result.output
    assert "key_suspect" in result.output
    report = json.loads((tmp / "keys.json").read_text())
    details = [f["detail"] for f in report["item_rows"][0]["flags"]]
    assert any(d.startswith("distractor C chosen by") for d in details), details


def test_too_few_subjects_say_why_fit_was_not_tested(
    setting: dict[str, Any],  # noqa: F811
) -> None:
    tmp = setting["tmp"]
    result = _fit(tmp, "later.jsonl", "--min-responses", "500")
    assert result.exit_code == 0, result.output
    assert "0 items tested" in result.output
    assert "no item was answered by 500 subjects" in result.output


def test_errors_are_one_line(setting: dict[str, Any]) -> None:  # noqa: F811
    tmp = setting["tmp"]
    bad = _fit(tmp, "later.jsonl", "--correction", "x")
    assert bad.exit_code != 0 and "--correction" in bad.output
    missing = _fit(tmp, "nope.jsonl")
    assert missing.exit_code == 2 and "no such file" in missing.output
    assert "Traceback" not in missing.output
