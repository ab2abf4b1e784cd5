"""Prompts: per language and role, with the question and options in them."""

from __future__ import annotations

import pytest

from synth import prompts
from synth.errors import SynthError
from synth.prompts import Style
from tests.synth.pools import EN_ITEMS, ZH_ITEMS


def test_generation_debate_reflection_carry_what_each_role_needs() -> None:
    item = EN_ITEMS[0]
    gen = prompts.generation(item, "en", Style.COT)
    assert gen[0] == ("system", "You are a helpful assistant.")
    assert item.question in gen[1][1] and "B. 500 mg" in gen[1][1]
    assert "step by step" in gen[1][1] and "Answer: X" in gen[1][1]
    deb = prompts.debate(item, "en", Style.DIRECT, "I think A.")
    assert "I think A." in deb[1][1] and "errors" in deb[1][1]
    ref = prompts.reflection(item, "en", Style.DIRECT, "I think A.", "A is wrong; B.")
    assert "I think A." in ref[1][1] and "A is wrong; B." in ref[1][1]


def test_chinese_prompts_for_a_chinese_pool() -> None:
    gen = prompts.generation(ZH_ITEMS[0], "zh", Style.DIRECT)
    assert gen[0][1] == "你是一个乐于助人的助手。" and "答案：X" in gen[1][1]
    assert "题目：" in gen[1][1]
    with pytest.raises(SynthError, match="no prompts for language"):
        prompts.generation(ZH_ITEMS[0], "fr", Style.DIRECT)
    assert prompts.PROMPT_VERSION
