"""``cat assess --dry-run``, ``--prices`` and ``--max-cost``: what a run will cost is
known before its first call, a run is held to a limit, and RESULT.json records the
estimate beside what was spent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cat.assessment.assess import assess
from cat.assessment.cost_estimate import estimate_assessment
from cat.assessment.endpoint import EndpointExaminee
from cat.cli.app import app
from cat.errors import CatError
from irt.models import ItemParams
from itempool import load_pool
from synth.generation import GenerationSettings
from synth.local_server import LocalServer
from synth.pricing import ModelPrice, Prices
from synth.token_estimate import estimate_tokens, message_tokens
from tests.cli.live_pool import live_items, live_pool, true_irt

runner = CliRunner()
PRICES = {"good": {"input": 2.0, "output": 8.0}}
PRICED = Prices({"good": ModelPrice(input=2.0, output=8.0)})


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ItemParams]:
    return live_pool(tmp_path_factory.mktemp("cost") / "pool")


def _prices(folder: Path) -> Path:
    path = folder / "prices.json"
    path.write_text(json.dumps(PRICES))
    return path


def test_tokens_are_counted_four_characters_a_token_and_a_cjk_character_one() -> None:
    assert (
        estimate_tokens("") == 0 and estimate_tokens("abcd") == 1 and estimate_tokens("abcde") == 2
    )
    assert estimate_tokens("心脏有几个腔") == 6 and estimate_tokens("心脏 abc") == 3
    messages = [("system", "abcd"), ("user", "abcdefgh")]
    assert message_tokens(messages) == 4 + 1 + 4 + 2


def test_the_estimate_renders_every_prompt_as_sent(calibrated: tuple[Path, ItemParams]) -> None:
    pool = load_pool(calibrated[0])
    examinee = EndpointExaminee("good", base_url="http://127.0.0.1:9/v1")
    estimate = estimate_assessment(pool, examinee, length=40, prices=PRICED)
    prompts = [message_tokens(examinee.prompt(item)) for item in pool.items]
    assert estimate.rendered == len(pool.items) and estimate.calls == 40
    assert estimate.prompt_per_call == pytest.approx(sum(prompts) / len(prompts))
    assert estimate.prompt_tokens == round(estimate.prompt_per_call * 40)
    # The pool records no reply length and the run sets no max_tokens: unknown, so no cost.
    assert estimate.completion_tokens is None and estimate.cost is None
    assert estimate.reply_source.startswith("unknown")
    capped = EndpointExaminee(
        "good", base_url="http://127.0.0.1:9/v1", generation=GenerationSettings(max_tokens=50)
    )
    ceiling = estimate_assessment(pool, capped, length=500, prices=PRICED)
    assert ceiling.calls == len(pool.items)  # never more than the pool holds
    assert ceiling.completion_tokens == 50 * len(pool.items)
    expected = (ceiling.prompt_tokens * 2.0 + ceiling.completion_tokens * 8.0) / 1e6
    assert ceiling.cost == pytest.approx(expected)


def test_dry_run_makes_no_call_and_writes_nothing(
    calibrated: tuple[Path, ItemParams], tmp_path: Path
) -> None:
    pool, params = calibrated
    with LocalServer(live_items(), {"good": 1.0}, irt=true_irt(params)) as server:
        args = ["assess", "--pool", str(pool), "--model", "good", "--model", "sim:0.3"]
        args += ["--base-url", server.base_url, "--store", str(tmp_path / "run.db")]
        args += ["--out", str(tmp_path / "runs"), "--dry-run", "--length", "30"]
        args += ["--prices", str(_prices(tmp_path)), "--max-tokens", "40", "--max-cost", "0.001"]
        result = runner.invoke(app, args)
        asked = server.completed_keys()
    assert result.exit_code == 0, result.output
    assert asked == [] and not (tmp_path / "run.db").exists() and not (tmp_path / "runs").exists()
    text = " ".join(result.output.split())
    assert "30 items on" in text and "sim:0.3: no call" in text
    assert "a reply 40: max_tokens, a ceiling" in text
    assert "--max-cost 0.001 stops the test after about" in text


def test_a_run_records_its_estimate_and_stops_at_its_limit(
    calibrated: tuple[Path, ItemParams], tmp_path: Path
) -> None:
    pool, params = calibrated
    prices = PRICED
    with LocalServer(live_items(), {"good": 1.0}, irt=true_irt(params)) as server:

        def examinee() -> EndpointExaminee:
            return EndpointExaminee(
                "good",
                base_url=server.base_url,
                store=tmp_path / "run.db",
                generation=GenerationSettings(max_tokens=40),
            )

        whole = assess(pool, examinee(), length=30, prices=prices)
        assert whole.estimate is not None and whole.usage is not None
        assert whole.estimate.calls == 30 and whole.estimate.cost is not None
        spent = (whole.usage.prompt_tokens * 2.0 + whole.usage.completion_tokens * 8.0) / 1e6
        assert whole.estimate.spent_cost == pytest.approx(spent)
        # A limit of a third of the whole run's spending stops it near a third of the way.
        limit = spent / 3
        capped = assess(pool, examinee(), length=30, prices=prices, max_cost=limit, seed=1)
    assert capped.stop_reason == "max_cost" and 3 <= capped.n_items < 30
    assert capped.estimate is not None and capped.estimate.max_cost == limit
    assert capped.estimate.spent_cost is not None and capped.estimate.spent_cost <= limit
    saved = json.loads(whole.model_dump_json())
    assert set(saved["estimate"]) >= {"calls", "prompt_tokens", "completion_tokens", "cost"}


def test_a_limit_that_cannot_be_held_is_refused(
    calibrated: tuple[Path, ItemParams], tmp_path: Path
) -> None:
    pool = calibrated[0]
    prices = PRICED
    live = EndpointExaminee("other", base_url="http://127.0.0.1:9/v1", store=tmp_path / "r.db")
    with pytest.raises(CatError, match="no price for other"):
        assess(pool, live, max_cost=1.0, prices=prices)
    with pytest.raises(CatError, match="needs prices"):
        assess(pool, live, max_cost=1.0)
    result = runner.invoke(
        app, ["assess", "--pool", str(pool), "--model", "sim:0", "--max-cost", "1"]
    )
    assert result.exit_code == 2 and "--max-cost needs --prices FILE" in result.output
    args = ["assess", "--pool", str(pool), "--model", "sim:0", "--max-cost", "1"]
    result = runner.invoke(app, [*args, "--prices", str(_prices(tmp_path))])
    assert result.exit_code == 2 and "sim:0 makes no call" in result.output
    assert not (tmp_path / "r.db").exists()


def test_compare_dry_run_estimates_both_models(
    calibrated: tuple[Path, ItemParams], tmp_path: Path
) -> None:
    pool = calibrated[0]
    args = ["compare", "--pool", str(pool), "--model", "good", "--model", "sim:0"]
    args += ["--base-url", "http://127.0.0.1:9/v1", "--store", str(tmp_path / "c.db")]
    args += ["--max-length", "20", "--dry-run", "--prices", str(_prices(tmp_path))]
    args += ["--max-tokens", "10"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "at most 20 items each" in text and "sim:0: no call" in text
    assert "│ good │ 20 │" in text and not (tmp_path / "c.db").exists()
    results = runner.invoke(app, ["compare", "--results", "a.json", "b.json", "--dry-run"])
    assert results.exit_code == 2 and "--results asks nothing" in results.output
