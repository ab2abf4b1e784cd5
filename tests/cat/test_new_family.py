"""The proof that a new item model is one module and one registry line: the family of
``tests/plugins/slipping.py`` (a 2PL that tops out at 95%), written as a user would
outside the project and registered from here, is fitted on one θ and on a bifactor
structure, scores abilities, and goes through ``cat calibrate --model slip2pl --pool``,
``cat assess`` and ``cat validate --model slip2pl`` with no other file changed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cat.cli.app import app
from irt.families import FAMILIES, register
from irt.mirt_polytomous_em import BifactorPolytomousCalibrator
from irt.polytomous import ItemType, PolytomousParams
from irt.polytomous_em import PolytomousCalibrator
from irt.polytomous_responses import PolytomousResponses
from irt.polytomous_scoring import polytomous_scores
from itempool.formats.polytomous_params import read_polytomous_params
from itempool.formats.responses import write_scored_jsonl
from tests.cat.scored_pools import items_of, simulate_scores
from tests.plugins.slipping import SLIP, SlippingTwoPL

runner = CliRunner()


@pytest.fixture(scope="module", autouse=True)
def slipping() -> ItemType:
    register(SlippingTwoPL())
    return ItemType("slip2pl")


def _params(n_items: int, seed: int) -> PolytomousParams:
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.8, 2.0, n_items)
    d = [[float(x)] for x in rng.normal(0.3, 1.0, n_items)]
    ids = [f"q{j:03d}" for j in range(n_items)]
    return PolytomousParams.create(["slip2PL"] * n_items, a, d, [0.0] * n_items, item_ids=ids)


def _responses(params: PolytomousParams, n: int, seed: int) -> PolytomousResponses:
    return simulate_scores(params, _abilities(n, seed), seed + 1, [f"m{k:04d}" for k in range(n)])


def _abilities(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=n)


def test_the_registry_knows_the_family_by_name_in_any_case(slipping: ItemType) -> None:
    assert FAMILIES["slip2PL"] is slipping.family and slipping is ItemType("SLIP2PL")
    assert slipping.binary and slipping in ItemType.known()
    register(SlippingTwoPL())  # again: nothing changes
    with pytest.raises(ValueError, match="taken by"):
        register(type("Other", (SlippingTwoPL,), {})())


def test_one_theta_fit_recovers_the_family_and_beats_the_2pl_on_its_data() -> None:
    truth = _params(20, 0)
    data = _responses(truth, 1500, 1)
    fit = PolytomousCalibrator("slip2PL").fit(data)
    assert fit.converged_ and set(fit.params_.item_types) == {ItemType("slip2PL")}
    assert np.corrcoef(fit.params_.a, truth.a)[0, 1] > 0.9
    assert np.abs(fit.params_.d[:, 0] - truth.d[:, 0]).mean() < 0.15
    # The 2PL cannot reach the 95% ceiling the data have.
    assert fit.loglik_ > PolytomousCalibrator("2PL").fit(data).loglik_ + 3
    # P(right) at a very able examinee is the family's ceiling, not 1.
    top = np.exp(fit.params_.log_probs(np.array([8.0])))[0, :, 1]
    assert np.allclose(top, 1 - SLIP, atol=5e-3)
    scores = polytomous_scores(data, fit.params_)
    assert np.corrcoef(scores.theta, _abilities(1500, 1))[0, 1] > 0.85
    assert np.all(scores.sd > 0)


def test_a_bifactor_fit_estimates_the_family_on_its_factors() -> None:
    # Answers from the family on a general factor and one specific factor per half.
    rng = np.random.default_rng(2)
    n, n_items = 1500, 12
    specific = [j % 2 for j in range(n_items)]
    general, local = rng.uniform(1.0, 2.0, n_items), np.full(n_items, 1.3)
    d = rng.normal(0.3, 0.8, n_items)
    theta, s = rng.normal(size=n), rng.normal(size=(n, 2))
    eta = theta[:, None] * general + s[:, specific] * local + d
    right = rng.random((n, n_items)) < (1 - SLIP) / (1 + np.exp(-eta))
    data = PolytomousResponses.from_array(right.astype(int))
    fit = BifactorPolytomousCalibrator(specific, "slip2PL", max_iter=300).fit(data)
    assert fit.converged_ and {t.value for t in fit.params_.item_types} == {"slip2PL"}
    slopes = fit.params_.slopes
    assert np.corrcoef(slopes[:, 0], general)[0, 1] > 0.5
    on_own = np.abs(slopes[np.arange(n_items), [1 + g for g in specific]])
    assert 0.7 < on_own[::2].mean() < 1.9 and 0.7 < on_own[1::2].mean() < 1.9
    one_theta = PolytomousCalibrator("slip2PL").fit(data)
    # The bifactor model nests the one-θ model, and these data have specific factors.
    assert fit.loglik_ > one_theta.loglik_ + 10


def test_cat_calibrates_assesses_and_validates_with_the_family(tmp_path: Path) -> None:
    truth = _params(40, 4)
    pool = tmp_path / "pool"
    pool.mkdir()
    manifest = {"name": "slip", "version": "1", "language": "en", "scenarios": ["a", "b"]}
    (pool / "pool.json").write_text(json.dumps(manifest), encoding="utf-8")
    records = [
        item.model_copy(update={"scenario": "ab"[j % 2]}) for j, item in enumerate(items_of(truth))
    ]
    lines = [item.model_dump_json(exclude_defaults=True) for item in records]
    (pool / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    answers = tmp_path / "answers.jsonl"
    write_scored_jsonl(_responses(truth, 60, 5), answers)

    args = ["calibrate", str(answers), "--model", "slip2pl", "--pool", str(pool)]
    done = runner.invoke(app, [*args, "--cross-fit", "3", "--cross-fit-lengths", "10,20"])
    assert done.exit_code == 0, done.output
    assert "2PL with a 5% slip calibration" in done.output
    stored = read_polytomous_params(pool / "params.csv")
    assert {t.value for t in stored.item_types} == {"slip2PL"}
    assert json.loads((pool / "pool.json").read_text())["calibration"]["model"] == "slip2pl"

    out = tmp_path / "result.json"
    assessed = runner.invoke(
        app,
        ["assess", "--pool", str(pool), "--model", "sim:0.5", "--length", "20", "--out", str(out)],
    )
    assert assessed.exit_code == 0, assessed.output
    result = json.loads(out.read_text())
    accuracy = result["predicted_accuracy"]
    assert (
        result["n_items"] == 20
        and 0 <= accuracy["low"] <= accuracy["value"] <= accuracy["high"] <= 1
    )

    report = tmp_path / "valid.json"
    args = ["validate", str(answers), "--model", "slip2pl", "--lengths", "10", "--out", str(report)]
    validated = runner.invoke(app, [*args, "--holdout", "0.25", "--policies", "mfi"])
    assert validated.exit_code == 0, validated.output
    assert json.loads(report.read_text())["settings"]["model"] == "slip2pl"


def test_an_unknown_model_is_refused_with_the_known_ones(tmp_path: Path) -> None:
    answers = tmp_path / "answers.jsonl"
    write_scored_jsonl(_responses(_params(5, 6), 20, 7), answers)
    result = runner.invoke(app, ["calibrate", str(answers), "--model", "slip3pl", "--out", "p.csv"])
    assert result.exit_code == 2
    assert "unknown model 'slip3pl'" in result.output and "graded" in result.output
