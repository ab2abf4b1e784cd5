"""``cat.compare`` and ``cat.compare_results`` on the demo pool with simulated models."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import cat
from cat.assessment.examinees import SimulatedExaminee
from cat.comparison.context import PoolContext
from irt.models import ItemParams
from irt.simulate import simulate_responses
from itempool import LoadedPool, PredictionErrors, write_reference_answers
from tests.cat.scored_pools import make_scored_pool

DEMO_EN = Path(__file__).resolve().parents[3] / "item_pools" / "demo-en"


@pytest.fixture(scope="module")
def pool() -> LoadedPool:
    return cat.load_pool(DEMO_EN)


def test_models_far_apart_are_told_apart_at_the_first_look(pool: LoadedPool) -> None:
    result = cat.compare(pool, cat.SimulatedExaminee(2.0), cat.SimulatedExaminee(-1.0))
    assert result.decision == "A better" and result.better == "sim:2"
    assert result.n_items == 30 and result.stop_reason == "interval_excludes_zero"
    assert result.difference.low > 0 and result.truth is not None
    assert result.difference.low <= result.truth.difference <= result.difference.high
    assert [item.id for item in result.items] == [item.id for item in result.items][:30]
    assert all(item.response_a is not None for item in result.items)
    swapped = cat.compare(pool, cat.SimulatedExaminee(-1.0), cat.SimulatedExaminee(2.0))
    assert swapped.decision == "B better" and swapped.better == "sim:2"
    # Without cross-fitted errors the interval is the posterior one, and says so.
    assert result.difference.method.startswith("posterior only")
    assert result.difference.looks == [30, 60, 120, 250]
    assert result.difference.look_level == pytest.approx(1 - 0.05 / 4)


def test_equal_models_within_a_wide_margin_are_equivalent(pool: LoadedPool) -> None:
    result = cat.compare(
        pool, cat.SimulatedExaminee(0.5), cat.SimulatedExaminee(0.5), margin=0.2, seed=1
    )
    assert result.decision == "equivalent" and result.better is None
    assert result.stop_reason == "within_margin"
    assert result.difference.low >= -0.2 and result.difference.high <= 0.2


def test_close_models_stay_inconclusive_up_to_the_maximum(pool: LoadedPool) -> None:
    result = cat.compare(
        pool, cat.SimulatedExaminee(0.5), cat.SimulatedExaminee(0.4), max_length=40
    )
    assert result.decision == "inconclusive" and result.stop_reason == "max_length"
    assert result.n_items == 40 and result.difference.low < 0 < result.difference.high
    # The smallest detectable difference is above the half-width (80% power).
    assert result.detectable_difference.value > result.difference.half_width


def test_no_decision_before_the_minimum_length(pool: LoadedPool) -> None:
    seen: list[int] = []
    result = cat.compare(
        pool,
        cat.SimulatedExaminee(2.0),
        cat.SimulatedExaminee(-1.0),
        min_length=45,
        batch_size=4,
        on_step=lambda test: seen.append(test.difference.n),
    )
    assert result.n_items >= 45 and result.decision == "A better"
    assert seen[:3] == [4, 8, 12]  # four items a step
    assert result.difference.looks[0] == 45


def test_stored_errors_widen_the_interval(pool: LoadedPool, tmp_path: Path) -> None:
    folder = tmp_path / "pool"
    shutil.copytree(DEMO_EN, folder)
    manifest = json.loads((folder / "pool.json").read_text())
    errors = [0.05, -0.04, 0.03, 0.0, -0.06, 0.02, 0.01, -0.02]
    manifest["prediction_errors"] = PredictionErrors(
        folds=4, seed=0, policy="mfi+cb", errors={"30": errors, "100": errors}
    ).model_dump()
    (folder / "pool.json").write_text(json.dumps(manifest))
    a, b = cat.SimulatedExaminee(0.5), cat.SimulatedExaminee(0.0)
    plain = cat.compare(pool, a, b, max_length=40)
    widened = cat.compare(folder, a, b, max_length=40)
    d = widened.difference
    assert d.stored_half_width is not None and d.references == 8 and d.stored_lengths == [30, 30]
    assert d.half_width == max(d.stored_half_width, d.posterior_half_width)
    assert d.half_width > plain.difference.half_width
    assert "cross-fitted errors of pairs" in d.method
    # Each model's interval is widened to its own stored errors too.
    acc = widened.a.predicted_accuracy
    assert acc.high - acc.low >= 2 * 0.06 - 1e-9


@dataclasses.dataclass
class _ShownExamples(SimulatedExaminee):
    """A simulated model that was shown two items as few-shot examples."""

    shown: Sequence[str] = ()

    def example_items(self) -> tuple[str, ...]:
        return tuple(self.shown)


def test_items_shown_as_examples_are_never_asked(pool: LoadedPool) -> None:
    assert pool.params is not None
    first = cat.compare(pool, cat.SimulatedExaminee(1.0), cat.SimulatedExaminee(0.0))
    shown = [first.items[0].id, first.items[1].id]
    again = cat.compare(pool, _ShownExamples(1.0, shown=shown), cat.SimulatedExaminee(0.0))
    assert not {item.id for item in again.items} & set(shown)


def test_pools_a_comparison_cannot_use_are_refused(pool: LoadedPool, tmp_path: Path) -> None:
    scored = make_scored_pool(tmp_path / "scored", n_items=20, n_refs=10)
    with pytest.raises(cat.CatError, match="pools of 0/1 items"):
        cat.compare(scored, cat.SimulatedExaminee(0.0), cat.SimulatedExaminee(1.0))
    multidimensional = dataclasses.replace(pool, mirt=object())  # type: ignore[arg-type]
    with pytest.raises(cat.CatError, match="unidimensional"):
        PoolContext.of(multidimensional)
    with pytest.raises(cat.CatError, match="examinee_b must be an Examinee"):
        cat.compare(pool, cat.SimulatedExaminee(0.0), "sim:1")  # type: ignore[arg-type]
    with pytest.raises(cat.CatError, match="minimum length"):
        cat.compare(pool, cat.SimulatedExaminee(0.0), cat.SimulatedExaminee(1.0), min_length=300)
    with pytest.raises(cat.CatError, match="margin"):
        cat.compare(pool, cat.SimulatedExaminee(0.0), cat.SimulatedExaminee(1.0), margin=0)


@pytest.fixture(scope="module")
def results(pool: LoadedPool, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("results")
    paths = []
    for theta, seed in ((1.5, 1), (-0.5, 2)):
        result = cat.assess(pool, cat.SimulatedExaminee(theta, seed=seed), length=40, seed=seed)
        path = folder / f"sim{theta}.json"
        result.write_json(path)
        paths.append(path)
    return paths[0], paths[1]


def test_two_result_files_are_compared_on_their_own_answers(results: tuple[Path, Path]) -> None:
    result = cat.compare_results(*results)  # the pool the first result names
    assert result.source == "results" and result.decision == "A better"
    assert result.a.n_items == 40 and result.b.n_items == 40
    assert result.a.result == str(results[0])
    # The adaptive tests of two far-apart models share few items: reported beside.
    assert result.shared.n_items == len(result.items) == result.n_items < 40
    assert result.difference.look_level == result.difference.level == 0.95
    assert result.truth is not None and result.truth.difference > 0


def test_result_files_from_another_pool_or_not_results_are_refused(
    results: tuple[Path, Path], tmp_path: Path
) -> None:
    other = json.loads(results[1].read_text())
    other["pool"]["name"] = "another"
    moved = tmp_path / "other.json"
    moved.write_text(json.dumps(other))
    with pytest.raises(cat.CatError, match="assessed on pool another"):
        cat.compare_results(results[0], moved)
    junk = tmp_path / "junk.json"
    junk.write_text('{"rows": []}')
    with pytest.raises(cat.CatError, match=r"not a RESULT\.json of cat assess"):
        cat.compare_results(results[0], junk)
    with pytest.raises(cat.CatError, match="cannot read"):
        cat.compare_results(results[0], tmp_path / "missing.json")


@pytest.fixture(scope="module")
def mixture_pool(pool: LoadedPool, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """demo-en with 40 references' answers and stored errors under which the mixture's
    pair errors are the narrower (as on ARC)."""
    assert isinstance(pool.params, ItemParams)
    folder = tmp_path_factory.mktemp("mixture") / "pool"
    shutil.copytree(DEMO_EN, folder)
    rng = np.random.default_rng(0)
    write_reference_answers(simulate_responses(pool.params, rng.normal(size=40), rng), folder)
    manifest = json.loads((folder / "pool.json").read_text())
    wide = [0.08, -0.07, 0.05, 0.0, -0.06, 0.03, 0.01, -0.02]
    narrow = [e / 4 for e in wide]
    errors = {
        name: PredictionErrors(
            folds=4, seed=0, policy=name, errors={"100": e, "250": e}
        ).model_dump()
        for name, e in (("irt", wide), ("mixture", narrow))
    }
    manifest["prediction_errors"] = errors["irt"]
    manifest["design_errors"] = errors
    (folder / "pool.json").write_text(json.dumps(manifest))
    return folder


def test_the_predictor_of_narrower_pair_errors_is_used(mixture_pool: Path) -> None:
    a, b = cat.SimulatedExaminee(1.0), cat.SimulatedExaminee(-0.5)
    auto = cat.compare(mixture_pool, a, b, max_length=60)
    assert auto.difference.predictor == "mixture"
    assert "reference mixture" in auto.difference.method
    irt = cat.compare(mixture_pool, a, b, max_length=60, predictor="irt")
    assert irt.difference.predictor == "irt"
    assert auto.difference.stored_half_width is not None
    assert irt.difference.stored_half_width is not None
    assert auto.difference.stored_half_width < irt.difference.stored_half_width
    # The same items either way: the predictor reads the answers, it does not pick items.
    assert [i.id for i in irt.items][:30] == [i.id for i in auto.items][:30]
    acc = auto.a.predicted_accuracy
    assert acc.low <= acc.value <= acc.high and abs(acc.value - auto.truth.a) < 0.15  # type: ignore[union-attr]
    with pytest.raises(cat.CatError, match="predictor: Input should be"):
        cat.compare(mixture_pool, a, b, predictor="ridge")


def test_result_files_are_compared_with_the_mixture_too(mixture_pool: Path, tmp_path: Path) -> None:
    paths = []
    # 60 items: at 40 this pair sat at the edge of its interval (+0.15 against ±0.13).
    for theta in (1.0, -0.5):
        result = cat.assess(mixture_pool, cat.SimulatedExaminee(theta), length=60, design="irt")
        paths.append(tmp_path / f"{theta}.json")
        result.write_json(paths[-1])
    compared = cat.compare_results(*paths)
    assert compared.difference.predictor == "mixture" and compared.decision == "A better"


def test_the_interval_scales_with_disagreement_and_holds_the_shared_answers(
    mixture_pool: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "pool"
    shutil.copytree(mixture_pool, folder)
    manifest = json.loads((folder / "pool.json").read_text())
    spread = [0.02, 0.01, 0.03, 0.0, 0.02, 0.01, 0.01, 0.02]
    for errors in (manifest["prediction_errors"], *manifest["design_errors"].values()):
        errors["disagreement"] = {"100": spread, "250": spread}
    (folder / "pool.json").write_text(json.dumps(manifest))
    a, b = cat.SimulatedExaminee(1.0), cat.SimulatedExaminee(-0.5)
    results = {p: cat.compare(folder, a, b, max_length=60, predictor=p) for p in ("irt", "mixture")}
    for result in results.values():
        d = result.difference
        # Both predictions (the plug-in and the mixture) are made either way: the one
        # not in use is the other's companion.
        assert d.disagreement_a is not None and d.disagreement_b is not None
        assert d.disagreement_a >= 0 and d.disagreement_b >= 0
        assert "scaled by the two models' disagreements" in d.method
        assert d.paired_low is not None and d.paired_high is not None
        assert d.low <= d.paired_low and d.paired_high <= d.high
        dumped = result.model_dump(mode="json")["difference"]
        assert {"disagreement_a", "paired_low"} <= set(dumped)
    mixture = results["mixture"].difference
    assert results["mixture"].decision == "A better" and mixture.paired_low > 0  # type: ignore[operator]
    # B's two predictions part by 6 points, against the references' typical 1.5: the
    # plug-in's width grows past the one width the pool gave every pair before.
    plain = cat.compare(mixture_pool, a, b, max_length=60, predictor="irt").difference
    scaled = results["irt"].difference
    assert (scaled.disagreement_b or 0) > 0.04
    assert scaled.stored_half_width > 1.5 * plain.stored_half_width  # type: ignore[operator]
    # A pool without disagreements keeps one width; the shared answers still join in.
    assert plain.disagreement_a is None and "disagreement" not in plain.method
    assert plain.paired_low is not None
