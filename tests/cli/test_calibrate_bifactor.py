"""``cat calibrate --model bifactor``: the multidimensional fit beside the 3PL, its file,
its report and its place in a pool."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cat.cli.app import app
from irt.bifactor_model import BifactorParams, group_codes
from irt.responses import ResponseMatrix
from itempool import PoolItem, load_pool
from itempool.formats.mirt_params import read_mirt_params
from itempool.formats.responses import write_jsonl
from tests.synth.pools import write_pool

runner = CliRunner()
SCENARIOS = ["dosing", "ethics", "triage"]
N_ITEMS = 24


def _scenario(j: int) -> str:
    return SCENARIOS[j % len(SCENARIOS)]


@pytest.fixture
def responses(tmp_path: Path) -> Path:
    """400 subjects answering items with strong specific factors (slopes 1.2)."""
    rng = np.random.default_rng(5)
    codes, names = group_codes([_scenario(j) for j in range(N_ITEMS)])
    truth = BifactorParams(
        item_ids=tuple(f"i{j:03d}" for j in range(N_ITEMS)),
        a_general=rng.uniform(0.8, 1.6, N_ITEMS),
        a_specific=np.full(N_ITEMS, 1.2),
        d=rng.normal(0, 1, N_ITEMS),
        group=codes,
        groups=names,
    )
    g = rng.normal(size=(400, 1))
    s = rng.normal(size=(400, len(names)))
    p = truth.probability(g, s[:, codes])
    values = (rng.random(p.shape) < p).astype(np.int8)
    data = ResponseMatrix(
        values=values,
        subject_ids=tuple(f"m{k}" for k in range(400)),
        item_ids=truth.item_ids,
    )
    path = tmp_path / "responses.jsonl"
    write_jsonl(data, path)
    return path


def _pool_items() -> list[PoolItem]:
    return [
        PoolItem(
            id=f"i{j:03d}",
            question=f"Which is right in item {j}?",
            options={"A": "a", "B": "b"},
            answer="A",
            scenario=_scenario(j),
        )
        for j in range(N_ITEMS)
    ]


def _groups_file(tmp_path: Path) -> Path:
    path = tmp_path / "items.csv"
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "scenario"])
        for j in range(N_ITEMS):
            writer.writerow([f"i{j:03d}", _scenario(j)])
    return path


def test_writes_the_bifactor_items_and_a_report_beside_the_3pl(
    responses: Path, tmp_path: Path
) -> None:
    out, report = tmp_path / "mirt.csv", tmp_path / "fit.json"
    args = ["calibrate", str(responses), "--model", "bifactor", "--no-guessing"]
    args += ["--groups", str(_groups_file(tmp_path)), "--out", str(out), "--report", str(report)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    params = read_mirt_params(out)
    assert params.factors == ("general", *SCENARIOS)
    assert params.c is None
    # Every item loads on the general factor and its own scenario's factor only.
    assert params.pattern[:, 0].all() and (params.pattern[:, 1:].sum(axis=1) == 1).all()
    # The specific slopes (truth 1.2) are found, not left at 0.
    assert float(np.mean(params.slopes[:, 1:].sum(axis=1))) > 0.8
    fit = json.loads(report.read_text())
    assert fit["model"] == "bifactor" and fit["factors"] == ["general", *SCENARIOS]
    assert fit["n_parameters"] == 3 * N_ITEMS
    uni = fit["unidimensional"]
    assert uni["model"] == "3pl" and uni["n_parameters"] == 3 * N_ITEMS
    # On data with strong specific factors the bifactor model fits better, by AIC too.
    assert fit["loglik"] > uni["loglik"] + 50 and fit["aic"] < uni["aic"]
    assert "3PL beside it" in result.output and "AIC / BIC" in result.output


def test_a_pool_keeps_its_3pl_and_gains_the_bifactor_model(responses: Path, tmp_path: Path) -> None:
    items = _pool_items()
    pool = write_pool(tmp_path / "p", items)
    manifest = json.loads((pool / "pool.json").read_text())
    (pool / "pool.json").write_text(json.dumps({**manifest, "scenarios": SCENARIOS}))
    args = ["calibrate", str(responses), "--model", "bifactor", "--no-guessing"]
    result = runner.invoke(app, [*args, "--pool", str(pool), "--no-cross-fit"])
    assert result.exit_code == 0, result.output
    assert "mirt_params.csv" in result.output
    loaded = load_pool(pool)
    assert loaded.params is not None and loaded.params.model.value == "3pl"
    assert loaded.mirt is not None and loaded.mirt.factors == ("general", *SCENARIOS)
    entry = loaded.manifest.multidimensional
    assert entry is not None and entry.structure == "bifactor" and entry.fit is not None
    assert entry.fit["unidimensional"]["model"] == "3pl"
    validate = runner.invoke(app, ["pool", "validate", str(pool)])
    assert validate.exit_code == 0, validate.output
    info = runner.invoke(app, ["pool", "info", str(pool), "--json", str(tmp_path / "i.json")])
    assert info.exit_code == 0, info.output
    assert "Bifactor model (without lower" in info.output  # the title wraps to the table
    figures = json.loads((tmp_path / "i.json").read_text())["multidimensional"]
    assert [f["factor"] for f in figures["factors"]] == ["general", *SCENARIOS]
    assert [f["n_items"] for f in figures["factors"]] == [N_ITEMS, 8, 8, 8]
    # A later unidimensional calibration drops the model of the earlier answers.
    again = runner.invoke(app, ["calibrate", str(responses), "--pool", str(pool), "--no-cross-fit"])
    assert again.exit_code == 0, again.output
    assert not (pool / "mirt_params.csv").exists()
    assert load_pool(pool).mirt is None


def test_a_pool_whose_mirt_file_lacks_its_manifest_entry_is_refused(
    responses: Path, tmp_path: Path
) -> None:
    pool = write_pool(tmp_path / "p", [])
    (pool / "mirt_params.csv").write_text("item_id,factor,a_general,a_specific,d\n")
    result = runner.invoke(app, ["pool", "validate", str(pool)])
    assert result.exit_code != 0
    assert "mirt_params.csv: pool.json has no multidimensional entry" in result.output


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--model", "3pl", "--groups", "GROUPS"], "--groups names the specific factors"),
        (["--model", "bifactor"], "needs each item's scenario"),
        (["--model", "bifactor", "--groups", "GROUPS", "--group-column", "x"], "column"),
    ],
)
def test_bad_bifactor_requests_are_one_line(
    responses: Path, tmp_path: Path, extra: list[str], message: str
) -> None:
    groups = str(_groups_file(tmp_path))
    extra = [groups if x == "GROUPS" else x for x in extra]
    args = ["calibrate", str(responses), "--out", str(tmp_path / "o.csv"), *extra]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert message in result.output


def _bifactor_pool(responses: Path, tmp_path: Path, *extra: str) -> Path:
    items = _pool_items()
    pool = write_pool(tmp_path / "p", items)
    manifest = json.loads((pool / "pool.json").read_text())
    (pool / "pool.json").write_text(json.dumps({**manifest, "scenarios": SCENARIOS}))
    args = ["calibrate", str(responses), "--model", "bifactor", "--no-guessing"]
    result = runner.invoke(app, [*args, "--pool", str(pool), *extra])
    assert result.exit_code == 0, result.output
    return pool


def test_the_cross_fit_of_a_bifactor_pool_includes_the_bifactor_design(
    responses: Path, tmp_path: Path
) -> None:
    pool = _bifactor_pool(responses, tmp_path, "--cross-fit", "2", "--cross-fit-lengths", "12")
    designs = load_pool(pool).manifest.design_errors
    assert designs is not None and set(designs) == {"irt", "mixture", "low-rank", "bifactor"}
    bifactor = designs["bifactor"]
    assert bifactor.policy == "bifactor" and len(bifactor.errors["12"]) == 400
    assert bifactor.scenario_errors is not None
    assert set(bifactor.scenario_errors["12"]) == set(SCENARIOS)
    # Errors are of accuracies: a design that predicted nothing would be off by ~0.5.
    assert float(np.mean(np.abs(bifactor.errors["12"]))) < 0.1


def test_assess_prints_the_profile_of_a_bifactor_pool(responses: Path, tmp_path: Path) -> None:
    pool = _bifactor_pool(responses, tmp_path, "--no-cross-fit")
    out = tmp_path / "result.json"
    args = ["assess", "--pool", str(pool), "--model", "replay:" + str(responses) + "#m3"]
    report = tmp_path / "report"
    options = ["--length", "12", "--design", "bifactor", "--out", str(out), "--report", str(report)]
    result = runner.invoke(app, [*args, *options])
    assert result.exit_code == 0, result.output
    page = (report / "index.html").read_text()
    assert "<h2>Profile</h2>" in page and "bifactor model: general factor" in page
    profile = page.split("<h2>Profile</h2>")[1].split("</figure>")[0]
    assert len(profile.split('src="data:image/png;base64,')[1].split('"')[0]) > 1000
    saved = json.loads(out.read_text())
    assert saved["settings"]["design"] == "bifactor" and saved["n_items"] == 12
    profile = saved["profile"]
    assert [f["factor"] for f in profile["factors"]] == ["general", *SCENARIOS]
    assert all(0 < f["sd"] <= 1.0 for f in profile["factors"])  # the prior's sd is 1
    assert profile["general_rank"]["of"] == 401 and profile["total_rank"]["of"] == 401
    assert 1 <= profile["general_rank"]["position"] <= 401
    assert set(saved["scenarios"]) == set(SCENARIOS)
    assert "bifactor profile: general " in result.output
    assert "factor score" in result.output
    to = ["--out", str(out)]
    for criterion in ("general", "profile"):  # a bifactor's specifics are its scenarios
        chosen = runner.invoke(
            app,
            [*args, "--length", "12", "--design", "bifactor", "--criterion", criterion, *to],
        )
        assert chosen.exit_code == 0, chosen.output
        assert json.loads(out.read_text())["settings"]["criterion"] == criterion
    # Without a multidimensional model the bifactor design is refused in one line.
    plain = runner.invoke(app, ["calibrate", str(responses), "--pool", str(pool), "--no-cross-fit"])
    assert plain.exit_code == 0, plain.output
    refused = runner.invoke(app, [*args, "--length", "12", "--design", "bifactor"])
    assert refused.exit_code == 2 and "no multidimensional model" in refused.output


def test_model_mirt_fits_exploratory_or_correlated_factors(responses: Path, tmp_path: Path) -> None:
    out, report = tmp_path / "m.csv", tmp_path / "fit.json"
    args = ["calibrate", str(responses), "--model", "mirt", "--no-guessing", "--out", str(out)]
    result = runner.invoke(app, [*args, "--dims", "2", "--report", str(report)])
    assert result.exit_code == 0, result.output
    assert out.read_text().splitlines()[0] == "item_id,a1,a2,d,c"
    fit = json.loads(report.read_text())
    assert fit["model"] == "mirt" and fit["factors"] == ["F1", "F2"]
    assert fit["n_parameters"] == 3 * N_ITEMS - 1  # the last item's a2 is fixed at 0
    assert fit["loglik"] > fit["unidimensional"]["loglik"]
    groups = ["--groups", str(_groups_file(tmp_path)), "--report", str(report)]
    correlated = runner.invoke(app, [*args, *groups])
    assert correlated.exit_code == 0, correlated.output
    fit = json.loads(report.read_text())
    assert fit["factors"] == SCENARIOS
    # One factor per scenario, each item on its own: the file leaves the others empty.
    first = out.read_text().splitlines()[1].split(",")
    assert first[1] != "" and first[2] == "" and first[3] == ""
    refused = runner.invoke(app, [*args, "--dims", "2", "--groups", str(_groups_file(tmp_path))])
    assert refused.exit_code == 2 and "--dims K (exploratory) or --groups" in refused.output
    bad = runner.invoke(app, ["calibrate", str(responses), "--out", str(out), "--dims", "2"])
    assert bad.exit_code == 2 and "--dims is the number of factors" in bad.output


def test_a_mirt_pool_runs_its_scenario_design(responses: Path, tmp_path: Path) -> None:
    items = _pool_items()
    pool = write_pool(tmp_path / "p", items)
    args = ["calibrate", str(responses), "--model", "mirt", "--pool", str(pool)]
    result = runner.invoke(app, [*args, "--cross-fit", "2", "--cross-fit-lengths", "12"])
    assert result.exit_code == 0, result.output
    loaded = load_pool(pool)
    assert loaded.mirt is not None and loaded.mirt.factors == tuple(SCENARIOS)
    entry = loaded.manifest.multidimensional
    assert entry is not None and entry.structure == "confirmatory" and abs(entry.offset) < 0.05
    # The factors of these data correlate through the general factor only: 0.4-0.6.
    off_diagonal = np.asarray(entry.correlation)[np.triu_indices(3, 1)]
    assert np.all((off_diagonal > 0.2) & (off_diagonal < 0.8))
    designs = loaded.manifest.design_errors
    assert designs is not None and "mirt" in designs
    assert float(np.mean(np.abs(designs["mirt"].errors["12"]))) < 0.1
    out = tmp_path / "r.json"
    assess = ["assess", "--pool", str(pool), "--model", "replay:" + str(responses) + "#m7"]
    ran = runner.invoke(app, [*assess, "--length", "12", "--design", "mirt", "--out", str(out)])
    assert ran.exit_code == 0, ran.output
    saved = json.loads(out.read_text())
    assert saved["settings"]["design"] == "mirt"
    assert [f["factor"] for f in saved["profile"]["factors"]] == SCENARIOS
    assert "general_rank" not in saved["profile"] or saved["profile"]["general_rank"] is None
    wrong = runner.invoke(app, [*assess, "--length", "12", "--design", "bifactor"])
    assert wrong.exit_code == 2 and "holds a mirt model: use --design mirt" in wrong.output
    # Each criterion is recorded and picks its own items from the same answers.
    assert saved["settings"]["criterion"] is None  # the default: d-optimal
    asked = {"default": [i["id"] for i in saved["items"]]}
    to = ["--out", str(out)]
    for criterion in ("d-optimal", "profile"):
        ran = runner.invoke(
            app,
            [*assess, "--length", "12", "--design", "mirt", "--criterion", criterion, *to],
        )
        assert ran.exit_code == 0, ran.output
        saved = json.loads(out.read_text())
        assert saved["settings"]["criterion"] == criterion
        asked[criterion] = [i["id"] for i in saved["items"]]
    assert asked["d-optimal"] == asked["default"]
    assert asked["profile"] != asked["default"]
    no_general = runner.invoke(app, [*assess, "--design", "mirt", "--criterion", "general"])
    assert no_general.exit_code == 2 and "needs a model with a general factor" in no_general.output
    not_irt = runner.invoke(app, [*assess, "--design", "irt", "--criterion", "kl"])
    assert not_irt.exit_code == 2
    assert "--criterion kl is for the bifactor and mirt designs" in not_irt.output


def test_a_pools_criterion_is_cross_fitted_recorded_and_assessed_by(
    responses: Path, tmp_path: Path
) -> None:
    pool = write_pool(tmp_path / "p", _pool_items())
    args = ["calibrate", str(responses), "--model", "mirt", "--pool", str(pool)]
    fitted = ["--cross-fit", "2", "--cross-fit-lengths", "12", "--criterion", "d-optimal"]
    result = runner.invoke(app, [*args, *fitted])
    assert result.exit_code == 0, result.output
    loaded = load_pool(pool)
    entry = loaded.manifest.multidimensional
    assert entry is not None and entry.criterion == "d-optimal"
    designs = loaded.manifest.design_errors
    assert designs is not None and float(np.mean(np.abs(designs["mirt"].errors["12"]))) < 0.1
    out = tmp_path / "r.json"
    assess = ["assess", "--pool", str(pool), "--model", "replay:" + str(responses) + "#m7"]
    assess += ["--length", "12", "--design", "mirt", "--out", str(out)]
    ran = runner.invoke(app, assess)
    assert ran.exit_code == 0, ran.output
    assert json.loads(out.read_text())["settings"]["criterion"] == "d-optimal"
    assert "note:" not in ran.output
    other = runner.invoke(app, [*assess, "--criterion", "kl"])
    assert other.exit_code == 0, other.output
    assert "cross-fitted under --criterion d-optimal" in other.output
    assert json.loads(out.read_text())["settings"]["criterion"] == "kl"
    plain = ["calibrate", str(responses), "--pool", str(pool), "--criterion", "kl"]
    refused = runner.invoke(app, plain)
    assert refused.exit_code == 2 and "--criterion is how the bifactor or mirt" in refused.output
