"""The online run that a batch run must match: the same pool, agents and simulated
models, asked one call at a time over ``/v1/chat/completions``."""

from __future__ import annotations

from pathlib import Path

from synth.job import run_synthesis
from synth.local_server import LocalServer
from tests.synth.pools import EN_ITEMS

#: The simulated models of the batch tests.
MODELS = {"good": 0.9, "bad": 0.3}


def online_responses(pool: Path, folder: Path, seed: int = 0, limit: int = 8) -> Path:
    """Run "good,bad" online on the first ``limit`` items of ``pool`` against the local
    server seeded ``seed``; the responses file (in ``folder``, made here)."""
    folder.mkdir()
    with LocalServer(EN_ITEMS, MODELS, seed=seed) as server:
        run_synthesis(
            pool,
            "good,bad",
            base_url=server.base_url,
            store=folder / "run.db",
            out=folder / "responses.jsonl",
            limit=limit,
        )
    return folder / "responses.jsonl"
