"""``simulate``, the job behind ``cat simulate``, called from Python."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from cat.engine.registry import EstimatorName, PolicyName
from cat.engine.simulate_job import SH_ROUNDS, simulate
from cat.engine.simulate_result import SimulationResult
from cat.errors import CatError
from irt.simulate import random_params
from itempool.formats.params import write_params

PARAMS = random_params(300, np.random.default_rng(0), "3pl")


def test_item_params_in_memory_give_a_typed_result() -> None:
    result = simulate(PARAMS, examinees=30, length=20, seed=5)
    assert isinstance(result, SimulationResult)
    assert result.settings.params is None and result.settings.n_pool == 300
    assert result.settings.policy is PolicyName.MFI
    assert result.settings.estimator is EstimatorName.MLE
    assert result.settings.seed == 5 and result.settings.package_version
    assert len(result.examinees) == 30
    first = result.examinees[0]
    assert first.n_items == 20 == len(first.items) == len(set(first.items))
    assert set(first.items) <= set(PARAMS.item_ids)
    tau = result.summary.kendall_tau
    assert 0 < result.summary.rmse < 0.8 and tau is not None and tau > 0.6
    assert result.summary.mean_length == 20.0
    assert result.summary.wall_seconds >= result.summary.seconds > 0


def test_the_dump_has_the_contract_keys_and_reads_back() -> None:
    result = simulate(PARAMS, examinees=5, length=10, policy="randomesque", randomesque_k=3)
    data = json.loads(json.dumps(result.model_dump(mode="json")))
    assert list(data) == ["summary", "settings", "created", "examinees"]
    assert set(data["summary"]) == {
        "bias",
        "rmse",
        "kendall_tau",
        "seconds",
        "seconds_per_examinee",
        "max_exposure",
        "mean_length",
        "mean_se",
        "wall_seconds",
        "effective_length",
        "pool_exhausted",
    }
    assert set(data["examinees"][0]) == {
        "theta_true",
        "theta_hat",
        "se",
        "items",
        "n_items",
        "stop_reason",
    }
    assert data["settings"]["randomesque_k"] == 3 and data["settings"]["policy"] == "randomesque"
    assert SimulationResult.model_validate(data) == result


def test_the_summary_says_when_the_pool_ran_out_before_the_length() -> None:
    small = PARAMS.subset(list(range(40)))
    short = simulate(small, examinees=6, length=500).summary
    assert short.mean_length == 40.0 and short.effective_length == 40
    assert short.pool_exhausted == 6
    full = simulate(small, examinees=6, length=20).summary
    assert full.effective_length == 20 and full.pool_exhausted == 0


def test_same_seed_same_tests_and_a_path_reads_the_same_pool(tmp_path: Path) -> None:
    path = tmp_path / "params.csv"
    write_params(PARAMS, path)
    from_file = simulate(path, examinees=12, length=15, seed=9, estimator="eap")
    in_memory = simulate(PARAMS, examinees=12, length=15, seed=9, estimator=EstimatorName.EAP)
    assert from_file.examinees == in_memory.examinees
    assert from_file.settings.params == str(path)


def test_min_length_above_the_length_is_refused_not_clipped() -> None:
    with pytest.raises(CatError, match=r"minimum length \(50\) is longer than the test length"):
        simulate(PARAMS, examinees=3, length=10, min_length=50)
    result = simulate(PARAMS, examinees=3, length=10, min_length=10, se_target=5.0)
    assert all(e.n_items == 10 for e in result.examinees)


def _write_with(tmp_path: Path, row: int, column: str, value: str) -> Path:
    """The params file of a 5-item pool with one cell replaced."""
    path = tmp_path / "params.csv"
    write_params(random_params(5, np.random.default_rng(1), "3pl"), path)
    lines = path.read_text().splitlines()
    header = lines[0].split(",")
    cells = lines[row].split(",")
    cells[header.index(column)] = value
    lines[row] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(("value", "message"), [("-0.5", "a = -0.5"), ("nan", "a = nan")])
def test_the_params_file_is_checked_strictly(tmp_path: Path, value: str, message: str) -> None:
    path = _write_with(tmp_path, 3, "a", value)
    with pytest.raises(CatError) as caught:
        simulate(path, examinees=3, length=3)
    assert f"params.csv:4: {message}" in str(caught.value)


def _cut_column(path: Path, column: str) -> None:
    """Remove ``column`` from a CSV file, as a user cutting a spreadsheet would."""
    rows = [line.split(",") for line in path.read_text().splitlines()]
    k = rows[0].index(column)
    path.write_text("".join(",".join(r[:k] + r[k + 1 :]) + "\n" for r in rows))


@pytest.mark.parametrize(
    ("errors", "cut", "why"),
    [
        (False, ("c",), "a file with d has c beside it: cat calibrate writes both"),
        (True, ("c", "d"), "the file has se_c values, so c was estimated"),
    ],
)
def test_a_3pl_params_file_without_c_is_refused_as_a_pool_refuses_it(
    tmp_path: Path, errors: bool, cut: tuple[str, ...], why: str
) -> None:
    params = random_params(5, np.random.default_rng(1), "3pl")
    if errors:
        se = np.full(params.n_items, 0.1)
        params = replace(params, se_a=se, se_b=se, se_c=se)
    path = tmp_path / "noc.csv"
    write_params(params, path)
    for column in cut:
        _cut_column(path, column)
    with pytest.raises(CatError) as caught:
        simulate(path, examinees=3, length=3)
    assert str(caught.value) == f"{path}:1: missing column(s) c ({why})"


def test_a_params_file_in_a_pool_folder_is_held_to_the_pools_model(tmp_path: Path) -> None:
    # Nothing in the file says it lost c: the pool's model does, as cat pool validate says.
    pool = tmp_path / "pool"
    pool.mkdir()
    (pool / "pool.json").write_text('{"name": "p", "language": "en", "model": "3pl"}')
    inside = pool / "params.csv"
    write_params(random_params(5, np.random.default_rng(1), "3pl"), inside)
    for column in ("se_c", "d", "c"):
        _cut_column(inside, column)
    with pytest.raises(CatError) as caught:
        simulate(inside, examinees=3, length=3)
    assert str(caught.value) == f"{inside}:1: missing column(s) c (a 3pl pool needs them)"


def test_unknown_names_and_conflicting_exposure_controls() -> None:
    with pytest.raises(CatError, match="unknown policy 'best'"):
        simulate(PARAMS, examinees=3, length=5, policy="best")
    with pytest.raises(CatError, match="unknown estimator 'ols'"):
        simulate(PARAMS, examinees=3, length=5, estimator="ols")
    with pytest.raises(CatError, match="choose one of"):
        simulate(PARAMS, examinees=3, length=5, max_exposure=0.3, sympson_hetter=0.3)
    with pytest.raises(CatError, match="examinees must be at least 1, got 0"):
        simulate(PARAMS, examinees=0, length=5)
    with pytest.raises(CatError, match="seed"):
        simulate(PARAMS, examinees=3, length=5, seed=-1)


def test_sympson_hetter_wall_time_includes_the_calibration_rounds() -> None:
    told: list[tuple[str, float]] = []
    result = simulate(
        PARAMS,
        examinees=50,
        length=20,
        sympson_hetter=0.25,
        progress=lambda what, done: told.append((what, done)),
    )
    control = result.settings.exposure_control
    assert control is not None and control.method == "sympson-hetter"
    assert control.n_controlled > 0 and control.min_k < 1
    summary = result.summary
    # Each round simulates 1,000 examinees; the reported simulation only 50.
    assert summary.wall_seconds > 3 * summary.seconds
    assert summary.seconds_per_examinee == pytest.approx(summary.seconds / 50)
    rounds = [what for what, _ in told if what.startswith("Sympson-Hetter round")]
    assert rounds and rounds[0].startswith("Sympson-Hetter round 1: max rate")
    assert told[-2][0] == "simulating 50 examinees" and told[-1] == ("done", 1.0)
    fractions = [done for _, done in told]
    assert fractions == sorted(fractions) and fractions[-2] == SH_ROUNDS / (SH_ROUNDS + 1)


def test_progress_without_exposure_control() -> None:
    told: list[tuple[str, float]] = []
    simulate(PARAMS, examinees=2, length=3, progress=lambda what, done: told.append((what, done)))
    assert told == [("simulating 2 examinees", 0.0), ("done", 1.0)]


def test_one_examinee_has_no_rank_correlation() -> None:
    result = simulate(PARAMS, examinees=1, length=5)
    assert result.summary.kendall_tau is None  # nothing to rank; never a nan
    assert result.model_dump(mode="json")["summary"]["kendall_tau"] is None


def test_cat_simulate_is_the_public_name() -> None:
    import cat

    if "simulate" not in cat.__all__:
        pytest.skip("cat/__init__.py does not export simulate yet (the lead's file)")
    assert cat.simulate is simulate
    result = cat.simulate(PARAMS, examinees=2, length=3)
    assert isinstance(result, SimulationResult)
