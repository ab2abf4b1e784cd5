"""``cat.calibrate`` in memory: every model ``cat calibrate`` takes, fitted to responses
held in memory, returns its parameters, abilities and report and writes nothing; the
same data from a file give the same fit; files are written only when asked."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import cat
from cat.errors import CatError
from cat.pools.loading import read_pool_questions
from irt.bifactor_model import BifactorParams, group_codes
from irt.continuous import ContinuousParams
from irt.continuous_responses import ContinuousResponses
from irt.mixed import MixedResponses
from irt.polytomous_responses import PolytomousResponses
from irt.responses import ResponseMatrix
from irt.simulate import random_params, simulate_responses
from itempool import PoolItem, load_pool
from itempool.formats.mixed_responses import read_mixed_responses
from itempool.formats.responses import (
    read_responses,
    read_scored_responses,
    write_jsonl,
    write_scored_jsonl,
)
from tests.cat.pools.test_graded_calibration import N_BINARY, N_GRADED, simulate, truth
from tests.cat.scored_pools import make_scored_pool
from tests.cli.mixed_pool_files import write_mixed_pool
from tests.synth.pools import write_pool

N_SUBJECTS = 300
SCENARIOS = ("dosing", "ethics", "triage")


@pytest.fixture(scope="module")
def binary() -> ResponseMatrix:
    rng = np.random.default_rng(0)
    return simulate_responses(random_params(20, rng, "3pl"), rng.normal(size=N_SUBJECTS), rng)


@pytest.fixture(scope="module")
def two_factors() -> tuple[ResponseMatrix, dict[str, str]]:
    """0/1 answers to 18 items with a specific factor per scenario, and the scenarios."""
    rng = np.random.default_rng(5)
    n = 18
    scenario = [SCENARIOS[j % 3] for j in range(n)]
    codes, names = group_codes(scenario)
    truth_params = BifactorParams(
        item_ids=tuple(f"i{j:03d}" for j in range(n)),
        a_general=rng.uniform(0.8, 1.6, n),
        a_specific=np.full(n, 1.2),
        d=rng.normal(0, 1, n),
        group=codes,
        groups=names,
    )
    g = rng.normal(size=(N_SUBJECTS, 1))
    s = rng.normal(size=(N_SUBJECTS, len(names)))
    p = truth_params.probability(g, s[:, codes])
    values = (rng.random(p.shape) < p).astype(np.int8)
    subjects = tuple(f"m{k}" for k in range(N_SUBJECTS))
    matrix = ResponseMatrix(values=values, subject_ids=subjects, item_ids=truth_params.item_ids)
    return matrix, dict(zip(truth_params.item_ids, scenario, strict=True))


@pytest.fixture(scope="module")
def scores() -> PolytomousResponses:
    return simulate(truth(), N_SUBJECTS)[0]


@pytest.fixture(scope="module")
def similarity() -> ContinuousResponses:
    rng = np.random.default_rng(4)
    params = ContinuousParams.create(
        "beta",
        rng.lognormal(0.0, 0.3, 10),
        rng.normal(0, 1, 10),
        [2.0] * 10,
        item_ids=[f"sim{j:02d}" for j in range(10)],
    )
    values = params.simulate(rng.normal(size=N_SUBJECTS), rng)
    subjects = [f"m{k:04d}" for k in range(N_SUBJECTS)]  # as ``simulate``'s scores
    return ContinuousResponses.from_array(values, subjects, params.item_ids)


@pytest.fixture
def nowhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working folder, which a calibration in memory must leave empty."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _held_in_memory(outcome: cat.CalibrationOutcome, folder: Path, n_items: int) -> None:
    """What every in-memory fit returns, with nothing written."""
    assert outcome.written == [] and list(folder.iterdir()) == []
    assert outcome.params.n_items == n_items
    assert outcome.abilities is not None
    assert len(outcome.abilities.theta) == outcome.report.n_subjects == N_SUBJECTS
    assert np.all(np.isfinite(outcome.abilities.theta))
    assert np.all(outcome.abilities.se > 0)
    dump = outcome.model_dump(mode="json")
    assert dump == json.loads(outcome.model_dump_json())
    assert dump["input"] == "(in memory)"
    assert dump["n_items"] == n_items and np.isfinite(dump["loglik"])


@pytest.mark.parametrize("model", ["1pl", "2pl", "3pl", "4pl"])
def test_binary_models(binary: ResponseMatrix, nowhere: Path, model: str) -> None:
    outcome = cat.calibrate(binary, model=model, max_iter=100)
    _held_in_memory(outcome, nowhere, 20)
    assert outcome.family == "binary" and outcome.report.model == model
    params = outcome.params
    assert params.family == "binary" and params.model.value == model
    assert params.item_ids == binary.item_ids
    true_b = random_params(20, np.random.default_rng(0), "3pl").b
    assert np.corrcoef(params.b, true_b)[0, 1] > 0.8  # recovered, whatever the model
    assert outcome.mirt is None and outcome.cross_fit is None


@pytest.mark.parametrize(
    ("model", "settings", "factors"),
    [
        ("bifactor", {}, ["general", *SCENARIOS]),
        ("mirt", {"dims": 2}, ["F1", "F2"]),
        ("mirt", {}, list(SCENARIOS)),
    ],
)
def test_multidimensional_models(
    two_factors: tuple[ResponseMatrix, dict[str, str]],
    nowhere: Path,
    model: str,
    settings: dict[str, object],
    factors: list[str],
) -> None:
    matrix, groups = two_factors
    if "dims" not in settings:
        settings = {**settings, "groups": groups}
    outcome = cat.calibrate(matrix, model=model, guessing=False, max_iter=200, **settings)  # type: ignore[arg-type]
    _held_in_memory(outcome, nowhere, 18)
    assert outcome.family == "multidimensional"
    report = outcome.model_dump(mode="json")
    assert report["model"] == model and report["factors"] == factors
    assert report["unidimensional"]["model"] == "3pl"
    assert outcome.params.family == "binary"  # the 3PL beside it, as a pool keeps it
    assert outcome.mirt is not None and list(outcome.mirt.factors) == factors
    assert outcome.mirt.item_ids == matrix.item_ids


@pytest.mark.parametrize("model", ["graded", "gpcm", "sequential"])
def test_graded_models(scores: PolytomousResponses, nowhere: Path, model: str) -> None:
    outcome = cat.calibrate(scores, model=model, standard_errors="none")
    _held_in_memory(outcome, nowhere, N_GRADED + N_BINARY)
    assert outcome.family == "graded"
    report = outcome.model_dump(mode="json")
    assert report["item_types"] == {"2PL": N_BINARY, model: N_GRADED}
    assert outcome.params.family == "polytomous"
    assert np.corrcoef(outcome.params.a, truth().a)[0, 1] > 0.9


def test_a_graded_fit_reports_every_cycle(scores: PolytomousResponses) -> None:
    heard: list[tuple[float, str]] = []
    outcome = cat.calibrate(
        scores,
        model="graded",
        standard_errors="none",
        score_subjects=False,
        progress=lambda done, what: heard.append((done, what)),
    )
    cycles = [(done, what) for done, what in heard if what.startswith("cycle ")]
    assert len(cycles) == outcome.report.n_iter
    assert cycles[0][1].startswith("cycle 1  loglik ") and "Δ " in cycles[0][1]
    assert all(0.0 <= done <= 1.0 for done, _ in cycles)


@pytest.mark.parametrize("model", ["crm", "beta"])
def test_continuous_models(similarity: ContinuousResponses, nowhere: Path, model: str) -> None:
    outcome = cat.calibrate(similarity, model=model, standard_errors="none")
    _held_in_memory(outcome, nowhere, 10)
    assert outcome.family == "continuous"
    assert outcome.params.family == "continuous"
    assert {str(t) for t in outcome.params.item_types} == {model}
    assert outcome.model_dump(mode="json")["n_clipped"] >= 0


def test_mixed_scores_beside_continuous_ones(
    scores: PolytomousResponses, similarity: ContinuousResponses, nowhere: Path
) -> None:
    outcome = cat.calibrate(scores, model="graded", continuous=similarity, standard_errors="none")
    _held_in_memory(outcome, nowhere, N_GRADED + N_BINARY + 10)
    assert outcome.family == "mixed" and outcome.params.family == "mixed"
    report = outcome.model_dump(mode="json")
    assert report["model"] in ("graded+crm", "graded+beta")
    assert set(report["continuous_model"]["fits"]) == {"crm", "beta"}
    assert report["continuous_input"] == "(in memory)"
    # A MixedResponses of both is the same fit.
    both = MixedResponses(scores, similarity)
    again = cat.calibrate(both, model="graded", continuous_model="beta", standard_errors="none")
    assert again.model_dump(mode="json")["continuous_model"]["fits"]["beta"] == pytest.approx(
        report["continuous_model"]["fits"]["beta"]
    )
    assert again.model_dump(mode="json")["continuous_input"] is None


def test_a_file_and_its_data_give_the_same_fit(
    binary: ResponseMatrix, scores: PolytomousResponses, tmp_path: Path
) -> None:
    write_jsonl(binary, tmp_path / "binary.jsonl")
    write_scored_jsonl(scores, tmp_path / "scores.jsonl")
    cases = [
        (read_responses(tmp_path / "binary.jsonl"), tmp_path / "binary.jsonl", {"model": "2pl"}),
        (
            read_scored_responses(tmp_path / "scores.jsonl"),
            tmp_path / "scores.jsonl",
            {"model": "gpcm", "standard_errors": "none"},
        ),
    ]
    volatile = {"seconds", "created", "input"}
    for data, path, settings in cases:
        held = cat.calibrate(data, **settings)  # type: ignore[arg-type]
        read = cat.calibrate(path, **settings)  # type: ignore[arg-type]
        first, second = held.model_dump(mode="json"), read.model_dump(mode="json")
        assert {k: v for k, v in first.items() if k not in volatile} == {
            k: v for k, v in second.items() if k not in volatile
        }
        assert (first["input"], second["input"]) == ("(in memory)", str(path))
        np.testing.assert_array_equal(held.params.a, read.params.a)
        assert held.abilities is not None and read.abilities is not None
        np.testing.assert_array_equal(held.abilities.theta, read.abilities.theta)


def test_only_the_files_asked_for_are_written(binary: ResponseMatrix, tmp_path: Path) -> None:
    report = tmp_path / "fit.json"
    outcome = cat.calibrate(binary, model="2pl", report=report)
    assert outcome.written == [report] and sorted(tmp_path.iterdir()) == [report]
    assert json.loads(report.read_text()) == outcome.model_dump(mode="json")
    theta = tmp_path / "theta.csv"
    outcome = cat.calibrate(binary, model="2pl", abilities=theta)
    assert outcome.written == [theta] and sorted(tmp_path.iterdir()) == [report, theta]
    assert outcome.abilities is not None
    assert len(theta.read_text().splitlines()) == 1 + len(outcome.abilities.theta)


def test_answers_in_memory_calibrate_a_pool(binary: ResponseMatrix, tmp_path: Path) -> None:
    items = [
        PoolItem(id=i, question=f"Which in {i}?", options={"A": "a", "B": "b"}, answer="A")
        for i in binary.item_ids
    ]
    pool = write_pool(tmp_path / "pool", items)
    outcome = cat.calibrate(binary, model="2pl", pool=pool, abilities=tmp_path / "theta.csv")
    names = ["params.csv", "reference.jsonl", "reference_answers.csv.gz", "low_rank.csv"]
    assert outcome.written == [
        tmp_path / "theta.csv",
        *(pool / n for n in names),
        pool / "pool.json",
    ]
    loaded = load_pool(pool)
    assert loaded.params is not None and loaded.params.item_ids == binary.item_ids
    np.testing.assert_array_equal(loaded.params.b, outcome.params.b)
    assert loaded.manifest.calibration is not None
    assert loaded.manifest.calibration["source"] == "responses"  # no file to name
    assert outcome.abilities is not None
    assert [r.theta for r in loaded.references] == outcome.abilities.theta.tolist()


def test_scores_in_memory_calibrate_a_pool_on_its_scales(tmp_path: Path) -> None:
    pool = make_scored_pool(tmp_path / "pool", n_items=15, n_refs=12)
    read = read_scored_responses(tmp_path / "scores.jsonl")
    # Nobody reaches the first item's top score: on its own scale it has one score less.
    values = read.as_float()
    top = read.n_categories[0] - 1
    values[:, 0] = np.where(values[:, 0] == top, top - 1, values[:, 0])
    scores = PolytomousResponses.from_array(values, read.subject_ids, read.item_ids)
    assert scores.n_categories[0] == top
    path = tmp_path / "lowered.jsonl"
    write_scored_jsonl(scores, path)
    by_file = cat.calibrate(path, model="graded", pool=pool, standard_errors="none")
    from_file = (pool / "params.csv").read_text()
    held = cat.calibrate(scores, model="graded", pool=pool, standard_errors="none")
    assert (pool / "params.csv").read_text() == from_file  # the pool's scales, as from the file
    assert held.params.family == "polytomous" and by_file.params.family == "polytomous"
    assert held.params.n_categories[0] == by_file.params.n_categories[0] == top + 1


def test_mixed_scores_in_memory_calibrate_a_mixed_pool(tmp_path: Path) -> None:
    files = write_mixed_pool(tmp_path, n_models=40)
    pool, answers = files["pool"], files["answers"]
    settings = {"model": "graded", "pool": pool, "standard_errors": "none"}
    by_file = cat.calibrate(answers, continuous_model="beta", **settings)  # type: ignore[arg-type]
    tables = {name: (pool / name).read_text() for name in ("params.csv", "continuous_params.csv")}
    questions = read_pool_questions(pool)
    data = read_mixed_responses(
        answers,
        continuous=[item.id for item in questions.items if item.continuous],
        n_categories={i.id: i.max_score + 1 for i in questions.items if not i.continuous},
    )
    held = cat.calibrate(data, continuous_model="beta", **settings)  # type: ignore[arg-type]
    assert held.family == by_file.family == "mixed"
    assert {name: (pool / name).read_text() for name in tables} == tables
    assert held.model_dump(mode="json")["loglik"] == by_file.model_dump(mode="json")["loglik"]


@pytest.mark.parametrize(
    ("data", "model", "message"),
    [
        ("scores", "3pl", "responses must be a path or a ResponseMatrix (0/1 answers)"),
        ("binary", "graded", "responses must be a path or a PolytomousResponses"),
        ("binary", "beta", "responses must be a path or a ContinuousResponses"),
        ("binary", "nominal", "responses must be a path or a PolytomousResponses"),
        ("binary", "rasch", "unknown model 'rasch'; choose from 1pl"),
    ],
)
def test_data_of_another_family_are_refused(
    request: pytest.FixtureRequest, data: str, model: str, message: str
) -> None:
    with pytest.raises(CatError, match=message.replace("(", r"\(").replace(")", r"\)")):
        cat.calibrate(request.getfixturevalue(data), model=model)


def test_continuous_scores_go_with_a_scored_model(
    binary: ResponseMatrix, similarity: ContinuousResponses
) -> None:
    with pytest.raises(CatError, match="continuous goes with model graded"):
        cat.calibrate(binary, model="3pl", continuous=similarity)


def test_the_torch_path_gives_the_numpy_fit_and_the_report_says_where_it_ran(
    binary: ResponseMatrix,
) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    host = cat.calibrate(binary, model="3pl", score_subjects=False)
    torch_cpu = cat.calibrate(binary, model="3pl", score_subjects=False, device="torch:cpu")
    assert host.report.settings["device"] == "cpu"
    assert torch_cpu.report.settings["device"] == "torch:cpu"
    np.testing.assert_allclose(torch_cpu.params.b, host.params.b, atol=1e-6)


@pytest.mark.parametrize("model", ["graded", "gpcm"])
def test_scored_models_run_on_the_torch_path_too(scores: PolytomousResponses, model: str) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    host = cat.calibrate(scores, model=model, score_subjects=False)
    torch_cpu = cat.calibrate(scores, model=model, score_subjects=False, device="torch:cpu")
    assert host.report.settings["device"] == "cpu"
    assert torch_cpu.report.settings["device"] == "torch:cpu"
    assert torch_cpu.report.loglik == pytest.approx(host.report.loglik, rel=1e-9)
    np.testing.assert_allclose(torch_cpu.params.d, host.params.d, atol=1e-5)


@pytest.mark.parametrize(
    ("model", "options", "message"),
    [
        ("crm", {}, "the torch path fits model 1pl, 2pl, 3pl, 4pl, graded, gpcm"),
        ("bifactor", {}, "model bifactor runs on the cpu"),
        ("3pl", {"method": "bayes"}, "method bayes runs on the cpu"),
    ],
)
def test_a_device_the_fit_cannot_run_on_is_refused_before_reading(
    nowhere: Path, model: str, options: dict[str, str], message: str
) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    with pytest.raises(CatError, match=message):
        cat.calibrate(nowhere / "absent.jsonl", model=model, device="torch:cpu", **options)


def test_an_unknown_device_is_refused_by_name(binary: ResponseMatrix) -> None:
    with pytest.raises(CatError, match="unknown device 'tpu'"):
        cat.calibrate(binary, device="tpu")
    with pytest.raises(CatError, match="device must be a string"):
        cat.calibrate(binary, device=0)  # type: ignore[arg-type]
