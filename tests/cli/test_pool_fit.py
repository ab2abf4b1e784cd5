"""``cat pool fit``: the report on the terminal and in JSON, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from cat.cli.app import app
from cat.cli.pool_fit import Correction
from cat.pools import fit
from irt.fit.items import CORRECTIONS
from tests.cat.pools.test_fit import setting  # noqa: F401  (the module's fixture)

runner = CliRunner()

#: The keys of the --out file, in order, as scripts read them.
REPORT_KEYS = [
    "pool",
    "subjects",
    "theta_range",
    "theta_median_se",
    "warning",
    "items",
    "items_tested",
    "items_not_in_pool",
    "settings",
    "method",
    "share_p_below_alpha",
    "flag_counts",
    "flagged",
    "drift",
    "item_rows",
    "package_version",
    "date",
    "responses",
    "baseline",
]
ROW_KEYS = ["item_id", "n", "a", "b", "c", "outfit", "infit", "z", "p", "p_adjusted", "r_theta"]
DRIFT_KEYS = ["b_earlier", "b_later", "drift_z", "drift_p_adjusted"]


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


def test_the_out_file_is_the_models_dump(setting: dict[str, Any]) -> None:  # noqa: F811
    tmp = setting["tmp"]
    for extra, row_keys in (
        ([], [*ROW_KEYS, "flags"]),
        (["--baseline", str(tmp / "earlier.jsonl")], [*ROW_KEYS, "flags", *DRIFT_KEYS]),
    ):
        out = tmp / "dump.json"
        result = _fit(tmp, "later.jsonl", "--out", str(out), *extra)
        assert result.exit_code == 0, result.output
        written = json.loads(out.read_text())
        assert list(written) == REPORT_KEYS == list(fit.PoolFitReport.model_fields)
        assert list(written["item_rows"][0]) == row_keys
        assert list(written["settings"]) == list(fit.SettingsUsed.model_fields)
        assert list(written["flag_counts"]) == list(fit.REASONS)
        model = fit.PoolFitReport.model_validate(written)
        assert model.model_dump(mode="json") == written


def _report(flagged: int) -> fit.PoolFitReport:
    """A report on two items, the first ``flagged`` of them flagged as all right."""
    rows = [
        fit.ItemRow(
            item_id=f"q{k}",
            n=12,
            a=1.0,
            b=0.0,
            c=0.1,
            outfit=None,
            infit=None,
            z=None,
            p=None,
            p_adjusted=None,
            r_theta=None,
            flags=[fit.ItemFlag(reason="all_right", detail="all 12 subjects who answered")]
            if k < flagged
            else [],
        )
        for k in range(2)
    ]
    return fit.PoolFitReport(
        pool=fit.PoolRef(name="tiny", version=None, dir="tiny"),
        subjects=1,
        theta_range=(0.0, 0.0),
        theta_median_se=0.1,
        warning=None,
        items=2,
        items_tested=1,
        items_not_in_pool=1,
        settings=fit.SettingsUsed(
            alpha=0.05, correction="bh", replicates=20, seed=0, min_responses=10, choices=False
        ),
        method="m",
        share_p_below_alpha=None,
        flag_counts={reason: int(reason == "all_right") * flagged for reason in fit.REASONS},
        flagged=flagged,
        drift=None,
        item_rows=rows,
        package_version="0",
        date="2025-01-01T00:00:00+00:00",
        responses=["r.jsonl"],
        baseline=None,
    )


@pytest.mark.parametrize(
    ("flagged", "line"), [(1, "flagged: 1 item (all_right 1)"), (2, "flagged: 2 items")]
)
def test_counts_agree_with_their_noun(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, flagged: int, line: str
) -> None:
    monkeypatch.setattr(fit, "fit_pool", lambda *args, **kwargs: _report(flagged))
    result = runner.invoke(app, ["pool", "fit", str(tmp_path), str(tmp_path / "r.jsonl")])
    assert result.exit_code == 0, result.output
    assert line in result.output
    assert "2 items, 1 subject (θ" in result.output and "; 1 item tested" in result.output
    assert "1 response item not in the pool ignored" in result.output


def test_correction_shows_its_choices() -> None:
    assert tuple(Correction) == CORRECTIONS
    result = runner.invoke(app, ["pool", "fit", "--help"])
    assert result.exit_code == 0 and "bh|holm" in result.output
