"""``cat recalibrate``: a new pool version with 20% new items on the old scale."""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cat.cli.app import app
from cat.pools.calibration import record_calibration, reference_rows
from cat.pools.recalibration import METHODS
from irt.em import EMCalibrator
from irt.errors import ConvergenceWarning
from irt.scoring import AbilityMethod, score_abilities
from irt.simulate import random_params, simulate_responses
from itempool import PoolItem, load_pool
from itempool.formats.responses import write_jsonl
from tests.synth.pools import write_pool

runner = CliRunner()
N_OLD, N_NEW = 60, 15  # 20% of the new pool is new


def _item(k: int, prefix: str) -> PoolItem:
    return PoolItem(
        id=f"{prefix}{k:03d}",
        question=f"Recalibration question {prefix}{k}: which option is right?",
        options={"A": "1", "B": "2", "C": "3", "D": "4"},
        answer="ABCD"[k % 4],
    )


@pytest.fixture(scope="module")
def setting(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """A pool calibrated on 3,000 subjects; later the same subjects' answers plus 3,000
    new subjects (θ ~ N(0.5, 1.2²) on the old scale) who also answer 15 new items."""
    tmp = tmp_path_factory.mktemp("recal")
    rng = np.random.default_rng(0)
    old_items = [_item(k, "old") for k in range(N_OLD)]
    new_items = [_item(k, "new") for k in range(N_NEW)]
    ids = tuple(i.id for i in old_items + new_items)
    true = replace(random_params(N_OLD + N_NEW, rng, "2pl"), item_ids=ids)
    first = simulate_responses(true.subset(np.arange(N_OLD)), rng.normal(size=3000), rng)
    first = replace(first, subject_ids=tuple(f"ref{k:04d}" for k in range(3000)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = EMCalibrator("2pl").fit(first)
    pool = write_pool(tmp / "pool", old_items)
    abilities = score_abilities(first, fit.params_, AbilityMethod.EAP)
    record_calibration(pool, fit.params_, reference_rows(first, abilities), {"method": "em"})
    later = simulate_responses(true, 0.5 + 1.2 * rng.normal(size=3000), rng)
    later = replace(later, subject_ids=tuple(f"new{k:04d}" for k in range(3000)))
    write_jsonl(first, tmp / "first.jsonl")
    write_jsonl(later, tmp / "later.jsonl")
    (tmp / "new-items.jsonl").write_text("".join(i.model_dump_json() + "\n" for i in new_items))
    return tmp, true


def _run(tmp: Path, out: str, *extra: str) -> tuple[int, str]:
    result = runner.invoke(
        app,
        [
            "recalibrate",
            str(tmp / "first.jsonl"),
            str(tmp / "later.jsonl"),
            "--pool",
            str(tmp / "pool"),
            "--items",
            str(tmp / "new-items.jsonl"),
            "--out",
            str(tmp / out),
            *extra,
        ],
    )
    return result.exit_code, result.output


@pytest.mark.parametrize("method", ["anchor", "concurrent"])
def test_old_items_and_references_stay_put(setting, method: str) -> None:  # type: ignore[no-untyped-def]
    tmp, true = setting
    code, output = _run(tmp, f"v2-{method}", "--method", method)
    assert code == 0, output
    old, new = load_pool(tmp / "pool"), load_pool(tmp / f"v2-{method}")
    assert old.params is not None and new.params is not None
    assert new.params.n_items == N_OLD + N_NEW and new.manifest.version == "2"
    manifest = json.loads((tmp / f"v2-{method}" / "pool.json").read_text())
    assert manifest["history"][0]["calibration"]["method"] == "em"
    assert manifest["calibration"]["scale"]
    # old items within their standard errors (anchor: exactly the same)
    assert old.params.se_b is not None
    z = (new.params.b[:N_OLD] - old.params.b) / old.params.se_b
    assert np.mean(np.abs(z) < 2) >= 0.9
    # reference subjects keep their θ
    before = {r.subject_id: r.theta for r in old.references}
    after = {r.subject_id: r.theta for r in new.references}
    assert len(after) == 6000
    assert max(abs(after[s] - t) for s, t in before.items()) < 0.05
    # new items on the pool's scale: compare through the old calibration's own scale
    link = np.polyfit(true.b[:N_OLD], old.params.b, 1)
    expected = np.polyval(link, true.b[N_OLD:])
    assert abs(np.mean(new.params.b[N_OLD:] - expected)) < 0.1
    assert "Recalibration" in output


def test_missing_new_items_and_bad_method_fail(setting, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    tmp, _ = setting
    result = runner.invoke(
        app,
        [
            "recalibrate",
            str(tmp / "later.jsonl"),
            "--pool",
            str(tmp / "pool"),
            "--out",
            str(tmp_path / "x"),
        ],
    )
    assert result.exit_code == 2 and "give their questions with --items" in result.output
    code, output = _run(tmp, "y", "--method", "magic")
    # click's usage error, in a box whose lines wrap at the terminal's width
    words = " ".join(output.replace("│", " ").split())
    assert code == 2 and "'magic' is not one of 'anchor', 'concurrent'" in words
    assert not (tmp / "y").exists()


def test_method_choices_are_in_the_help() -> None:
    result = runner.invoke(app, ["recalibrate", "--help"])
    assert result.exit_code == 0
    # click's plain help names a choice [a|b], typer's rich help <a|b>
    assert re.search(r"--method\s+[<\[]anchor\|concurrent[>\]]", result.output), result.output
    assert METHODS == ("anchor", "concurrent")


def test_pool_diff_shows_what_moved(setting) -> None:  # type: ignore[no-untyped-def]
    tmp, _ = setting
    code, output = _run(tmp, "v2-diff", "--method", "concurrent")
    assert code == 0, output
    out = tmp / "diff.json"
    result = runner.invoke(
        app, ["pool", "diff", str(tmp / "pool"), str(tmp / "v2-diff"), "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    figures = json.loads(out.read_text())
    items, refs = figures["items"], figures["references"]
    assert items["shared"] == N_OLD and len(items["added"]) == N_NEW and not items["dropped"]
    assert len(items["moved"]) <= 0.1 * N_OLD  # old items stay within their SEs
    assert abs(items["mean_b_shift"]) < 0.05
    assert refs["shared"] == 3000 and len(refs["added"]) == 3000
    assert refs["max_abs_theta_change"] < 0.05
    assert "moved beyond their SEs" in result.output and "reference subjects" in result.output
