"""Several models in one ``cat assess`` run: one RESULT.json each, one store and one
budget of calls in flight shared, a failing model reported while the others finish."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

import cat
from cat.assessment.many import output_names
from cat.cli.app import app
from irt.models import ItemParams
from synth.local_server import FaultPlan, LocalServer
from tests.cli.live_pool import live_items, live_pool, true_irt

runner = CliRunner()
MODELS = {"strong": 1.2, "weak": -0.8, "middle": 0.1}


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ItemParams]:
    return live_pool(tmp_path_factory.mktemp("many") / "pool")


def test_several_models_write_one_result_each_and_a_failure_is_one_line(
    calibrated: tuple[Path, ItemParams], tmp_path: Path
) -> None:
    pool, params = calibrated
    store, out = tmp_path / "run.db", tmp_path / "results"
    listed = tmp_path / "models.txt"
    listed.write_text("# the rest of the models\nweak\n\n  middle  \nmissing\n")
    with LocalServer(live_items(), MODELS, irt=true_irt(params)) as server:
        args = ["assess", "--pool", str(pool), "--model", "strong", "--model", "sim:0.5"]
        args += ["--models", str(listed), "--base-url", server.base_url, "--length", "15"]
        args += ["--batch-size", "3", "--concurrency", "4", "--store", str(store)]
        args += ["--out", str(out), "--temperature", "0.2"]
        result = runner.invoke(app, args)
        answered = [r for r in server.records if r.outcome == "ok"]
    assert result.exit_code == 2, result.output
    # the model the endpoint lacks: one line, after the others finished
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: missing: the endpoint "
        f"{server.base_url} has no model 'missing'; it has: middle, strong, weak"
    ]
    names = sorted(p.name for p in out.iterdir())
    assert names == ["middle.json", "sim_0.5.json", "strong.json", "weak.json"]
    results = {name: json.loads((out / name).read_text()) for name in names}
    for name in ("strong", "weak", "middle"):
        written = results[f"{name}.json"]
        assert written["model"] == name and written["n_items"] == 15
        assert written["usage"]["calls"] == 15
        assert written["settings"]["generation"]["temperature"] == 0.2
        assert written["settings"]["concurrency"] == 4
    assert results["sim_0.5.json"]["settings"]["generation"] is None
    # the strong model ranks above the weak one
    assert results["strong.json"]["theta"] > results["middle.json"]["theta"]
    assert results["middle.json"]["theta"] > results["weak.json"]["theta"]
    # one store holds every model's calls, each stored once
    assert len(answered) == 45 and all(r.temperature == 0.2 for r in answered)
    with sqlite3.connect(store) as db:
        counts = dict(db.execute("SELECT model, COUNT(*) FROM calls GROUP BY model").fetchall())
    assert counts == {"strong": 15, "weak": 15, "middle": 15}
    # the table has a row per model, the failure included
    for name in ("strong", "weak", "middle", "sim:0.5", "missing"):
        assert f"│ {name} " in result.stdout


def test_the_models_share_one_budget_of_calls_in_flight(
    calibrated: tuple[Path, ItemParams], tmp_path: Path
) -> None:
    pool, params = calibrated
    with LocalServer(live_items(), MODELS, irt=true_irt(params)) as server:
        examinees = [
            cat.EndpointExaminee(name, server.base_url, store=tmp_path / "run.db")
            for name in MODELS
        ]
        runs = cat.assess_many(
            pool, examinees, concurrency=2, length=12, batch_size=4, seed=3, design="irt"
        )
        assert len(server.completed_keys()) == 36
    assert [run.model for run in runs] == list(MODELS)
    assert all(run.result is not None and run.result.n_items == 12 for run in runs)
    budget = examinees[0].budget
    assert budget is not None and all(e.budget is budget for e in examinees)
    assert budget.peak == 2 and budget.in_use == 0
    # the same run again (fresh examinees) pays nothing: every call is in the store
    with LocalServer(live_items(), MODELS, irt=true_irt(params)) as server:
        examinees = [
            cat.EndpointExaminee(name, server.base_url, store=tmp_path / "run.db")
            for name in MODELS
        ]
        again = cat.assess_many(
            pool, examinees, concurrency=2, length=12, batch_size=4, seed=3, design="irt"
        )
        assert not server.records
    for first, second in zip(runs, again, strict=True):
        assert first.result is not None and second.result is not None
        assert second.result.usage is not None and second.result.usage.calls == 0
        assert second.result.theta == first.result.theta


def test_resume_continues_the_unfinished_models_and_reruns_the_finished(
    calibrated: tuple[Path, ItemParams], tmp_path: Path
) -> None:
    pool, params = calibrated
    base = ["assess", "--pool", str(pool), "--length", "15", "--store", str(tmp_path / "run.db")]
    irt = true_irt(params)
    # weak stops part-way (a 500 with no retry), strong finishes, each run alone
    with LocalServer(live_items(), MODELS, irt=irt, faults=FaultPlan(rate_500=0.1)) as flaky:
        args = [*base, "--model", "weak", "--base-url", flaky.base_url, "--max-attempts", "1"]
        assert runner.invoke(app, args).exit_code == 2
        stopped_after = len(flaky.completed_keys())
    with LocalServer(live_items(), MODELS, irt=irt) as healthy:
        args = [*base, "--model", "strong", "--base-url", healthy.base_url]
        assert runner.invoke(app, args).exit_code == 0
    assert 0 < stopped_after < 15
    # both again with --resume: weak continues, strong starts over from the store
    with LocalServer(live_items(), MODELS, irt=irt) as healthy:
        args = [*base, "--model", "strong", "--model", "weak", "--base-url", healthy.base_url]
        again = runner.invoke(app, [*args, "--resume", "--out", str(tmp_path / "r")])
        asked = [r.model for r in healthy.records if r.outcome == "ok"]
    assert again.exit_code == 0, again.output
    strong, weak = (
        json.loads((tmp_path / "r" / f"{m}.json").read_text()) for m in ("strong", "weak")
    )
    assert strong["n_items"] == weak["n_items"] == 15
    assert strong["usage"]["calls"] == 0 and strong["usage"]["calls_from_store"] == 15
    assert asked == ["weak"] * (15 - stopped_after)


def test_each_model_gets_a_report_folder(
    calibrated: tuple[Path, ItemParams], tmp_path: Path
) -> None:
    pool, _ = calibrated
    report = tmp_path / "reports"
    args = ["assess", "--pool", str(pool), "--model", "sim:1", "--model", "sim:-1"]
    result = runner.invoke(app, [*args, "--length", "5", "--report", str(report)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in report.iterdir()) == ["sim_-1", "sim_1"]
    assert all((report / name / "index.html").is_file() for name in ("sim_-1", "sim_1"))
    assert "reports written to" in result.output


def test_one_model_is_refused_twice_and_names_are_file_safe() -> None:
    with pytest.raises(cat.CatError, match="named twice"):
        cat.assess_many("nowhere", [cat.SimulatedExaminee(0.1), cat.SimulatedExaminee(0.1)])
    assert output_names(["org/model:7b", "org_model_7b", "sim:0.5", "..."]) == {
        "org/model:7b": "org_model_7b",
        "org_model_7b": "org_model_7b-2",
        "sim:0.5": "sim_0.5",
        "...": "model",
    }


def test_several_models_refuse_a_json_file_for_their_folder(tmp_path: Path) -> None:
    out = tmp_path / "several.json"
    args = ["assess", "--pool", "demo-en", "--model", "sim:0.5", "--model", "sim:1"]
    result = runner.invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 2 and not out.exists()
    assert "2 models write one MODEL.json each into a folder" in result.output


def test_connections_the_tests_cannot_use_are_noted_only_when_asked_for() -> None:
    args = ["assess", "--pool", "demo-en", "--model", "m1", "--model", "m2", "--length", "5"]
    args += ["--base-url", "http://127.0.0.1:9/v1", "--max-attempts", "1"]
    noted = runner.invoke(app, [*args, "--concurrency", "6"])
    assert (
        "note: --concurrency 6: 2 models asking 1 item at a time keep at most 2 calls in "
        "flight; --batch-size 3 would use them" in noted.output
    )
    assert "note: --concurrency" not in runner.invoke(app, args).output  # the default 8
    batched = runner.invoke(app, [*args, "--concurrency", "6", "--batch-size", "3"])
    assert "note: --concurrency" not in batched.output
