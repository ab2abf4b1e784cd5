"""``cat simulate`` through the command line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cat.cli.app import app
from cat.engine.registry import ESTIMATOR_NAMES, POLICY_NAMES
from cat.engine.simulate_result import SimulationResult, SimulationSummary
from irt.simulate import random_params
from itempool.formats.params import write_params

runner = CliRunner()


@pytest.fixture
def params_csv(tmp_path: Path) -> Path:
    path = tmp_path / "params.csv"
    write_params(random_params(400, np.random.default_rng(0), "3pl"), path)
    return path


def test_writes_the_contract_keys(params_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "sim.json"
    result = runner.invoke(
        app,
        [
            "simulate",
            "--params",
            str(params_csv),
            "--examinees",
            "40",
            "--length",
            "30",
            "--seed",
            "3",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    sim = json.loads(out.read_text())
    summary = sim["summary"]
    assert {
        "bias",
        "rmse",
        "kendall_tau",
        "seconds",
        "seconds_per_examinee",
        "max_exposure",
    } <= set(summary)
    assert 0 < summary["rmse"] < 0.6 and summary["kendall_tau"] > 0.7
    assert sim["settings"]["seed"] == 3 and sim["settings"]["policy"] == "mfi"
    assert len(sim["examinees"]) == 40
    first = sim["examinees"][0]
    assert {"theta_true", "theta_hat", "se", "items"} <= set(first)
    assert len(first["items"]) == 30 and len(set(first["items"])) == 30
    assert "RMSE" in result.output


def test_same_seed_same_results(params_csv: Path, tmp_path: Path) -> None:
    outs = []
    for name in ("a.json", "b.json"):
        out = tmp_path / name
        runner.invoke(
            app,
            [
                "simulate",
                "--params",
                str(params_csv),
                "--examinees",
                "10",
                "--length",
                "10",
                "--policy",
                "randomesque",
                "--estimator",
                "eap",
                "--seed",
                "9",
                "--out",
                str(out),
            ],
        )
        outs.append(json.loads(out.read_text())["examinees"])
    assert outs[0] == outs[1]


def test_se_target_shortens_tests(params_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "sim.json"
    result = runner.invoke(
        app,
        [
            "simulate",
            "--params",
            str(params_csv),
            "--examinees",
            "20",
            "--length",
            "100",
            "--se-target",
            "0.35",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    sim = json.loads(out.read_text())
    assert sim["summary"]["mean_length"] < 100
    assert {e["stop_reason"] for e in sim["examinees"]} <= {"se_target", "max_length"}


def test_missing_params_file_is_one_line(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "simulate",
            "--params",
            str(tmp_path / "none.csv"),
            "--examinees",
            "5",
            "--out",
            str(tmp_path / "s.json"),
        ],
    )
    assert result.exit_code == 2
    assert "cannot read" in result.output


@pytest.mark.parametrize("policy", ["kl", "astrat", "random"])
def test_every_policy_runs(params_csv: Path, tmp_path: Path, policy: str) -> None:
    out = tmp_path / "sim.json"
    result = runner.invoke(
        app,
        [
            "simulate",
            "--params",
            str(params_csv),
            "--examinees",
            "15",
            "--length",
            "20",
            "--policy",
            policy,
            "--max-exposure",
            "0.5",
            "--batch-size",
            "4",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    sim = json.loads(out.read_text())
    assert sim["settings"]["policy"] == policy and sim["settings"]["batch_size"] == 4
    assert sim["summary"]["max_exposure"] <= 0.5 + 1e-9


def _simulate(params_csv: Path, out: Path, *extra: str) -> tuple[int, str]:
    args = ["simulate", "--params", str(params_csv), "--examinees", "400", "--length", "30"]
    result = runner.invoke(app, [*args, *extra, "--out", str(out)])
    return result.exit_code, result.output


def test_sympson_hetter_lowers_the_largest_exposure(params_csv: Path, tmp_path: Path) -> None:
    code, output = _simulate(params_csv, tmp_path / "free.json")
    assert code == 0, output
    free = json.loads((tmp_path / "free.json").read_text())["summary"]["max_exposure"]
    code, output = _simulate(params_csv, tmp_path / "sh.json", "--sympson-hetter", "0.2")
    assert code == 0, output
    sim = json.loads((tmp_path / "sh.json").read_text())
    control = sim["settings"]["exposure_control"]
    assert control["method"] == "sympson-hetter" and control["n_controlled"] > 10
    assert free > 0.6
    # 400 examinees: 0.2 plus the noise of the largest of many controlled items
    assert sim["summary"]["max_exposure"] <= 0.27
    code, output = _simulate(
        params_csv, tmp_path / "x.json", "--sympson-hetter", "0.2", "--max-exposure", "0.2"
    )
    assert code == 2 and "choose one of" in output


def test_the_file_is_the_model_dump(params_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "sim.json"
    code, output = _simulate(params_csv, out, "--seed", "2")
    assert code == 0, output
    written = json.loads(out.read_text())
    result = SimulationResult.model_validate(written)  # extra="forbid": no key unknown
    assert json.loads(json.dumps(result.model_dump(mode="json"))) == written
    assert set(written) == set(result.model_dump(mode="json"))
    assert set(written["summary"]) == set(SimulationSummary.model_fields)
    assert written["settings"]["params"] == str(params_csv)


@pytest.mark.parametrize(("value", "message"), [("-0.5", "a = -0.5"), ("nan", "a = nan")])
def test_a_bad_params_file_is_refused_with_its_line(
    params_csv: Path, tmp_path: Path, value: str, message: str
) -> None:
    lines = params_csv.read_text().splitlines()
    cells = lines[2].split(",")
    cells[lines[0].split(",").index("a")] = value
    lines[2] = ",".join(cells)
    params_csv.write_text("\n".join(lines) + "\n")
    out = tmp_path / "sim.json"
    code, output = _simulate(params_csv, out)
    assert code == 2 and f"{params_csv.name}:3: {message}" in output
    assert len(output.strip().splitlines()) == 1 and not out.exists()


def test_a_3pl_params_file_without_c_is_refused(params_csv: Path, tmp_path: Path) -> None:
    rows = [line.split(",") for line in params_csv.read_text().splitlines()]
    k = rows[0].index("c")
    noc = tmp_path / "noc.csv"
    noc.write_text("".join(",".join(r[:k] + r[k + 1 :]) + "\n" for r in rows))
    out = tmp_path / "sim.json"
    code, output = _simulate(noc, out)
    assert code == 2 and not out.exists()
    assert " ".join(output.split()) == (
        f"error: {noc}:1: missing column(s) c (a file with d has c beside it: cat "
        "calibrate writes both)"
    )


def test_a_length_beyond_the_pool_is_noted_and_recorded(tmp_path: Path) -> None:
    small = tmp_path / "small.csv"
    write_params(random_params(150, np.random.default_rng(0), "3pl"), small)
    out = tmp_path / "sim.json"
    args = ["simulate", "--params", str(small), "--examinees", "5", "--length", "500"]
    result = runner.invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "note: the pool has 150 items; tests stopped there, not at --length 500" in (
        result.output.splitlines()
    )
    summary = json.loads(out.read_text())["summary"]
    assert summary["mean_length"] == 150 and summary["effective_length"] == 150
    assert summary["pool_exhausted"] == 5
    # Within the pool: no note.
    result = runner.invoke(app, [*args[:-1], "100", "--out", str(out)])
    assert result.exit_code == 0 and "note:" not in result.output


def test_min_length_above_length_is_refused(params_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "sim.json"
    args = ["simulate", "--params", str(params_csv), "--examinees", "5", "--length", "10"]
    result = runner.invoke(app, [*args, "--min-length", "50", "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "minimum length (50) is longer than the test length (10)" in result.output
    assert not out.exists()


def test_the_printed_time_is_the_wall_time(params_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "sh.json"
    code, output = _simulate(params_csv, out, "--sympson-hetter", "0.3")
    assert code == 0, output
    summary = json.loads(out.read_text())["summary"]
    assert summary["wall_seconds"] > summary["seconds"]
    assert f"{summary['wall_seconds']:.2f} s (simulation {summary['seconds']:.2f} s" in output


def test_help_lists_the_registry_names() -> None:
    result = runner.invoke(app, ["simulate", "--help"], terminal_width=200)
    assert result.exit_code == 0
    for name in (*POLICY_NAMES, *ESTIMATOR_NAMES):
        assert name in result.output
    assert "item_pools/demo-en/params.csv" in result.output


def test_the_help_example_names_a_pool_that_ships() -> None:
    assert (Path(__file__).resolve().parents[2] / "item_pools/demo-en/params.csv").is_file()


def test_names_come_from_the_registry() -> None:
    import cat.cli.simulate as cli_simulate
    from cat.engine import registry

    # vars(): the command module uses the names, it does not export them.
    assert vars(cli_simulate)["PolicyName"] is registry.PolicyName
    assert vars(cli_simulate)["EstimatorName"] is registry.EstimatorName


@pytest.fixture
def scored_csv(tmp_path: Path) -> Path:
    from itempool.formats.polytomous_params import write_polytomous_params
    from tests.cat.engine.scored_pool import mixed_pool

    path = tmp_path / "scored.csv"
    write_polytomous_params(mixed_pool(150, seed=2), path)
    return path


def test_a_pool_of_scored_items_is_simulated(scored_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "sim.json"
    args = ["simulate", "--params", str(scored_csv), "--examinees", "60", "--length", "25"]
    result = runner.invoke(app, [*args, "--estimator", "eap", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "30 2PL, 30 3PL, 30 gpcm, 30 graded, 30 sequential" in " ".join(result.output.split())
    data = json.loads(out.read_text())
    assert data["settings"]["item_types"] == {
        "2PL": 30,
        "3PL": 30,
        "gpcm": 30,
        "graded": 30,
        "sequential": 30,
    }
    summary = data["summary"]
    assert summary["mean_length"] == 25
    # 25 items, many of them graded: well below the prior's RMSE of 1.
    assert summary["rmse"] < 0.4 and summary["kendall_tau"] > 0.8
    assert summary["rmse"] == pytest.approx(summary["mean_se"], rel=0.35)


def test_a_scored_pool_refuses_the_weighted_likelihood(scored_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "sim.json"
    args = ["simulate", "--params", str(scored_csv), "--examinees", "5", "--estimator", "wle"]
    result = runner.invoke(app, [*args, "--out", str(out)])
    assert result.exit_code != 0
    assert result.output.strip().splitlines() == [
        "error: estimator 'wle' is for binary items; a scored pool takes mle, map, eap"
    ]
    assert not out.exists()


def test_a_bad_scored_params_file_is_named_with_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "scored.csv"
    bad.write_text("item_id,type,a,d1,d2,c\nq1,gpcm,1.0,0.2,-0.1,\nq2,graded,1.0,0.5,1.0,\n")
    result = runner.invoke(
        app, ["simulate", "--params", str(bad), "--examinees", "5", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code != 0
    assert result.output.strip().splitlines() == [
        f"error: {bad}:3: item 'q2': graded thresholds must decrease strictly "
        "(d_1 > … > d_m), got [0.5, 1.0]"
    ]


@pytest.fixture
def continuous_csv(tmp_path: Path) -> Path:
    from itempool.formats.continuous_params import write_continuous_params
    from tests.cat.engine.test_mixed_pool import continuous_pool

    path = tmp_path / "continuous.csv"
    write_continuous_params(continuous_pool(80, seed=3), path)
    return path


def test_a_mixed_pool_is_simulated_from_two_files(
    scored_csv: Path, continuous_csv: Path, tmp_path: Path
) -> None:
    out = tmp_path / "sim.json"
    args = ["simulate", "--params", str(scored_csv), "--params", str(continuous_csv)]
    result = runner.invoke(
        app, [*args, "--examinees", "60", "--length", "25", "--estimator", "eap", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    settings = data["settings"]
    assert settings["params"] == str(scored_csv)
    assert settings["continuous_params"] == str(continuous_csv)
    assert settings["n_pool"] == 230
    assert settings["item_types"]["crm"] == 40 and settings["item_types"]["beta"] == 40
    summary = data["summary"]
    assert summary["rmse"] < 0.4 and summary["kendall_tau"] > 0.8
    assert summary["rmse"] == pytest.approx(summary["mean_se"], rel=0.35)
    given = {item for row in data["examinees"] for item in row["items"]}
    assert any(item.startswith("c") for item in given)


def test_a_continuous_pool_alone_is_simulated(continuous_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "sim.json"
    args = ["simulate", "--params", str(continuous_csv), "--examinees", "30", "--length", "10"]
    result = runner.invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["settings"]["item_types"] == {"beta": 40, "crm": 40}
    assert data["settings"]["continuous_params"] is None


def test_a_binary_file_joins_a_continuous_one(
    params_csv: Path, continuous_csv: Path, tmp_path: Path
) -> None:
    out = tmp_path / "sim.json"
    args = ["simulate", "--params", str(params_csv), "--params", str(continuous_csv)]
    result = runner.invoke(app, [*args, "--examinees", "20", "--length", "10", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["settings"]["item_types"]["3PL"] == 400


def test_two_files_of_one_kind_are_refused(scored_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "sim.json"
    args = ["simulate", "--params", str(scored_csv), "--params", str(scored_csv)]
    result = runner.invoke(app, [*args, "--examinees", "5", "--out", str(out)])
    assert result.exit_code != 0
    assert len(result.output.strip().splitlines()) == 1
    assert "two files of 0/1 or scored items" in result.output
    assert not out.exists()


def test_a_bad_continuous_file_is_named_with_its_line(scored_csv: Path, tmp_path: Path) -> None:
    bad = tmp_path / "continuous.csv"
    bad.write_text(
        "item_id,type,a,d,sigma,tau,epsilon\nc1,crm,1.0,0.0,0.8,,0.001\nc2,beta,-1,0.0,,1.0,0.001\n"
    )
    args = ["simulate", "--params", str(scored_csv), "--params", str(bad)]
    result = runner.invoke(app, [*args, "--examinees", "5", "--out", str(tmp_path / "o")])
    assert result.exit_code != 0
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "continuous.csv" in lines[0] and "line 3" in lines[0]


def test_one_examinee_has_no_rank_agreement_and_the_title_is_one_line(
    params_csv: Path, tmp_path: Path
) -> None:
    out = tmp_path / "sim.json"
    args = ["simulate", "--params", str(params_csv), "--examinees", "1", "--length", "5"]
    result = runner.invoke(app, [*args, "--out", str(out)], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "Kendall τ    │ n/a (one examinee)" in result.output
    assert "nan" not in result.output
    assert result.output.splitlines()[0].strip() == "CAT simulation"
    assert json.loads(out.read_text())["summary"]["kendall_tau"] is None
