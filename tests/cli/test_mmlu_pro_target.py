"""``cat assess --pool mmlu-pro`` against an endpoint that replays a real model's answers.

The endpoint path must lose nothing: a reference model's recorded answers, replayed by
the local server over HTTP (the real ``openai`` client, the real grader), give exactly
the assessment that ``cat.assess`` gives with the same answers read from the file. The
issue's statistical target (the model left out of the calibration: its accuracy inside
the 90% interval, its rank within ±2) needs a calibration on the 31 other models for
each model, minutes apiece: benchmarks/bench_mmlu_pro_pool.py measures it, model by
model, with the cross-fit on training models only.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import cat
from cat.cli.app import app
from itempool import REFERENCE_ANSWERS
from itempool.shipped import SHIPPED_POOLS
from synth.local_server import LocalServer
from synth.local_server.replay import read_replay

ANSWERS = SHIPPED_POOLS / "mmlu-pro" / REFERENCE_ANSWERS
# Two references that answered every item (the server cannot replay "not answered": it
# sends a reply without an answer, which a live model's grading counts as wrong).
MODELS = ("Meta-Llama-3_1-8B-Instruct", "Qwen1.5-72B-Chat")
LENGTH = 60
runner = CliRunner()


def test_an_endpoint_replaying_real_answers_gets_the_library_assessment(tmp_path: Path) -> None:
    pool = cat.load_pool("mmlu-pro")
    replay = read_replay(ANSWERS, MODELS)
    with LocalServer(pool.items, {}, replay=replay) as server:
        result = runner.invoke(
            app,
            [
                "assess",
                *("--pool", "mmlu-pro", "--length", str(LENGTH)),
                *(arg for name in MODELS for arg in ("--model", name)),
                *("--base-url", server.base_url, "--store", str(tmp_path / "run.db")),
                *("--out", str(tmp_path / "runs")),
            ],
        )
        assert result.exit_code == 0, result.output
        calls = sum(r.outcome == "ok" for r in server.records)
    # Fewer calls than items where two asked items are the same question with the same
    # options (MMLU-Pro repeats 159): the run store answers the second from the first.
    assert 0.95 * LENGTH * len(MODELS) <= calls <= LENGTH * len(MODELS)
    for name in MODELS:
        live = json.loads((tmp_path / "runs" / f"{name}.json").read_text(encoding="utf-8"))
        offline = cat.assess(pool, cat.ReplayExaminee(ANSWERS, name), length=LENGTH)
        assert live["n_items"] == LENGTH and live["pool"]["name"] == "mmlu-pro"
        assert [i["id"] for i in live["items"]] == [i.id for i in offline.items]
        assert [i["response"] for i in live["items"]] == [i.response for i in offline.items]
        assert live["theta"] == offline.theta
        assert live["predicted_accuracy"] == offline.predicted_accuracy.model_dump()
        assert live["rank"]["position"] == offline.rank.position
        # Each answer came with the raw reply it was graded from.
        assert all(i["reply"] for i in live["items"])
