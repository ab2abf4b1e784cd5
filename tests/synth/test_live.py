"""One real call to a live OpenAI-compatible API; skipped without a key.

    OPENAI_API_KEY=sk-... [LIVE_BASE_URL=https://api.openai.com/v1] [LIVE_MODEL=gpt-4o-mini] \\
        pytest -m live tests/synth/test_live.py
"""

from __future__ import annotations

import asyncio
import os

import pytest

from synth.backend import ChatRequest, OpenAIBackend
from synth.grading import grade
from synth.prompts import Style, generation
from tests.synth.pools import EN_ITEMS

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not os.environ.get("OPENAI_API_KEY"), reason="no OPENAI_API_KEY"),
]


def test_a_real_model_answers_a_pool_question() -> None:
    base_url = os.environ.get("LIVE_BASE_URL", "https://api.openai.com/v1")
    model = os.environ.get("LIVE_MODEL", "gpt-4o-mini")
    item = EN_ITEMS[0]
    backend = OpenAIBackend(base_url, timeout=60)

    async def ask() -> str:
        try:
            reply = await backend.complete(ChatRequest(model, generation(item, "en", Style.COT)))
            return reply.text
        finally:
            await backend.close()

    verdict = grade(asyncio.run(ask()), item)
    assert verdict.status.value == "ok" and verdict.correct
