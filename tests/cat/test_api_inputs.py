"""What the public API (``import cat``) takes: paths as str, a pool loaded or as its
folder, and bad input refused as one ``CatError`` that names the argument."""

from __future__ import annotations

import inspect
import json
import math
import typing
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
from typer.testing import CliRunner

import cat
from cat.cli.app import app
from cat.engine.registry import DEFAULT_CONTENT_BALANCING
from irt.simulate import random_params, simulate_responses
from itempool import LoadedPool, PoolItem
from itempool.formats.responses import write_jsonl
from tests.synth.pools import write_pool

ROOT = Path(__file__).resolve().parents[2]
DEMO_EN = ROOT / "item_pools" / "demo-en"
EXAMPLES = ROOT / "examples" / "responses.jsonl"
N_ITEMS, N_SUBJECTS = 40, 60


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with an uncalibrated pool of 40 items in two scenarios and 60 subjects'
    answers to them (responses.jsonl)."""
    tmp = tmp_path_factory.mktemp("api")
    items = [
        PoolItem(
            id=f"i{k:03d}",
            scenario=("dosing", "units")[k % 2],
            question=f"Question {k}?",
            options={"A": "a", "B": "b"},
            answer="A",
        )
        for k in range(N_ITEMS)
    ]
    write_pool(tmp / "pool", items)
    rng = np.random.default_rng(0)
    params = replace(random_params(N_ITEMS, rng, "2pl"), item_ids=tuple(item.id for item in items))
    data = simulate_responses(params, rng.normal(size=N_SUBJECTS), rng)
    data = replace(data, subject_ids=tuple(f"m{k:02d}" for k in range(N_SUBJECTS)))
    write_jsonl(data, tmp / "responses.jsonl")
    return tmp


@pytest.fixture(scope="module")
def demo() -> LoadedPool:
    return cat.load_pool(DEMO_EN)


def _dumps(result: Any) -> dict[str, Any]:
    """The result's ``model_dump(mode="json")``, checked to be JSON."""
    dumped = result.model_dump(mode="json")
    assert isinstance(dumped, dict) and json.loads(json.dumps(dumped)) == dumped
    return dumped


def test_every_path_argument_takes_a_str_and_every_result_dumps(
    files: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each public function called with str paths (relative ones, as in a notebook);
    each command's result has ``model_dump(mode="json")``, the file the command writes."""
    monkeypatch.chdir(tmp_path)
    responses, pool_dir = str(files / "responses.jsonl"), str(tmp_path / "pool")
    write_pool(Path(pool_dir), cat.load_pool(str(files / "pool")).items)  # a copy to write
    # The report of the defect: AttributeError: 'str' object has no attribute 'parent'.
    outcome = cat.calibrate(
        responses,
        model="1pl",
        out="p1.csv",
        report="report.json",
        abilities="abilities.csv",
        pool=pool_dir,
    )
    assert Path("p1.csv").is_file() and Path("abilities.csv").is_file()
    assert _dumps(outcome) == json.loads(Path("report.json").read_text(encoding="utf-8"))
    assert json.loads(outcome.model_dump_json()) == _dumps(outcome)
    outcome.write_json("again.json")
    assert json.loads(Path("again.json").read_text(encoding="utf-8")) == _dumps(outcome)

    pool = cat.load_pool(pool_dir)
    assert pool.params is not None and pool.params.n_items == N_ITEMS
    summary = cat.summarize_pool(pool_dir)
    assert _dumps(summary) == _dumps(cat.summarize_pool(pool))
    assert _dumps(cat.validate_pool(pool_dir))["n_items"] == N_ITEMS
    assert _dumps(cat.diff_pools(pool_dir, pool))["items"]["shared"] == N_ITEMS
    fit = cat.fit_pool(pool_dir, responses)  # one path: not a sequence of letters
    assert _dumps(fit)["responses"] == [responses]
    new = cat.recalibrate_pool(responses, pool_dir, "v2")
    assert _dumps(new)["n_items"] == N_ITEMS and Path("v2", "pool.json").is_file()

    for params in ("p1.csv", ["p1.csv"], pool, pool.params):
        simulated = cat.simulate(params, examinees=4, length=5, seed=1)
        assert len(_dumps(simulated)["examinees"]) == 4
    result = cat.assess(pool_dir, cat.ReplayExaminee(responses, "m03"), length=10)
    assert _dumps(result)["n_items"] == 10
    index = cat.write_report(result, pool, "report")
    assert index == Path("report", "index.html") and index.is_file()
    assert cat.write_report(result, pool.params, Path("report2")).is_file()
    scenarios = str(files / "pool" / "items.jsonl")
    report = cat.validate(
        responses, lengths=[10], policies="mfi", model="1pl", scenarios=scenarios, repeats=1
    )
    assert _dumps(report)["settings"]["responses"] == responses


def test_simulate_and_write_report_take_the_loaded_pool(demo: LoadedPool, tmp_path: Path) -> None:
    """The report of the defect: TypeError: 'LoadedPool' object is not iterable."""
    result = cat.simulate(demo, examinees=50, length=30)
    assert len(result.examinees) == 50 and result.settings.params is None
    assert demo.params is not None
    same = cat.simulate(demo.params, examinees=50, length=30)
    assert [e.items for e in same.examinees] == [e.items for e in result.examinees]
    assessed = cat.assess(demo, cat.SimulatedExaminee(0.3, seed=2), length=20)
    assert cat.write_report(assessed, demo, tmp_path / "r").is_file()


@pytest.mark.parametrize("theta", ["high", "0.5", None, True, float("nan"), math.inf, -math.inf])
def test_a_simulated_examinee_needs_a_finite_number(theta: Any) -> None:
    with pytest.raises(cat.CatError, match=r"^theta must be a (finite )?number, got "):
        cat.SimulatedExaminee(theta)


def test_a_simulated_examinee_takes_numbers_of_numpy_and_a_whole_seed() -> None:
    assert cat.SimulatedExaminee(np.float32(0.5)).label == "sim:0.5"
    assert cat.SimulatedExaminee(np.int64(1), seed=np.int64(3)).theta == 1.0
    with pytest.raises(cat.CatError, match=r"^seed must be a whole number, got 'x'$"):
        cat.SimulatedExaminee(0.0, seed=cast(Any, "x"))
    with pytest.raises(cat.CatError, match=r"^seed must be at least 0, got -1$"):
        cat.SimulatedExaminee(0.0, seed=-1)


@pytest.mark.parametrize("spec", ["sim:nan", "sim:inf", "sim:-inf", "sim:abc", "sim:"])
def test_cat_assess_refuses_a_sim_theta_that_is_no_finite_number(spec: str) -> None:
    """Through the command line (as tests/cli/test_assess.py runs it): one line, exit 2."""
    result = CliRunner().invoke(app, ["assess", "--pool", str(DEMO_EN), "--model", spec])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: sim:THETA needs a ")
    assert repr(spec) in lines[0]


def _bad_inputs(demo: LoadedPool, tmp: Path) -> list[tuple[Callable[[], object], str]]:
    """(the call, the message it must give): bad input across the API."""
    api: Any = cat  # typed Any: these calls are wrong on purpose
    sim = cat.SimulatedExaminee(0.0)
    responses, out = str(EXAMPLES), tmp / "p.csv"
    replay = cat.ReplayExaminee(EXAMPLES, "m03")
    return [
        (lambda: api.assess(demo, sim, length=-5), "length must be at least 1, got -5"),
        (
            lambda: api.assess(demo, sim, lenght=20),
            "assess() takes no argument 'lenght' (did you mean 'length'?)",
        ),
        (lambda: api.compare(), "compare(): missing a required argument"),
        (
            lambda: api.compare(demo, replay, replay),
            "the same examinee: compare two models",
        ),
        (
            lambda: api.GenerationSettings(temperature=-1),
            "GenerationSettings: temperature: Input should be greater than or equal to 0",
        ),
        (
            lambda: api.GenerationSettings(temperature=2.5),
            "temperature: Input should be less than or equal to 2",
        ),
        (
            lambda: api.GenerationSettings(temprature=0.5),
            "temprature: Extra inputs are not permitted",
        ),
        (lambda: api.assess(demo, sim, length=2.5), "length must be a whole number, got 2.5"),
        (
            lambda: api.assess(demo, sim, length=10, min_length=20),
            "the minimum length (20) is above the maximum (10)",
        ),
        (lambda: api.assess(demo, sim, length=5, seed=-1), "seed must be at least 0, got -1"),
        (lambda: api.assess(demo, sim, se_target=0), "se_target must be positive, got 0"),
        (lambda: api.assess(demo, sim, batch_size=0), "batch_size must be at least 1, got 0"),
        (lambda: api.assess(demo, sim, estimator="ols"), "unknown estimator 'ols'"),
        (
            lambda: api.assess(demo, sim, content_balancing="no"),
            "content_balancing must be True or False, got 'no'",
        ),
        (lambda: api.assess(demo, "sim:0.5"), "examinee must be an Examinee"),
        (lambda: api.assess(42, sim), "pool must be a pool (cat.load_pool) or its folder, got int"),
        (lambda: api.load_pool(None), "pool_dir must be a path (str or os.PathLike), got None"),
        (
            lambda: api.simulate(demo, examinees="50", length=30),
            "examinees must be a whole number, got '50'",
        ),
        (lambda: api.simulate(demo, examinees=5, length=0), "length must be at least 1, got 0"),
        (
            lambda: api.simulate(demo, examinees=5, max_exposure=2),
            "max_exposure must be in (0, 1], got 2",
        ),
        (
            lambda: api.simulate(7, examinees=5),
            "params must be a path or a non-empty list of paths, got 7",
        ),
        (
            lambda: api.calibrate(responses, model="5pl", out=out),
            "unknown model '5pl'; choose from 1pl, 2pl, 3pl, 4pl",
        ),
        (lambda: api.calibrate(responses, method="ml", out=out), "unknown method 'ml'"),
        (
            lambda: api.calibrate(responses, out=out, max_iter=0),
            "max_iter must be at least 1, got 0",
        ),
        (
            lambda: api.calibrate(responses, out=out, tol=float("nan")),
            "tol must be a finite number, got nan",
        ),
        (lambda: api.calibrate(str(tmp / "none.jsonl"), out=out), "no such file"),
        (lambda: api.calibrate(responses, out=3), "out must be a path (str or os.PathLike), got 3"),
        (lambda: api.validate(responses, lengths=[0]), "lengths must be at least 1, got 0"),
        (
            lambda: api.validate(responses, lengths=[10], holdout="0.3"),
            "holdout must be a number, got '0.3'",
        ),
        (lambda: api.validate(responses, folds=1), "folds must be at least 2, got 1"),
        (
            lambda: api.fit_pool(DEMO_EN, []),
            "responses must be a path or a non-empty list of paths",
        ),
        (
            lambda: api.recalibrate_pool(responses, DEMO_EN, tmp / "v2", min_responses=0),
            "min_responses must be at least 1, got 0",
        ),
        (
            lambda: api.write_report(api.assess(demo, sim, length=3), "pool", tmp),
            "params must be the pool (cat.load_pool) or its item parameters, got str",
        ),
        (
            lambda: api.ReplayExaminee(None, "m1"),
            "path must be a path (str or os.PathLike), got None",
        ),
        (lambda: api.assess(demo, sim, on_step=1), "on_step must be a function or None, got 1"),
        (lambda: api.assess(demo, sim, base_url=8000), "base_url must be a str or None, got 8000"),
        (lambda: api.validate(responses, policies=5), "policies must be a list of policy names"),
        (
            lambda: api.write_report(api.assess(demo, sim, length=3), demo, EXAMPLES),
            "is a file: the report is a folder",
        ),
    ]


def test_bad_input_is_a_cat_error_naming_the_argument(demo: LoadedPool, tmp_path: Path) -> None:
    """No raw pydantic ValidationError, TypeError or AttributeError from bad input."""
    for call, message in _bad_inputs(demo, tmp_path):
        with pytest.raises(cat.CatError) as caught:
            call()
        assert message in str(caught.value), (message, str(caught.value))


def test_errors_of_the_packages_below_arrive_as_cat_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"subject_id": "m1", "responses": {"q1": 7}}\n', encoding="utf-8")
    with pytest.raises(cat.CatError, match=r"bad\.jsonl") as caught:
        cat.calibrate(bad, out=tmp_path / "p.csv")
    assert caught.value.__cause__ is not None  # the original error kept as the cause


def test_dir_shows_the_public_api_only() -> None:
    shown = set(dir(cat))
    assert set(cat.__all__) <= shown
    assert shown - set(cat.__all__) <= {n for n in shown if n.startswith("__")}
    for helper in ("Any", "TYPE_CHECKING", "annotations", "importlib", "_WHERE"):
        assert helper not in shown


def test_each_public_function_bears_its_exported_name() -> None:
    for name in cat.__all__:
        value = getattr(cat, name)
        if callable(value):
            assert value.__name__ == name, (name, value.__name__)


def test_the_session_defaults_are_what_assess_runs() -> None:
    signature = inspect.signature(cat.assess).parameters
    config = cat.SessionConfig()
    assert config.content_balancing is signature["content_balancing"].default
    assert config.content_balancing is DEFAULT_CONTENT_BALANCING
    assert config.policy == signature["policy"].default
    assert config.estimator == signature["estimator"].default


def test_names_are_typed_with_their_choices() -> None:
    """Editors and mypy see the registry's enums in the signatures; plain str still works."""
    expected: dict[Callable[..., Any], dict[str, type]] = {
        cat.assess: {
            "policy": cat.PolicyName,
            "estimator": cat.EstimatorName,
            "design": cat.DesignChoice,
            "criterion": cat.CriterionName,
        },
        cat.simulate: {"policy": cat.PolicyName, "estimator": cat.EstimatorName},
        cat.validate: {"criterion": cat.CriterionName},
        cat.calibrate: {"criterion": cat.CriterionName},
    }
    for function, parameters in expected.items():
        hints = typing.get_type_hints(function)
        for parameter, enum in parameters.items():
            assert enum in typing.get_args(hints[parameter]), (function.__name__, parameter)
            assert str in typing.get_args(hints[parameter])
