"""Log-likelihood scoring: a pool whose references were scored by the log-probability of
each option (lm-evaluation-harness's way for base models) is assessed the same way,
through a completions endpoint with ``echo`` and ``logprobs``."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import cat
from cat.cli.app import app
from itempool import PoolItem
from synth.backend import ChatRequest, OpenAIBackend, loglikelihood_reply
from synth.errors import SynthError
from synth.local_server import LocalServer
from synth.local_server.logprobs import CONTEXT_LOGPROB, FAVOURED_LOGPROB, OTHER_LOGPROB
from synth.loglikelihood import CONTINUATIONS, OptionScores, continuations

runner = CliRunner()
DEMO = Path(__file__).parents[2] / "item_pools" / "demo-en"
ITEM = PoolItem(
    id="q1",
    question="Which city is the capital of Italy, as of the year 2024?",
    options={"A": "Paris", "B": "New York City", "C": "Rome"},
    answer="C",
)


def _scores(server: LocalServer, model: str, choices: str = "texts") -> OptionScores:
    pairs = continuations(ITEM, choices)
    prompt = f"Question: {ITEM.question}\nAnswer:"
    request = ChatRequest(
        model, (("user", prompt),), extra_body={CONTINUATIONS: [list(p) for p in pairs]}
    )

    async def ask() -> OptionScores:
        backend = OpenAIBackend(server.base_url)
        try:
            return OptionScores.from_text((await loglikelihood_reply(backend, request)).text)
        finally:
            await backend.close()

    return asyncio.run(ask())


def test_the_options_log_likelihoods_are_the_sums_of_their_tokens() -> None:
    with LocalServer([ITEM], {"knows": 1.0}) as server:
        scores = _scores(server, "knows")
        (record,) = server.records
    # " Paris" and " Rome" are one token each, " New York City" three; the model leans
    # to the key (C), whose tokens cost FAVOURED_LOGPROB, the others OTHER_LOGPROB.
    assert scores.letters == ("A", "B", "C")
    assert scores.loglikelihoods == (OTHER_LOGPROB, 3 * OTHER_LOGPROB, FAVOURED_LOGPROB)
    assert scores.lengths == (6, 14, 5)
    assert scores.choice("loglikelihood") == scores.choice("loglikelihood-norm") == "C"
    # one request scores every option: the prompt followed by each continuation
    assert record.messages is not None and len(record.messages) == 3
    assert record.messages[1][1].endswith("Answer: New York City")
    assert CONTEXT_LOGPROB != FAVOURED_LOGPROB  # the question's tokens are left out


def test_letters_as_continuations() -> None:
    with LocalServer([ITEM], {"knows": 1.0}) as server:
        scores = _scores(server, "knows", "letters")
    assert scores.loglikelihoods == (OTHER_LOGPROB, OTHER_LOGPROB, FAVOURED_LOGPROB)
    assert scores.lengths == (2, 2, 2)


def test_the_normalised_rule_divides_by_the_continuations_length() -> None:
    scores = OptionScores(("A", "B"), (-3.0, -2.5), (30, 5))
    assert scores.choice("loglikelihood") == "B"  # -2.5 > -3.0
    assert scores.choice("loglikelihood-norm") == "A"  # -0.1 > -0.5
    with pytest.raises(SynthError, match="no log-likelihood rule"):
        scores.choice("builtin")


def _loglik_pool(tmp_path: Path, extractor: str) -> Path:
    pool = tmp_path / "pool"
    shutil.copytree(DEMO, pool)
    manifest = json.loads((pool / "pool.json").read_text(encoding="utf-8"))
    manifest["protocol"] = {
        "name": "lm-eval loglikelihood",
        "mode": "loglikelihood",
        "extractor": extractor,
        "choices": "texts",
    }
    (pool / "pool.json").write_text(json.dumps(manifest), encoding="utf-8")
    return pool


def test_cat_assess_scores_a_loglikelihood_pool_by_log_probabilities(tmp_path: Path) -> None:
    pool = _loglik_pool(tmp_path, "loglikelihood-norm")
    items = cat.load_pool(pool).items
    out = tmp_path / "r.json"
    with LocalServer(items, {"base": 1.0}) as server:
        result = runner.invoke(
            app,
            [
                "assess",
                *("--pool", str(pool), "--model", "base", "--length", "6"),
                *("--base-url", server.base_url, "--store", str(tmp_path / "run.db")),
                *("--out", str(out)),
            ],
        )
        records = server.records
    assert result.exit_code == 0, result.output
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["settings"]["protocol"]["followed"] is True
    assert written["settings"]["generation"]["mode"] == "loglikelihood"
    # a model that leans to every key is right on every item, each one request
    assert [item["response"] for item in written["items"]] == [1] * 6
    assert len(records) == 6
    by_id = {item.id: item for item in items}
    for record in records:
        assert record.item_id is not None and record.messages is not None
        assert len(record.messages) == len(by_id[record.item_id].options)


def test_a_loglikelihood_protocol_needs_its_rule() -> None:
    from itempool import PoolProtocol

    with pytest.raises(ValueError, match="mode loglikelihood goes with the extractor"):
        PoolProtocol(mode="loglikelihood")
    with pytest.raises(ValueError, match="mode loglikelihood goes with the extractor"):
        PoolProtocol(extractor="loglikelihood")
