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
    # Any other language is asked with the English prompts; a non-code is refused.
    english = prompts.generation(ZH_ITEMS[0], "en", Style.DIRECT)
    assert prompts.generation(ZH_ITEMS[0], "fr", Style.DIRECT) == english
    with pytest.raises(SynthError, match="not a language code"):
        prompts.generation(ZH_ITEMS[0], "French", Style.DIRECT)
    assert prompts.PROMPT_VERSION


def test_open_items_are_asked_in_free_text() -> None:
    from tests.synth.pools import OPEN_ITEMS, ZH_OPEN_ITEMS

    words = prompts.generation(OPEN_ITEMS[2], "en", Style.COT)[1][1]
    assert words.startswith(f"Question:\n{OPEN_ITEMS[2].question}\n\n")
    assert "Options:" not in words and "Answer in your own words." in words
    assert "Final answer" not in words and "step by step" in words
    number = prompts.generation(OPEN_ITEMS[0], "en", Style.DIRECT)[1][1]
    assert number.endswith(
        "Answer in your own words.\nEnd your reply with a line 'Final answer: <number>'."
    )
    zh = prompts.generation(ZH_OPEN_ITEMS[0], "zh", Style.DIRECT)[1][1]
    assert zh.endswith("请用文字作答。\n回答最后一行写“最终答案：<数值>”。")
    review = prompts.debate(OPEN_ITEMS[2], "en", Style.DIRECT, "Oral glucose.")[1][1]
    assert "--- their answer ---\nOral glucose.\n--- end ---" in review
    final = prompts.reflection(OPEN_ITEMS[0], "en", Style.DIRECT, "350", "Correct.")[1][1]
    assert "350" in final and "Correct." in final and "Final answer: <number>" in final


def test_choice_prompts_are_those_of_version_1() -> None:
    import sqlite3

    from synth.backend import ChatRequest
    from tests.synth.pools import MIXED_ITEMS
    from tests.synth.test_store import LEGACY

    messages = prompts.generation(EN_ITEMS[0], "en", Style.DIRECT)
    assert messages[1][1] == (
        "Question:\nA patient weighs 50 kg. At 10 mg/kg, what is the dose (item 0)?\n\n"
        "Options:\nA. 250 mg\nB. 500 mg\nC. 1000 mg\nD. 1500 mg\n\n"
        "Give the answer only, without explanation.\nChoose exactly one option. End your "
        "reply with a line 'Answer: X', where X is the option's letter."
    )
    assert prompts.PROMPT_VERSION == "2"
    # Every role's request is keyed as the v1 store (written before open items) keyed it.
    db = sqlite3.connect(":memory:")
    db.executescript((LEGACY / "mixed_store_v1.sql").read_text(encoding="utf-8"))
    calls = dict(db.execute("SELECT key, reply FROM calls").fetchall())
    for item in MIXED_ITEMS[:3]:  # single, multi, order
        first = ChatRequest("good", prompts.generation(item, "en", Style.DIRECT))
        review = ChatRequest("bad", prompts.debate(item, "en", Style.DIRECT, calls[first.key]))
        final = prompts.reflection(item, "en", Style.DIRECT, calls[first.key], calls[review.key])
        assert ChatRequest("good", final).key in calls
