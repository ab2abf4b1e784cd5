"""``cat calibrate --model graded --continuous``: a mixed pool (scores 0..m and scores in
[0, 1]) calibrated together on one θ through the command line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cat.cli.app import app
from cat.engine.simulation import draw_scores
from cat.pools.mixed_calibration import aligned_responses
from irt.continuous import ContinuousParams
from irt.continuous_responses import ContinuousResponses
from irt.polytomous_responses import PolytomousResponses
from itempool.formats.continuous_params import read_continuous_params
from itempool.formats.polytomous_params import read_polytomous_params
from itempool.formats.responses import write_scored_jsonl
from itempool.formats.scores import write_continuous_jsonl
from tests.cat.engine.scored_pool import mixed_pool

runner = CliRunner()
N_SUBJECTS = 500


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Scores 0..m on 20 items and Beta similarities on 15 others, of the same subjects
    (the continuous file lists them in another order and lacks ten of them)."""
    rng = np.random.default_rng(21)
    theta = rng.normal(size=N_SUBJECTS)
    scored = mixed_pool(20, seed=3)
    values = draw_scores(
        scored, np.repeat(theta, 20), np.tile(np.arange(20), N_SUBJECTS), rng
    ).reshape(N_SUBJECTS, 20)
    truth = ContinuousParams.create(
        "beta",
        rng.lognormal(0.0, 0.3, 15),
        rng.normal(0, 1, 15),
        [2.0] * 15,
        item_ids=[f"sim{j:02d}" for j in range(15)],
    )
    similarity = truth.simulate(theta, rng)
    subjects = [f"m{k:03d}" for k in range(N_SUBJECTS)]
    folder = tmp_path_factory.mktemp("mixed")
    write_scored_jsonl(
        PolytomousResponses.from_array(
            values, subjects, scored.item_ids, [int(k) for k in scored.n_categories]
        ),
        folder / "scores.jsonl",
    )
    order = rng.permutation(N_SUBJECTS)[10:]
    write_continuous_jsonl(
        ContinuousResponses.from_array(
            similarity[order], [subjects[k] for k in order], truth.item_ids
        ),
        folder / "similarity.jsonl",
    )
    return {"scores": folder / "scores.jsonl", "similarity": folder / "similarity.jsonl"}


def _args(files: dict[str, Path], tmp_path: Path, *extra: str) -> list[str]:
    return [
        "calibrate",
        str(files["scores"]),
        "--model",
        "graded",
        "--continuous",
        str(files["similarity"]),
        "--out",
        str(tmp_path / "params.csv"),
        "--continuous-out",
        str(tmp_path / "continuous.csv"),
        *extra,
    ]


def test_both_parts_are_written_and_the_better_model_is_kept(
    files: dict[str, Path], tmp_path: Path
) -> None:
    report, abilities = tmp_path / "fit.json", tmp_path / "theta.csv"
    extra = ["--report", str(report), "--abilities", str(abilities)]
    result = runner.invoke(app, _args(files, tmp_path, *extra))
    assert result.exit_code == 0, result.output
    fit = json.loads(report.read_text())
    for key in ("model", "method", "n_subjects", "n_items", "loglik", "n_iter", "converged"):
        assert key in fit
    assert fit["n_subjects"] == N_SUBJECTS and fit["n_items"] == 35
    choice = fit["continuous_model"]
    # The similarities are Beta draws: the Beta fits them better than the CRM.
    assert choice["chosen"] == "beta" and set(choice["fits"]) == {"crm", "beta"}
    assert choice["fits"]["beta"]["aic"] < choice["fits"]["crm"]["aic"]
    assert fit["model"] == "graded+beta" and fit["standard_errors"] == "oakes"
    scored = read_polytomous_params(tmp_path / "params.csv")
    continuous = read_continuous_params(tmp_path / "continuous.csv")
    assert scored.n_items == 20 and continuous.n_items == 15
    assert scored.se_a is not None and np.all(np.isfinite(scored.se_a))
    assert continuous.se_a is not None and np.all(continuous.se_a > 0)
    assert "(kept)" in result.output
    rows = abilities.read_text().splitlines()
    assert len(rows) == N_SUBJECTS + 1


def test_the_continuous_model_can_be_fixed(files: dict[str, Path], tmp_path: Path) -> None:
    report = tmp_path / "fit.json"
    extra = ["--continuous-model", "crm", "--report", str(report), "--standard-errors", "none"]
    result = runner.invoke(app, _args(files, tmp_path, *extra))
    assert result.exit_code == 0, result.output
    fit = json.loads(report.read_text())
    assert fit["continuous_model"]["chosen"] == "crm"
    assert list(fit["continuous_model"]["fits"]) == ["crm"]
    assert fit["standard_errors"] is None
    assert read_continuous_params(tmp_path / "continuous.csv").se_a is None


def test_subjects_are_aligned_across_the_two_files(files: dict[str, Path]) -> None:
    from itempool.formats.responses import read_scored_responses
    from itempool.formats.scores import read_continuous_responses

    disc = read_scored_responses(files["scores"])
    cont = read_continuous_responses(files["similarity"])
    both = aligned_responses(disc, cont)
    assert both.subject_ids == disc.subject_ids
    assert both.continuous is not None
    row = {s: i for i, s in enumerate(cont.subject_ids)}
    for k, subject in enumerate(both.subject_ids):
        if subject in row:
            np.testing.assert_array_equal(both.continuous.values[k], cont.values[row[subject]])
        else:
            assert np.all(np.isnan(both.continuous.values[k]))


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--cross-fit", "3"], "--cross-fit stores its errors in a pool: give --pool DIR"),
        (["--collapse-scores"], "--collapse-scores does not apply to a mixed calibration"),
        (["--standard-errors", "xpd"], "--standard-errors xpd does not apply"),
    ],
)
def test_flags_a_mixed_fit_does_not_take_are_refused(
    files: dict[str, Path], tmp_path: Path, extra: list[str], message: str
) -> None:
    result = runner.invoke(app, _args(files, tmp_path, *extra))
    assert result.exit_code != 0
    assert len(result.output.strip().splitlines()) == 1
    assert message in result.output


def test_continuous_goes_with_a_scored_model(files: dict[str, Path], tmp_path: Path) -> None:
    args = _args(files, tmp_path)
    args[args.index("graded")] = "3pl"
    result = runner.invoke(app, args)
    assert result.exit_code != 0
    assert "--continuous goes with --model graded|gpcm|sequential" in result.output


def test_both_outputs_are_needed(files: dict[str, Path], tmp_path: Path) -> None:
    args = _args(files, tmp_path)
    cut = args.index("--continuous-out")
    result = runner.invoke(app, args[:cut] + args[cut + 2 :])
    assert result.exit_code != 0
    assert "--continuous-out CONTINUOUS.csv" in result.output


def test_continuous_out_without_continuous_is_refused(
    files: dict[str, Path], tmp_path: Path
) -> None:
    args = [
        "calibrate",
        str(files["scores"]),
        "--model",
        "graded",
        "--out",
        str(tmp_path / "p.csv"),
        "--continuous-out",
        str(tmp_path / "c.csv"),
    ]
    result = runner.invoke(app, args)
    assert result.exit_code != 0
    assert "--continuous-out goes with --continuous FILE" in result.output


def test_an_item_in_both_files_is_refused(files: dict[str, Path], tmp_path: Path) -> None:
    overlap = tmp_path / "overlap.jsonl"
    rows = [{"subject_id": f"m{k:03d}", "responses": {"i0000": 0.5}} for k in range(12)]
    overlap.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = runner.invoke(
        app,
        [
            "calibrate",
            str(files["scores"]),
            "--model",
            "graded",
            "--continuous",
            str(overlap),
            "--out",
            str(tmp_path / "p.csv"),
            "--continuous-out",
            str(tmp_path / "c.csv"),
        ],
    )
    assert result.exit_code != 0
    assert "is in both the scored and the continuous file" in result.output


def test_the_time_is_the_whole_commands_and_the_standard_errors_show_progress(
    files: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cat.cli import common

    # A progress line at every chance: each parameter of the standard errors shows.
    monkeypatch.setattr(common, "PLAIN_PROGRESS_SECONDS", 0.0)
    result = runner.invoke(app, _args(files, tmp_path))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    se_lines = [line for line in lines if "standard errors (joint information): parameter" in line]
    assert len(se_lines) > 10
    assert any(" of " in line and line.endswith(" elapsed") for line in se_lines)
    (time_row,) = [line for line in lines if "fitting the kept model" in line]
    fit_s, whole_s = (float(x) for x in re.findall(r"(\d+\.\d+) s", time_row))
    assert whole_s > fit_s  # the other candidate, the standard errors and writing count
