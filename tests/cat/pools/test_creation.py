"""``cat.pools.creation``: a benchmark's file to a calibrated pool, resumed where a run
stopped, refusing what would mix two benchmarks."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from cat.errors import CatError
from cat.pools import creation
from cat.pools.calibration_job import CalibrationOutcome
from cat.pools.creation import (
    STATE,
    WORK_FOLDER,
    CreationProgress,
    PoolRecipe,
    create_pool,
    read_reference_models,
)
from cat.pools.importer import import_questions
from itempool import load_pool, read_questions
from synth.local_server import LocalServer
from synth.local_server.faults import FaultPlan
from synth.local_server.simulator import random_item_params
from tests.cat.pools.benchmark_files import mmlu_parquet

THETAS = {"strong": 1.2, "medium": 0.2, "weak": -0.8, "fourth": 0.6}


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return mmlu_parquet(tmp_path_factory.mktemp("bench"), 24)


@pytest.fixture(scope="module")
def server(bench: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """The test server, knowing the benchmark's keys (its own import of the same file)."""
    key = tmp_path_factory.mktemp("key") / "pool"
    import_questions(bench, {}, key, "key", "en")
    items = list(read_questions(key).items)
    with LocalServer(items, THETAS, irt=random_item_params(items, 0)) as running:
        yield running


def _recipe(bench: Path, out: Path, url: str, *models: str) -> PoolRecipe:
    return PoolRecipe(
        source=bench,
        out=out,
        language="en",
        references=models or ("strong", "medium", "weak"),
        base_url=url,
    )


def _asked(server: LocalServer) -> Counter[str]:
    return Counter(server.completed_keys())


def test_a_file_becomes_a_calibrated_pool_and_a_rerun_does_nothing(
    bench: Path, server: LocalServer, tmp_path: Path
) -> None:
    before = _asked(server)
    made = create_pool(_recipe(bench, tmp_path / "pool", server.base_url))
    assert made.imported is not None and made.imported.count == 24 and not made.resumed
    assert made.answered is not None and made.answered.new_calls > 0
    assert made.calibrated is not None
    pool = load_pool(tmp_path / "pool")
    assert len(pool.items) == 24 and pool.params is not None
    assert len(pool.references) == 9  # 3 alone, 6 ordered pairs
    assert pool.manifest.protocol is not None  # how the references were asked
    assert pool.manifest.calibration is not None
    state = json.loads((tmp_path / "pool" / WORK_FOLDER / STATE).read_text())
    assert state["stage"] == "calibrated"
    asked = _asked(server) - before
    again = create_pool(_recipe(bench, tmp_path / "pool", server.base_url))
    assert (again.imported, again.answered, again.calibrated) == (None, None, None)
    assert _asked(server) - before == asked  # nothing asked twice
    # Made already: nothing to ask, so no endpoint is needed either.
    offline = create_pool(_recipe(bench, tmp_path / "pool", "http://127.0.0.1:9/v1"))
    assert offline.answered is None and offline.calibrated is None


def test_a_reference_added_asks_only_its_calls_and_calibrates_again(
    bench: Path, server: LocalServer, tmp_path: Path
) -> None:
    start = _asked(server)
    create_pool(_recipe(bench, tmp_path / "pool", server.base_url, "strong", "weak"))
    before = _asked(server)
    first = set(before - start)
    three = _recipe(bench, tmp_path / "pool", server.base_url, "strong", "weak", "fourth")
    more = create_pool(three)
    assert more.resumed and more.imported is None and more.calibrated is not None
    assert more.answered is not None and more.answered.stored_answers == 2 * 24 * 2
    assert first and not set(_asked(server) - before) & first  # none asked again
    assert len(load_pool(tmp_path / "pool").references) == 9


def test_a_kill_during_the_import_is_redone_from_the_start(
    bench: Path, server: LocalServer, tmp_path: Path
) -> None:
    out = tmp_path / "pool"
    create_pool(_recipe(bench, out, server.base_url))
    state_path = out / WORK_FOLDER / STATE
    state = json.loads(state_path.read_text())
    # What a kill between the two files of the import leaves: half the items, no manifest.
    state_path.write_text(json.dumps({"questions": state["questions"], "stage": "importing"}))
    lines = (out / "items.jsonl").read_text().splitlines()
    (out / "items.jsonl").write_text("\n".join(lines[:5]) + "\n")
    (out / "pool.json").unlink()
    made = create_pool(_recipe(bench, out, server.base_url))
    assert made.imported is not None and made.imported.count == 24
    assert made.answered is not None and made.answered.new_calls == 0  # all in the store
    assert len(load_pool(out).items) == 24


def test_other_questions_in_a_begun_folder_are_refused(
    bench: Path, server: LocalServer, tmp_path: Path
) -> None:
    out = tmp_path / "pool"
    create_pool(_recipe(bench, out, server.base_url))
    edited = tmp_path / "edited" / bench.name
    edited.parent.mkdir()
    edited.write_bytes(bench.read_bytes() + b"\0")
    with pytest.raises(CatError, match="begun from other questions \\(the file's content"):
        create_pool(_recipe(edited, out, server.base_url))
    renamed = PoolRecipe(
        source=bench, out=out, language="zh", references=("strong", "weak"), base_url="x"
    )
    with pytest.raises(CatError, match="language: 'en' then, 'zh' now"):
        create_pool(renamed)


def test_a_pool_it_did_not_make_is_refused(bench: Path, tmp_path: Path) -> None:
    import_questions(bench, {}, tmp_path / "mine", "mine", "en")
    with pytest.raises(CatError, match="holds a pool that cat pool create did not make"):
        create_pool(_recipe(bench, tmp_path / "mine", "http://127.0.0.1:9/v1"))


def test_failed_calls_stop_before_the_calibration(bench: Path, tmp_path: Path) -> None:
    items = list(read_questions(_key(bench, tmp_path)).items)
    with LocalServer(items, {"strong": 0.8, "weak": 0.4}, faults=FaultPlan(rate_500=1.0)) as down:
        recipe = _recipe(bench, tmp_path / "pool", down.base_url, "strong", "weak")
        with pytest.raises(CatError, match=r"calls failed .* run the same command again"):
            create_pool(recipe, max_attempts=1)
    assert not (tmp_path / "pool" / "params.csv").exists()
    state = json.loads((tmp_path / "pool" / WORK_FOLDER / STATE).read_text())
    assert state["stage"] == "imported"


def test_a_calibration_the_pool_cannot_hold_is_not_called_made(
    bench: Path, server: LocalServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On few references an unpenalised fit can send a slope below zero (a 2PL without
    priors on 3 subjects does): the job says so and stays where a rerun calibrates."""
    calibrate = creation._calibrate

    def runs_off(recipe: PoolRecipe, show: CreationProgress) -> CalibrationOutcome:
        outcome = calibrate(recipe, show)
        params = recipe.out / "params.csv"
        header, first, *rest = params.read_text().splitlines()
        cells = first.split(",")
        cells[header.split(",").index("a")] = "-9.3"
        params.write_text("\n".join([header, ",".join(cells), *rest]) + "\n")
        return outcome

    monkeypatch.setattr(creation, "_calibrate", runs_off)
    out = tmp_path / "pool"
    with pytest.raises(CatError, match=r"the calibration on 9 participants left 1 problem"):
        create_pool(_recipe(bench, out, server.base_url))
    assert json.loads((out / WORK_FOLDER / STATE).read_text())["stage"] == "imported"
    monkeypatch.setattr(creation, "_calibrate", calibrate)
    assert create_pool(_recipe(bench, out, server.base_url)).calibrated is not None
    assert load_pool(out).params is not None


def _key(bench: Path, tmp_path: Path) -> Path:
    import_questions(bench, {}, tmp_path / "key", "key", "en")
    return tmp_path / "key"


def test_pairs_need_two_references(bench: Path, tmp_path: Path) -> None:
    with pytest.raises(CatError, match="pairs need two reference models"):
        create_pool(_recipe(bench, tmp_path / "pool", "http://127.0.0.1:9/v1", "strong"))
    assert not (tmp_path / "pool").exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no model"),
        ("# only a comment\n\n", "no model"),
        ("a\nb\na\n", ":3: a is listed twice"),
        ("a,b\n", ":1: one model a line"),
    ],
)
def test_bad_reference_files(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "models.txt"
    path.write_text(text)
    with pytest.raises(CatError, match=message):
        read_reference_models(path)


def test_reference_file_reads_models_urls_and_comments(tmp_path: Path) -> None:
    path = tmp_path / "models.txt"
    path.write_text("# ours\nqwen2.5:7b  # the small one\n\nllama@http://h:8000/v1\n")
    assert read_reference_models(path) == ("qwen2.5:7b", "llama@http://h:8000/v1")
    with pytest.raises(CatError, match="no such file"):
        read_reference_models(tmp_path / "missing.txt")
