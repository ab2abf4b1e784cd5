"""``cat calibrate`` through the command line."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cat.cli.app import app
from irt.simulate import random_params, simulate_responses
from itempool import PoolItem
from itempool.formats.params import read_params
from itempool.formats.responses import write_jsonl
from tests.synth.pools import write_pool

runner = CliRunner()


def _item(item_id: str) -> PoolItem:
    return PoolItem(
        id=item_id, question=f"Which in {item_id}?", options={"A": "a", "B": "b"}, answer="A"
    )


REPORT_KEYS = {
    "model",
    "method",
    "n_subjects",
    "n_items",
    "loglik",
    "n_iter",
    "converged",
    "seconds",
}


@pytest.fixture
def responses(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    params = random_params(30, rng, "3pl")
    data = simulate_responses(params, rng.normal(size=300), rng, missing_rate=0.05)
    path = tmp_path / "responses.jsonl"
    write_jsonl(data, path)
    return path


def test_writes_params_report_and_abilities(responses: Path, tmp_path: Path) -> None:
    out, report, abil = tmp_path / "p.csv", tmp_path / "r.json", tmp_path / "a.csv"
    result = runner.invoke(
        app,
        [
            "calibrate",
            str(responses),
            "--model",
            "3pl",
            "--out",
            str(out),
            "--report",
            str(report),
            "--abilities",
            str(abil),
            "--seed",
            "7",
        ],
    )
    assert result.exit_code == 0, result.output
    params = read_params(out)
    assert params.n_items == 30 and params.se_b is not None
    with out.open() as fh:
        assert next(csv.reader(fh)) == ["item_id", "a", "b", "c", "d", "se_a", "se_b", "se_c"]
    fit = json.loads(report.read_text())
    assert set(fit) >= REPORT_KEYS
    assert fit["model"] == "3pl" and fit["method"] == "em" and fit["seed"] == 7
    assert fit["n_subjects"] == 300 and fit["n_items"] == 30 and fit["converged"] is True
    assert fit["priors"]["c"]["dist"] == "beta"
    with abil.open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 300 and rows[0]["method"] == "eap"
    assert "3PL calibration" in result.output


def test_device_torch_cpu_fits_there_and_the_report_says_so(
    responses: Path, tmp_path: Path
) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    reports = {
        device: tmp_path / f"{device.replace(':', '-')}.json" for device in ("cpu", "torch:cpu")
    }
    for device, report in reports.items():
        result = runner.invoke(
            app,
            [
                *("calibrate", str(responses), "--out", str(tmp_path / "p.csv")),
                *("--report", str(report), "--device", device),
            ],
        )
        assert result.exit_code == 0, result.output
    host, torch_cpu = (json.loads(path.read_text()) for path in reports.values())
    assert host["settings"]["device"] == "cpu"
    assert torch_cpu["settings"]["device"] == "torch:cpu"
    assert torch_cpu["loglik"] == pytest.approx(host["loglik"], rel=1e-9)


def test_an_unknown_device_fails_before_reading(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            *("calibrate", str(tmp_path / "absent.jsonl"), "--out", str(tmp_path / "p.csv")),
            *("--device", "tpu"),
        ],
    )
    assert result.exit_code != 0
    assert "unknown device 'tpu'" in result.output


def test_no_priors_gives_plain_ml(responses: Path, tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    result = runner.invoke(
        app,
        [
            "calibrate",
            str(responses),
            "--model",
            "2pl",
            "--no-priors",
            "--out",
            str(tmp_path / "p.csv"),
            "--report",
            str(report),
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(report.read_text())["priors"] == {}


@pytest.fixture
def few_subjects(tmp_path: Path) -> Path:
    """25 subjects on 30 2PL items: too few to hold a 2PL without priors."""
    rng = np.random.default_rng(0)
    data = simulate_responses(random_params(30, rng, "2pl"), rng.normal(size=25), rng)
    path = tmp_path / "few.jsonl"
    write_jsonl(data, path)
    return path


def test_estimates_that_ran_off_warn_and_name_the_priors_option(
    few_subjects: Path, tmp_path: Path
) -> None:
    args = ["calibrate", str(few_subjects), "--model", "2pl", "--out", str(tmp_path / "p.csv")]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    lines = [" ".join(line.split()) for line in result.output.splitlines()]
    ran_off = [line for line in lines if "ran off" in line]
    assert ran_off == [
        "warning: 4 of 30 items have estimates that ran off (|b| > 6, a > 6 or a < 0), "
        "worst i0017 (a = 30.00, b = 1.43), i0021 (a = 30.00, b = -0.90), i0007 "
        "(a = 12.49, b = -0.25): the data cannot place them; fit with priors on a and b "
        "(cat calibrate --priors), or on more subjects"
    ]
    # The option it names does what it says.
    report = tmp_path / "r.json"
    result = runner.invoke(app, [*args, "--priors", "--report", str(report)])
    assert result.exit_code == 0, result.output
    assert "ran off" not in result.output
    assert set(json.loads(report.read_text())["priors"]) == {"a", "b"}


def _few_references(tmp_path: Path, n: int) -> tuple[Path, Path]:
    """The answers of ``n`` reference models to 30 items, and an empty pool of them."""
    rng = np.random.default_rng(0)
    data = simulate_responses(random_params(30, rng, "3pl"), rng.normal(size=n), rng)
    path = tmp_path / "refs.jsonl"
    write_jsonl(data, path)
    return path, write_pool(tmp_path / "pool", [_item(f"i{k:04d}") for k in range(30)])


def test_the_default_cross_fit_leaves_one_out_when_few_references(tmp_path: Path) -> None:
    answers, pool = _few_references(tmp_path, 8)
    args = ["calibrate", str(answers), "--pool", str(pool), "--cross-fit-lengths", "10,20"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    lines = [" ".join(line.split()) for line in result.output.splitlines()]
    assert (
        "note: 8 subjects are too few for 5 cross-fit folds of 2 or more; the cross-fit "
        "leaves one subject out at a time (8 folds)"
    ) in lines
    assert any(
        line.startswith("cross-fit (8 folds, 10 items, 8 reference models)") for line in lines
    )
    errors = json.loads((pool / "pool.json").read_text())["design_errors"]
    assert {e["folds"] for e in errors.values()} == {8}
    assert all(len(e["errors"]["10"]) == 8 for e in errors.values())


@pytest.mark.parametrize(
    ("n", "fix"),
    [
        (8, "use --cross-fit 4 or fewer, or --cross-fit 8 (leave-one-out)"),
        (3, "use --cross-fit 3 (leave-one-out)"),
    ],
)
def test_cross_fit_folds_asked_for_are_refused_with_what_works(
    tmp_path: Path, n: int, fix: str
) -> None:
    answers, pool = _few_references(tmp_path, n)
    result = runner.invoke(
        app, ["calibrate", str(answers), "--pool", str(pool), "--cross-fit", "5"]
    )
    assert result.exit_code == 2
    assert " ".join(result.output.split()) == (
        f"error: --cross-fit 5 needs at least 10 subjects, the responses have {n}; {fix}"
    )
    assert not (pool / "params.csv").exists()  # refused before the fit


def test_pool_gets_params_reference_and_provenance(responses: Path, tmp_path: Path) -> None:
    pool = write_pool(tmp_path / "t", [_item(f"i{k:04d}") for k in range(30)])
    result = runner.invoke(app, ["calibrate", str(responses), "--pool", str(pool), "--seed", "3"])
    assert result.exit_code == 0, result.output
    assert read_params(pool / "params.csv").n_items == 30
    reference = [json.loads(x) for x in (pool / "reference.jsonl").read_text().splitlines()]
    assert len(reference) == 300
    assert {"subject_id", "theta", "se", "accuracy", "n_answered"} <= set(reference[0])
    manifest = json.loads((pool / "pool.json").read_text())
    assert manifest["name"] == "t"
    provenance = manifest["calibration"]
    assert provenance["method"] == "em" and provenance["seed"] == 3
    assert provenance["n_subjects"] == 300 and "c" in provenance["priors"]
    # By default the references' answers and their cross-fitted errors are kept too.
    assert (pool / "reference_answers.csv.gz").is_file() and (pool / "low_rank.csv").is_file()
    assert manifest["low_rank"]["dims"] == 8  # about one factor per 30 references, at most 8
    designs = manifest["design_errors"]
    assert set(designs) == {"irt", "mixture", "low-rank"}
    # At 100 and 250 items, cut to the pool's 30, and at half the pool: a test shorter
    # than the whole pool needs errors of its own (the whole pool's are near 0).
    for errors in designs.values():
        assert errors["folds"] == 5 and list(errors["errors"]) == ["15", "30"]
        assert len(errors["errors"]["30"]) == 300
    assert "cat assess runs" in result.output


@pytest.mark.parametrize(
    ("content", "suffix", "message"),
    [
        ('{"subject_id": "m", "responses": {"q1": 2}}\n', ".jsonl", "line 1"),
        ('{"subject_id": "m", "responses": {"q1": 1}\n', ".jsonl", "not valid JSON"),
        ("id,q1\nm,1\nm,0\n", ".csv", "duplicated subject id"),
        ("", ".jsonl", "empty"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, content: str, suffix: str, message: str
) -> None:
    path = tmp_path / f"bad{suffix}"
    path.write_text(content)
    result = runner.invoke(app, ["calibrate", str(path), "--out", str(tmp_path / "p.csv")])
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "p.csv").exists()


def test_missing_destination_and_missing_pool_are_errors(responses: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["calibrate", str(responses)])
    assert result.exit_code == 2 and "--out" in result.output
    result = runner.invoke(app, ["calibrate", str(responses), "--pool", str(tmp_path / "nope")])
    assert result.exit_code == 2 and "no such folder" in result.output
    not_a_pool = tmp_path / "empty"
    not_a_pool.mkdir()
    result = runner.invoke(app, ["calibrate", str(responses), "--pool", str(not_a_pool)])
    assert result.exit_code == 2 and "pool.json: missing" in result.output
    # The one strict reader: a manifest without a language is refused, not taken for "en".
    write_pool(not_a_pool, [_item("i0000")])
    (not_a_pool / "pool.json").write_text(json.dumps({"name": "t"}))
    result = runner.invoke(app, ["calibrate", str(responses), "--pool", str(not_a_pool)])
    assert result.exit_code == 2 and "language: Field required" in result.output
    assert not (not_a_pool / "params.csv").exists()


def test_console_script_end_to_end(responses: Path, tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "cat"
    out = tmp_path / "p.csv"
    done = subprocess.run(
        [str(script), "calibrate", str(responses), "--model", "2pl", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert out.is_file()
    missing = subprocess.run(
        [str(script), "calibrate", str(tmp_path / "none.jsonl"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert missing.returncode == 2
    assert len(missing.stderr.strip().splitlines()) == 1
    assert "no such file" in missing.stderr


def test_version_and_short_help() -> None:
    assert runner.invoke(app, ["--version"]).output.startswith("cat-llm ")
    assert "calibrate" in runner.invoke(app, ["-h"]).output


@pytest.mark.slow
def test_bayes_method_writes_the_same_outputs(responses: Path, tmp_path: Path) -> None:
    pytest.importorskip("pyro")
    out, report = tmp_path / "p.csv", tmp_path / "r.json"
    result = runner.invoke(
        app,
        [
            "calibrate",
            str(responses),
            "--model",
            "2pl",
            "--method",
            "bayes",
            "--out",
            str(out),
            "--report",
            str(report),
            "--seed",
            "5",
        ],
    )
    assert result.exit_code == 0, result.output
    fit = json.loads(report.read_text())
    assert fit["method"] == "bayes" and fit["seed"] == 5
    assert np.isfinite(fit["loglik"])
    params = read_params(out)
    assert params.n_items == 30 and np.all(params.a > 0)


def test_unwritable_output_fails_before_fitting(responses: Path, tmp_path: Path) -> None:
    target = tmp_path / "no" / "such" / "p.csv"
    result = runner.invoke(app, ["calibrate", str(responses), "--out", str(target)])
    assert result.exit_code == 2
    assert "does not exist" in result.output
    assert "calibration" not in result.output  # stopped before the fit's summary
