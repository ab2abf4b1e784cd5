"""A pool keeps how its references were asked: ``cat synth --styles cot`` writes its
protocol beside the responses, ``cat calibrate --pool`` gives it to the pool, and ``cat
assess`` then asks in the chain-of-thought style without being told."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

import cat
from cat.cli.app import app
from synth.local_server import LocalServer
from synth.names import Style
from synth.prompts import instructions

runner = CliRunner()
MINI = Path(__file__).parents[2] / "examples" / "mini_pool"
AGENTS = {"m1": 0.2, "m2": 0.35, "m3": 0.5, "m4": 0.65, "m5": 0.8, "m6": 0.9}


def test_a_pool_calibrated_on_cot_answers_is_assessed_in_cot(tmp_path: Path) -> None:
    pool = tmp_path / "pool"
    shutil.copytree(MINI, pool)
    items = cat.load_pool(pool).items
    responses = tmp_path / "responses.jsonl"
    with LocalServer(items, {**AGENTS, "new": 0.7}) as server:
        synth = runner.invoke(
            app,
            [
                "synth",
                *("--pool", str(pool), "--agents", ",".join(AGENTS)),
                *("--participants", "singles", "--styles", "cot"),
                *("--base-url", server.base_url, "--store", str(tmp_path / "run.db")),
                *("--out", str(responses), "--temperature", "0.2"),
            ],
        )
        assert synth.exit_code == 0, synth.output
        bundle = json.loads((tmp_path / "responses.protocol.json").read_text(encoding="utf-8"))
        assert bundle["protocol"]["style"] == "cot"
        assert bundle["protocol"]["temperature"] == 0.2
        calibrated = runner.invoke(
            app,
            ["calibrate", str(responses), "--pool", str(pool), "--model", "1pl", "--no-cross-fit"],
        )
        assert calibrated.exit_code == 0, calibrated.output
        assert "protocol cat synth (cot style) from" in calibrated.output
        manifest = json.loads((pool / "pool.json").read_text(encoding="utf-8"))
        assert manifest["protocol"]["style"] == "cot"
        server_calls = len(server.records)
        out = tmp_path / "new.json"
        assessed = runner.invoke(
            app,
            [
                "assess",
                *("--pool", str(pool), "--model", "new", "--length", "5"),
                *("--base-url", server.base_url, "--store", str(tmp_path / "assess.db")),
                *("--out", str(out)),
            ],
        )
        assert assessed.exit_code == 0, assessed.output
        asked = server.records[server_calls:]
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["settings"]["protocol"] == {
        "name": "cat synth",
        "source": None,
        "style": "cot",
        "followed": True,
        "differs": [],
        "form": "default",
    }
    by_id = {item.id: item for item in items}
    assert len(asked) == 5
    for record in asked:
        assert record.temperature == 0.2
        assert record.messages is not None and record.item_id is not None
        user = record.messages[-1][1]
        assert user.endswith(instructions(by_id[record.item_id], "en", Style.COT))
