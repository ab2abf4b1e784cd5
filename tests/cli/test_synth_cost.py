"""``cat synth --dry-run``: every call of a run counted before the first one, each
prompt rendered as it would be sent, and the calls the store holds counted apart."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from cat.cli.app import app
from itempool.protocol_bundle import bundle_beside, read_bundle
from synth.estimate import dry_run
from synth.job import prepare_run
from synth.local_server import LocalServer
from synth.store import RunStore
from tests.synth.pools import EN_ITEMS, write_pool

runner = CliRunner()


def _args(pool: Path, url: str, tmp_path: Path, *extra: str) -> list[str]:
    return [
        "synth",
        "--pool",
        str(pool),
        "--agents",
        "x,y",
        "--base-url",
        url,
        "--store",
        str(tmp_path / "run.db"),
        "--out",
        str(tmp_path / "r.jsonl"),
        *extra,
    ]


def test_a_dry_run_counts_every_call_and_asks_none(tmp_path: Path) -> None:
    pool = write_pool(tmp_path / "pool", EN_ITEMS)
    with LocalServer(EN_ITEMS, {"x": 0.8, "y": 0.4}) as server:
        planned = runner.invoke(
            app, _args(pool, server.base_url, tmp_path, "--dry-run", "--max-tokens", "30")
        )
        assert planned.exit_code == 0, planned.output
        assert server.completed_keys() == [] and not (tmp_path / "run.db").exists()
        ran = runner.invoke(app, _args(pool, server.base_url, tmp_path))
        assert ran.exit_code == 0, ran.output
        made = len(server.completed_keys())
    text = " ".join(planned.output.split())
    # Each model, each item: its answer alone (its pair's generation is the same call),
    # the debate of the other's pair and the reflection of its own; two calls that come
    # out the same are asked once.
    n = len(EN_ITEMS)
    assert f"{6 * n:,} calls to make" in text and "a reply 30 tokens: max_tokens" in text
    assert 6 * n - 3 <= made <= 6 * n
    # After the run, the store holds every call: a dry run finds nothing left to ask.
    plan = prepare_run(
        pool, "x,y", store=tmp_path / "run.db", out=tmp_path / "r.jsonl", offline=True
    )
    after = dry_run(plan)
    assert after.calls == 0 and sum(m.stored for m in after.models) == made
    with RunStore(tmp_path / "run.db") as store:
        assert after.reply_tokens == store.mean_completion_tokens(["x", "y"], "generation")
    assert after.reply_source.startswith("the mean of these models' replies")


def test_the_protocol_records_the_references_reply_length(tmp_path: Path) -> None:
    pool = write_pool(tmp_path / "pool", EN_ITEMS)
    with LocalServer(EN_ITEMS, {"x": 0.8, "y": 0.4}) as server:
        args = _args(pool, server.base_url, tmp_path, "--participants", "singles")
        assert runner.invoke(app, args).exit_code == 0
    bundle = read_bundle(bundle_beside(tmp_path / "r.jsonl"))
    with RunStore(tmp_path / "run.db") as store:
        mean = store.mean_completion_tokens(["x", "y"], "generation")
        assert store.mean_completion_tokens(["nobody"], "generation") is None
    assert mean is not None and bundle.protocol.reply_tokens == round(mean, 1)
