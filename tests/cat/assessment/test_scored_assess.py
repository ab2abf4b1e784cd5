"""``cat assess`` on a pool of scored items: open items scored 0..m beside 0/1 ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from cat.assessment.assess import assess
from cat.assessment.examinees import (
    EndpointExaminee,
    ReplayExaminee,
    SimulatedExaminee,
    parse_model_spec,
    refuse_unused_live_settings,
)
from cat.assessment.result import AssessmentResult
from cat.errors import CatError
from cat.pools.loading import load_pool
from irt.polytomous import PolytomousParams
from synth.backend import OpenAIBackend
from synth.local_server import LocalServer
from tests.cat.scored_pools import make_scored_pool


@pytest.fixture(scope="module")
def pool_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_scored_pool(tmp_path_factory.mktemp("scored") / "pool")


def test_the_pool_loads_as_scored_items(pool_dir: Path) -> None:
    pool = load_pool(pool_dir)
    assert isinstance(pool.params, PolytomousParams)
    assert pool.params.item_ids == tuple(item.id for item in pool.items)
    assert [int(m) for m in pool.params.max_scores] == [item.max_score for item in pool.items]


def test_a_simulated_model_is_assessed_on_scores(pool_dir: Path) -> None:
    pool = load_pool(pool_dir)
    result = assess(pool, SimulatedExaminee(theta=0.8, seed=3), length=40, seed=1)
    assert result.n_items == 40
    responses = [r.response for r in result.items]
    tops = {item.id: item.max_score for item in pool.items}
    assert all(0 <= (r or 0) <= tops[i.id] for r, i in zip(responses, result.items, strict=True))
    assert max(r or 0 for r in responses) >= 2  # graded scores, not only 0/1
    assert abs(result.theta - 0.8) < 3 * result.se
    predicted = result.predicted_accuracy
    assert predicted.low <= predicted.value <= predicted.high
    assert result.truth is not None
    assert abs(predicted.value - result.truth.accuracy) < 0.08
    assert result.rank is not None and result.rank.of == 31


def test_a_recorded_subject_is_replayed_with_its_scores(pool_dir: Path) -> None:
    pool = load_pool(pool_dir)
    scores = pool_dir.parent / "scores.jsonl"
    result = assess(pool, ReplayExaminee(scores, "ref07"), length=30, seed=0)
    reference = next(r for r in pool.references if r.subject_id == "ref07")
    assert result.truth is not None
    assert result.truth.accuracy == pytest.approx(reference.accuracy, abs=1e-12)
    assert abs(result.theta - reference.theta) < 3 * result.se


def test_a_reference_design_is_refused_on_a_scored_pool(pool_dir: Path) -> None:
    pool = load_pool(pool_dir)
    with pytest.raises(CatError, match="the mixture design is for pools of 0/1 items"):
        assess(pool, SimulatedExaminee(theta=0.0), length=10, design="mixture")


def test_a_pool_whose_items_and_params_disagree_is_refused(tmp_path: Path) -> None:
    folder = make_scored_pool(tmp_path / "pool", n_items=30, n_refs=8)
    items = (folder / "items.jsonl").read_text().replace('"max_score":3', '"max_score":2', 1)
    (folder / "items.jsonl").write_text(items)
    with pytest.raises(CatError, match=r"item 'q000' has scores 0\.\.3 here but 0\.\.2 in items"):
        load_pool(folder)


def _live(pool_dir: Path, tmp_path: Path, name: str, judge: str | None) -> AssessmentResult:
    """``m`` (right 60% of the time) assessed through the local server, its open items
    graded by the metric or by the scripted ``judge``."""
    pool = load_pool(pool_dir)
    judges = {"fair": "fair", "mute": "mute"}
    with LocalServer(pool.items, {"m": 0.6}, judges=judges, seed=3) as server:
        url = server.base_url
        examinee = EndpointExaminee(
            "m",
            backend=OpenAIBackend(url, timeout=30.0),
            store=tmp_path / f"{name}.db",
            judge_model=None if judge is None else f"{judge}@{url}",
            judge_backend=None if judge is None else OpenAIBackend(url, timeout=30.0),
        )
        return assess(pool, examinee, length=24, seed=2)


def test_a_fair_judge_grades_as_the_metric_and_a_mute_one_skips(
    pool_dir: Path, tmp_path: Path
) -> None:
    by_metric = _live(pool_dir, tmp_path, "metric", None)
    by_judge = _live(pool_dir, tmp_path, "fair", "fair")
    # The scripted fair judge gives the metric's points: the same test, item for item.
    assert [(i.id, i.response) for i in by_judge.items] == [
        (i.id, i.response) for i in by_metric.items
    ]
    assert by_judge.settings.judge_model is not None and "fair@" in by_judge.settings.judge_model
    assert by_metric.settings.judge_model is None
    assert by_judge.usage is not None and by_metric.usage is not None
    open_items = {item.id for item in load_pool(pool_dir).items if item.type.value == "open"}
    n_open = sum(i.id in open_items for i in by_judge.items)
    assert by_judge.usage.calls == by_metric.usage.calls + n_open  # one judge call each
    muted = _live(pool_dir, tmp_path, "mute", "mute")
    skipped = [i for i in muted.items if i.response is None]
    assert skipped and {i.id for i in skipped} <= open_items
    assert all(i.response is not None for i in muted.items if i.id not in open_items)


def test_a_judge_is_for_live_models_only(pool_dir: Path) -> None:
    with pytest.raises(CatError, match="judge_model grades a live model's replies, not sim:"):
        parse_model_spec("sim:0.5", judge_model="j")


def test_how_a_live_model_is_asked_is_refused_where_no_model_is_live() -> None:
    from synth.generation import GenerationSettings

    asked = {"generation": GenerationSettings(few_shot=2, stop=("END",))}
    with pytest.raises(CatError, match=r"few_shot, stop set how a live model is asked; sim:"):
        refuse_unused_live_settings(["sim:0.5", "sim:1"], asked)
    with pytest.raises(CatError, match=r"style set how a live model is asked; replay:"):
        refuse_unused_live_settings(["replay:x.jsonl#m1"], {"style": "raw"})
    # Beside a live model they are that model's; left at their defaults they ask nothing.
    refuse_unused_live_settings(["sim:0.5", "llm"], asked)
    refuse_unused_live_settings(["sim:0.5"], {"generation": GenerationSettings()})
