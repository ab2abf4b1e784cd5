"""``cat assess`` through the command line: sim:, replay:, and a live model over HTTP."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cat.cli.app import app
from cat.designs.flatness import SLOPE_FLAG
from cat.pools.calibration import record_calibration
from irt.models import probability
from irt.simulate import random_params, simulate_responses
from itempool import PoolItem
from itempool.formats.responses import write_jsonl
from synth.local_server import LocalServer
from tests.synth.pools import write_pool

runner = CliRunner()
N_ITEMS = 300
SCENARIOS = ("dosing", "units", "rates")

#: The keys the README lists for RESULT.json.
README_KEYS = {
    "theta",
    "se",
    "theta_interval",
    "predicted_accuracy",
    "accuracy_interval",
    "rank",
    "scenarios",
    "scenario_interval",
    "difficulty_check",
    "person_fit",
    "items",
    "truth",
    "usage",
    "settings",
    "seed",
}


def _items() -> list[PoolItem]:
    return [
        PoolItem(
            id=f"q{k:04d}",
            scenario=SCENARIOS[k % 3],
            question=f"Assessment test question {k}: which of the options is right?",
            options={"A": "alpha", "B": "beta", "C": "gamma", "D": "delta"},
            answer="ABCD"[k % 4],
        )
        for k in range(N_ITEMS)
    ]


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object, Path]:
    """A pool with known (true) parameters, 30 references, and their recorded answers."""
    tmp = tmp_path_factory.mktemp("assess")
    items = _items()
    params = random_params(N_ITEMS, np.random.default_rng(0), "3pl")
    params = replace(params, item_ids=tuple(i.id for i in items))
    pool = write_pool(tmp / "pool", items)
    rng = np.random.default_rng(1)
    theta = np.linspace(-2, 2, 30)
    answers = simulate_responses(params, theta, rng)
    answers = replace(answers, subject_ids=tuple(f"ref{k:02d}" for k in range(30)))
    write_jsonl(answers, tmp / "answers.jsonl")
    rows = [
        {
            "subject_id": f"ref{k:02d}",
            "theta": float(t),
            "se": 0.1,
            "accuracy": float(answers.accuracy()[k]),
            "n_answered": N_ITEMS,
        }
        for k, t in enumerate(theta)
    ]
    record_calibration(pool, params, rows, {"method": "true parameters (test)"})
    return pool, params, tmp / "answers.jsonl"


def _irt(params) -> dict[str, tuple[float, float, float]]:  # type: ignore[no-untyped-def]
    """The pool's parameters as the local server's true item parameters."""
    rows = zip(params.item_ids, params.a, params.b, params.c, strict=True)
    return {i: (float(a), float(b), float(c)) for i, a, b, c in rows}


def _scaled_half(stored: dict, length: str, disagreement: float) -> float:  # type: ignore[type-arg]
    """The 90% half-width by hand from a design's stored errors and disagreements: the
    conformal quantile (the ⌈(n + 1)·0.9⌉-th smallest) of |error| / (disagreement + their
    median), times the model's disagreement + that median."""
    errors = np.abs(stored["errors"][length])
    spread = np.asarray(stored["disagreement"][length])
    offset = max(float(np.median(spread)), 1e-3)
    rank = int(np.ceil((len(errors) + 1) * 0.9))
    q = np.sort(errors / (spread + offset))[min(rank, len(errors)) - 1]
    return float(q * (disagreement + offset))


def _assess(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["assess", *args])
    return result.exit_code, result.output


def test_sim_model_gets_its_rank_and_accuracy(calibrated, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pool, params, _ = calibrated
    out = tmp_path / "result.json"
    code, output = _assess(
        "--pool",
        str(pool),
        "--model",
        "sim:0.5",
        "--length",
        "80",
        "--out",
        str(out),
        "--seed",
        "3",
    )
    assert code == 0, output
    result = json.loads(out.read_text())
    assert {"theta", "se", "n_items", "predicted_accuracy", "rank", "items"} <= set(result)
    assert set(result) >= README_KEYS and result["difficulty_check"] is None
    assert result["n_items"] == 80 and len(result["items"]) == 80
    assert abs(result["theta"] - 0.5) < 3 * result["se"]
    acc = result["predicted_accuracy"]
    truth = float(probability([0.5], params)[0].mean())
    # Within 3 standard errors, as θ above: the 90% interval spans ±1.645 of them.
    spread = (acc["high"] - acc["low"]) / (2 * 1.645)
    assert acc["low"] <= acc["value"] <= acc["high"] and abs(acc["value"] - truth) < 3 * spread
    assert result["truth"]["accuracy"] == pytest.approx(truth)
    rank = result["rank"]
    assert rank["of"] == 31 and 10 <= rank["position"] <= 22  # θ 0.5 among -2 … 2
    given = [i["scenario"] for i in result["items"]]
    assert all(abs(given.count(s) - 80 / 3) <= 1 for s in SCENARIOS)  # content balanced
    assert result["seed"] == 3 and result["settings"]["max_items"] == 80
    assert "rank" in output and "Predicted accuracy per scenario" in output


def test_every_listed_key_is_written_null_where_it_does_not_apply(  # type: ignore[no-untyped-def]
    calibrated, tmp_path: Path
) -> None:
    """On a pool without references (nor cross-fitted errors) RESULT.json still holds
    every key the README lists: the difficulty check null, with why beside it."""
    _, params, _ = calibrated
    pool = write_pool(tmp_path / "bare", _items())
    record_calibration(pool, params, [], {"method": "true parameters (test)"})
    out = tmp_path / "result.json"
    code, output = _assess(
        "--pool", str(pool), "--model", "sim:0.5", "--length", "20", "--out", str(out)
    )
    assert code == 0, output
    result = json.loads(out.read_text())
    assert set(result) >= README_KEYS
    assert result["rank"] is None and result["usage"] is None
    assert result["difficulty_check"] is None
    assert "no cross-fitted errors" in result["difficulty_check_skipped"]


def test_replay_skips_items_never_answered(calibrated, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pool, _, answers = calibrated
    out = tmp_path / "result.json"
    code, output = _assess(
        "--pool",
        str(pool),
        "--model",
        f"replay:{answers}#ref20",
        "--length",
        "60",
        "--out",
        str(out),
    )
    assert code == 0, output
    result = json.loads(out.read_text())
    assert result["n_items"] == 60 and "truth" in result
    assert abs(result["predicted_accuracy"]["value"] - result["truth"]["accuracy"]) < 0.08
    code, output = _assess("--pool", str(pool), "--model", f"replay:{answers}#nobody")
    assert code == 2 and "no subject 'nobody'" in output


def test_live_model_over_http_and_resume_pays_nothing_twice(  # type: ignore[no-untyped-def]
    calibrated, tmp_path: Path
) -> None:
    pool, params, _ = calibrated
    irt = _irt(params)
    out, store, report = tmp_path / "r.json", tmp_path / "calls.db", tmp_path / "report"
    with LocalServer(_items(), {"llm": 1.0}, irt=irt) as server:
        args = [
            "--pool",
            str(pool),
            "--model",
            "llm",
            "--base-url",
            server.base_url,
            "--length",
            "60",
            "--batch-size",
            "4",
            "--store",
            str(store),
            "--out",
            str(out),
            "--report",
            str(report),
        ]
        code, output = _assess(*args)
        assert code == 0, output
        first = json.loads(out.read_text())
        assert first["usage"]["calls"] == 60 == len(server.completed_keys())
        truth = float(np.mean([server.p_right("llm", i) for i in params.item_ids]))
        acc = first["predicted_accuracy"]
        assert acc["low"] <= truth <= acc["high"] and abs(acc["value"] - truth) < 0.07
        # the true rank (θ = 1.0 among references at -2 … 2) within the rank interval
        refs = np.linspace(-2, 2, 30)
        ci = first["theta_interval"]
        best, worst = 1 + int((refs > ci["high"]).sum()), 1 + int((refs > ci["low"]).sum())
        assert best <= 1 + int((refs > 1.0).sum()) <= worst
        assert best <= first["rank"]["position"] <= worst
        # one self-contained page: the plots are inline, no file beside it
        assert [p.name for p in report.iterdir()] == ["index.html"]
        assert (report / "index.html").read_text().count('src="data:image/png;base64,') == 4
        # the same command again: finished, so it starts over and every call is stored
        code, output = _assess(*args)
        assert code == 0, output
        again = json.loads(out.read_text())
        assert again["usage"]["calls"] == 0 and again["usage"]["calls_from_store"] == 60
        assert len(server.completed_keys()) == 60
        assert again["theta"] == first["theta"]


def test_bad_input_is_one_line(calibrated, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pool, _, _ = calibrated
    code, output = _assess("--pool", str(pool), "--model", "some-llm")
    assert code == 2 and "needs --base-url" in output
    code, output = _assess("--pool", str(pool), "--model", "sim:high")
    assert code == 2 and "sim:THETA needs a number" in output
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    code, output = _assess(
        "--pool", str(pool), "--model", "m", "--base-url", closed, "--store", str(tmp_path / "s.db")
    )
    assert code == 2 and "cannot reach" in output and not (tmp_path / "s.db").exists()
    bare = write_pool(tmp_path / "bare", _items()[:20])
    code, output = _assess("--pool", str(bare), "--model", "sim:0")
    assert code == 2 and "no params.csv" in output


def test_a_model_the_endpoint_lacks_is_named_with_the_models_it_has(  # type: ignore[no-untyped-def]
    calibrated, tmp_path: Path
) -> None:
    pool, _, _ = calibrated
    with LocalServer(_items(), {"llm": 1.0, "other": 0.5}) as server:
        code, output = _assess(
            *("--pool", str(pool), "--model", "nosuch", "--base-url", server.base_url),
            *("--store", str(tmp_path / "s.db"), "--out", str(tmp_path / "r.json")),
        )
    assert code == 2
    assert output.strip().splitlines() == [
        f"error: nosuch: the endpoint {server.base_url} has no model 'nosuch'; it has: llm, other"
    ]


def test_a_run_that_failed_before_its_first_answer_does_not_block_the_next(  # type: ignore[no-untyped-def]
    calibrated, tmp_path: Path
) -> None:
    pool, _, _ = calibrated
    args = ["--pool", str(pool), "--model", "llm", "--length", "5"]
    args += ["--store", str(tmp_path / "s.db"), "--out", str(tmp_path / "r.json")]
    with LocalServer(_items(), {"other": 0.5}) as wrong:  # no model "llm" there
        code, output = _assess(*args, "--base-url", wrong.base_url)
    assert code == 2 and "has no model 'llm'" in output
    with LocalServer(_items(), {"llm": 1.0}) as right:
        code, output = _assess(*args, "--base-url", right.base_url)
    assert code == 0, output  # no --resume asked for: nothing was answered to resume


def test_a_give_up_names_the_model_once(  # type: ignore[no-untyped-def]
    calibrated, tmp_path: Path
) -> None:
    from synth.local_server import FaultPlan

    pool, _, _ = calibrated
    args = ["--pool", str(pool), "--model", "llm", "--length", "5", "--max-attempts", "1"]
    args += ["--store", str(tmp_path / "s.db")]
    with LocalServer(_items(), {"llm": 1.0}, faults=FaultPlan(rate_429=1.0)) as server:
        code, output = _assess(*args, "--base-url", server.base_url)
    assert code == 2
    assert output.startswith("error: llm: gave up after 1 attempt (RateLimitError 429"), output


def test_an_interrupted_assessment_resumes_where_it_stopped(  # type: ignore[no-untyped-def]
    calibrated, tmp_path: Path
) -> None:
    from synth.local_server import FaultPlan

    pool, params, _ = calibrated
    irt = _irt(params)
    out, store = tmp_path / "r.json", tmp_path / "calls.db"
    base = [
        "--pool",
        str(pool),
        "--model",
        "llm",
        "--length",
        "40",
        "--store",
        str(store),
        "--out",
        str(out),
        "--max-attempts",
        "1",
    ]
    with LocalServer(_items(), {"llm": 0.0}, irt=irt, faults=FaultPlan(rate_500=0.05)) as server:
        code, output = _assess(*base, "--base-url", server.base_url)
        assert code == 2 and "llm:" in output and not out.exists()  # stopped with one line
        paid_before = set(server.completed_keys())
        assert 0 < len(paid_before) < 40
        code, output = _assess(*base, "--base-url", server.base_url)
        assert code == 2 and "--resume" in output
    with LocalServer(_items(), {"llm": 0.0}, irt=irt) as healthy:
        code, output = _assess(*base, "--base-url", healthy.base_url, "--resume")
        assert code == 0, output
        assert "resuming after" in output
        result = json.loads(out.read_text())
        assert result["n_items"] == 40
        # the resumed test asks only what was not answered before: nothing paid twice
        paid_after = set(healthy.completed_keys())
        assert not paid_before & paid_after
        assert (
            len(paid_before) + len(paid_after)
            == 40
            == len(healthy.completed_keys()) + len(paid_before)
        )


def test_a_resumed_assessment_counts_the_usage_of_the_whole_run(  # type: ignore[no-untyped-def]
    calibrated, tmp_path: Path
) -> None:
    """RESULT.json's usage after --resume is the whole run's, as if never interrupted:
    the calls of the interrupted part (those after its last checkpoint included, which
    the resumed part finds in the store) are counted as paid, once."""
    from synth.local_server import FaultPlan

    pool, params, _ = calibrated
    irt = _irt(params)

    def args(store: str, out: str) -> list[str]:
        return [
            *("--pool", str(pool), "--model", "llm", "--length", "40", "--batch-size", "4"),
            *("--store", str(tmp_path / store), "--out", str(tmp_path / out)),
            *("--max-attempts", "1"),
        ]

    with LocalServer(_items(), {"llm": 0.0}, irt=irt) as healthy:
        code, output = _assess(*args("whole.db", "whole.json"), "--base-url", healthy.base_url)
        assert code == 0, output
    whole = json.loads((tmp_path / "whole.json").read_text())["usage"]
    assert whole["calls"] == 40 and whole["calls_from_store"] == 0
    with LocalServer(_items(), {"llm": 0.0}, irt=irt, faults=FaultPlan(rate_500=0.05)) as flaky:
        code, output = _assess(*args("parts.db", "parts.json"), "--base-url", flaky.base_url)
        assert code == 2 and not (tmp_path / "parts.json").exists()
        paid_before = len(flaky.completed_keys())
        assert 0 < paid_before < 40
    with LocalServer(_items(), {"llm": 0.0}, irt=irt) as healthy:
        code, output = _assess(
            *args("parts.db", "parts.json"), "--base-url", healthy.base_url, "--resume"
        )
        assert code == 0, output
        assert len(healthy.completed_keys()) == 40 - paid_before  # nothing paid twice
    resumed = json.loads((tmp_path / "parts.json").read_text())
    assert resumed["usage"] == whole
    assert f"40 new, 0 from the store; {whole['prompt_tokens'] + whole['completion_tokens']:,}" in (
        output
    )


def test_cross_fitted_errors_widen_the_accuracy_interval(calibrated, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`cat calibrate --pool --cross-fit` stores the references' left-out errors;
    `cat assess` widens its interval to their conformal half-width and says so; a
    calibration without --cross-fit drops the stale errors."""
    source, _, answers = calibrated
    pool = tmp_path / "pool"
    shutil.copytree(source, pool)
    result = runner.invoke(
        app,
        [
            "calibrate",
            str(answers),
            "--pool",
            str(pool),
            "--cross-fit",
            "3",
            "--cross-fit-lengths",
            "40",
            "--seed",
            "5",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "cross-fit (3 folds, 40 items, 30 reference models)" in result.output
    manifest = json.loads((pool / "pool.json").read_text())
    irt = manifest["prediction_errors"]
    assert irt["folds"] == 3 and irt["seed"] == 5 and len(irt["errors"]["40"]) == 30
    assert irt["policy"] == "mfi+cb" and manifest["design_errors"]["irt"] == irt
    designs = manifest["design_errors"]
    assert set(designs) == {"irt", "mixture", "low-rank"}
    mae = {name: np.mean(np.abs(e["errors"]["40"])) for name, e in designs.items()}
    best = min(mae, key=lambda name: mae[name])
    assert f"cat assess runs {best} at 40 items" in result.output
    assert (pool / "reference_answers.csv.gz").is_file()
    assert runner.invoke(app, ["pool", "validate", str(pool)]).exit_code == 0

    out = tmp_path / "r.json"
    code, output = _assess(
        "--pool", str(pool), "--model", "sim:0.5", "--length", "40", "--out", str(out)
    )
    assert code == 0, output
    assert "interval from" in output
    report = json.loads(out.read_text())
    assert report["settings"]["design"] == best  # auto: the design that erred least
    errors = designs[best]
    info, acc = report["accuracy_interval"], report["predicted_accuracy"]
    assert info["length"] == 40 and info["references"] == 30 and info["folds"] == 3
    # Scaled by the model's disagreement with its companion (cat.prediction.disagreement).
    unlike = report["unlike_references"]
    assert info["half_width"] == pytest.approx(_scaled_half(errors, "40", unlike["disagreement"]))
    assert acc["low"] <= acc["value"] - info["half_width"] + 1e-12
    assert acc["high"] >= acc["value"] + info["half_width"] - 1e-12

    again = runner.invoke(app, ["calibrate", str(answers), "--pool", str(pool), "--no-cross-fit"])
    assert again.exit_code == 0, again.output
    assert "no cross-fit (--no-cross-fit)" in again.output
    stale = json.loads((pool / "pool.json").read_text())
    assert "prediction_errors" not in stale and "design_errors" not in stale
    bad = runner.invoke(
        app, ["calibrate", str(answers), "--out", str(tmp_path / "p.csv"), "--cross-fit", "3"]
    )
    assert bad.exit_code == 2 and "--pool" in bad.output


def test_resume_with_nothing_to_resume_is_refused(calibrated, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """--resume never starts a fresh run silently: with no stored run, or a finished one,
    it says so and stops before any call."""
    pool, params, _ = calibrated
    store = tmp_path / "calls.db"
    base = ["--pool", str(pool), "--model", "llm", "--length", "10", "--store", str(store)]
    with LocalServer(_items(), {"llm": 0.0}, irt=_irt(params)) as server:
        code, output = _assess(*base, "--base-url", server.base_url, "--resume")
        assert code == 2 and "nothing to resume" in output and "never started" in output
        assert not server.completed_keys()
        code, output = _assess(*base, "--base-url", server.base_url)
        assert code == 0, output
        code, output = _assess(*base, "--base-url", server.base_url, "--resume")
        assert code == 2 and "finished already" in output
    code, output = _assess("--pool", str(pool), "--model", "sim:0", "--resume")
    assert code == 2 and "only a live model keeps one" in output


def test_a_minimum_above_the_maximum_is_refused(calibrated) -> None:  # type: ignore[no-untyped-def]
    pool, _, _ = calibrated
    code, output = _assess(
        "--pool", str(pool), "--model", "sim:0", "--length", "10", "--min-length", "50"
    )
    assert code == 2 and "minimum length (50) is above the maximum (10)" in output


def test_a_reference_design_runs_on_the_references_answers(calibrated, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`--design mixture` asks by the references' answers, which `cat calibrate --pool`
    keeps; without stored errors its interval is its own spread, labelled so; a pool
    without the answers is refused with what to do."""
    source, _, answers = calibrated
    code, output = _assess("--pool", str(source), "--model", "sim:0", "--design", "mixture")
    assert code == 2 and "keeps no reference answers" in output and "--design irt" in output
    pool = tmp_path / "pool"
    shutil.copytree(source, pool)
    calibrated_again = runner.invoke(
        app, ["calibrate", str(answers), "--pool", str(pool), "--no-cross-fit"]
    )
    assert calibrated_again.exit_code == 0, calibrated_again.output
    out = tmp_path / "r.json"
    code, output = _assess(
        "--pool",
        str(pool),
        "--model",
        "sim:0.5",
        "--length",
        "30",
        "--design",
        "mixture",
        "--out",
        str(out),
    )
    assert code == 0, output
    assert "design" in output and "mixture: items and prediction" in output
    report = json.loads(out.read_text())
    assert report["settings"]["design"] == "mixture" and report["n_items"] == 30
    assert "own spread" in report["accuracy_interval"]["method"]
    acc = report["predicted_accuracy"]
    assert acc["low"] < acc["value"] < acc["high"]
    # On the right scale: with 30 simulated references the mixture errs by about 0.075
    # on average at 30 items (measured over 200 examinees), so no tighter claim here.
    assert abs(acc["value"] - report["truth"]["accuracy"]) < 0.15
    assert "not cross-fitted" in report["scenario_interval"]
    # Without cross-fitted errors "auto" is the IRT design.
    code, output = _assess(
        "--pool", str(pool), "--model", "sim:0.5", "--length", "10", "--out", str(out)
    )
    assert code == 0 and json.loads(out.read_text())["settings"]["design"] == "irt"


@pytest.fixture(scope="module")
def cross_fitted(calibrated, tmp_path_factory: pytest.TempPathFactory) -> Path:  # type: ignore[no-untyped-def]
    """The calibrated pool again with ``cat calibrate --pool``'s cross-fit stored."""
    source, _, answers = calibrated
    pool = tmp_path_factory.mktemp("cross-fitted") / "pool"
    shutil.copytree(source, pool)
    done = runner.invoke(app, ["calibrate", str(answers), "--pool", str(pool), "--seed", "1"])
    assert done.exit_code == 0, done.output
    return pool


def test_the_difficulty_check_compares_with_the_references_gains(
    cross_fitted: Path, tmp_path: Path
) -> None:
    """cat calibrate --pool stores each reference's cross-fitted difficulty gain; cat
    assess reports the new model's against the lowest of them."""
    pool = cross_fitted
    manifest = json.loads((pool / "pool.json").read_text())
    for errors in manifest["design_errors"].values():
        assert [len(v) for v in errors["difficulty_gain"].values()] == [30, 30]
        # The slope check's z and the fallback's errors of every reference, per length.
        assert [len(v) for v in errors["slope_z"].values()] == [30, 30]
        assert [len(v) for v in errors["fallback_errors"].values()] == [30, 30]
        assert all(abs(e) < 0.3 for v in errors["fallback_errors"].values() for e in v)
    out = tmp_path / "r.json"
    code, output = _assess(
        "--pool", str(pool), "--model", "sim:0.3", "--length", "100", "--out", str(out)
    )
    assert code == 0, output
    report = json.loads(out.read_text())
    check = report["difficulty_check"]
    stored = manifest["design_errors"][report["settings"]["design"]]["difficulty_gain"]["100"]
    assert check["references"] == 30 and check["length"] == 100
    assert check["lowest_reference"] == pytest.approx(min(stored))
    assert check["flagged"] == (check["gain"] < check["lowest_reference"])
    assert "difficulty" in output
    # The slope check's threshold is the 5% point of a normal fitted to the references'
    # z, never above the design's own 1% point.
    slope = report["slope_check"]
    zs = np.asarray(manifest["design_errors"][report["settings"]["design"]]["slope_z"]["100"])
    fitted = min(float(zs.mean() - 1.6449 * zs.std(ddof=1)), SLOPE_FLAG)
    assert slope["references"] == 30 and slope["threshold"] == pytest.approx(fitted, abs=1e-3)
    assert slope["flagged"] == (slope["z"] < slope["threshold"]) and "slope check" in output
    # Per-scenario intervals are widened to each scenario's cross-fitted errors.
    design = manifest["design_errors"][report["settings"]["design"]]
    per_scenario = design["scenario_errors"]["100"]
    assert set(per_scenario) == set(report["scenarios"])
    assert report["scenario_interval"].startswith("widened per scenario")
    for name, entry in report["scenarios"].items():
        ranked = np.sort(np.abs(per_scenario[name]))
        half = ranked[min(int(np.ceil((len(ranked) + 1) * 0.9)), len(ranked)) - 1]
        assert entry["low"] <= max(0.0, entry["value"] - half) + 1e-12
        assert entry["high"] >= min(1.0, entry["value"] + half) - 1e-12


@pytest.mark.parametrize(("design", "companion"), [("irt", "mixture"), ("mixture", "irt")])
def test_the_interval_is_scaled_by_the_disagreement_with_a_companion(
    cross_fitted: Path, tmp_path: Path, design: str, companion: str
) -> None:
    """cat calibrate --pool stores each reference's disagreement beside its error; cat
    assess sizes the interval by the new model's own (cat.prediction.disagreement)."""
    manifest = json.loads((cross_fitted / "pool.json").read_text())
    stored = manifest["prediction_errors"] if design == "irt" else manifest["design_errors"][design]
    assert [len(v) for v in stored["disagreement"].values()] == [30, 30]
    out = tmp_path / "r.json"
    code, output = _assess(
        "--pool", str(cross_fitted), "--model", "sim:0.3", "--length", "100",
        "--design", design, "--out", str(out),
    )  # fmt: skip
    assert code == 0, output
    report = json.loads(out.read_text())
    unlike = report["unlike_references"]
    assert unlike["companion"] == companion and unlike["length"] == 100
    acc = report["predicted_accuracy"]
    assert unlike["disagreement"] == pytest.approx(abs(acc["value"] - unlike["companion_accuracy"]))
    half = _scaled_half(stored, "100", unlike["disagreement"])
    assert report["accuracy_interval"]["half_width"] == pytest.approx(half)
    spread = stored["disagreement"]["100"]
    assert unlike["threshold"] == pytest.approx(np.sort(spread)[27])  # ⌈31 · 0.9⌉ = 28th
    assert unlike["flagged"] == (unlike["disagreement"] > unlike["threshold"])
    assert acc["low"] <= max(0.0, acc["value"] - half) + 1e-12
    assert acc["high"] >= min(1.0, acc["value"] + half) - 1e-12
    if design != "irt":  # a reference design's interval is exactly ± the half-width
        assert acc["high"] - acc["low"] == pytest.approx(
            min(1.0, acc["value"] + half) - max(0.0, acc["value"] - half)
        )
    assert "disagreement" in output and f"from the {companion} prediction" in output
