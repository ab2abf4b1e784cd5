"""Prompts under generation settings: templates, system prompts, few-shot examples, keys."""

from __future__ import annotations

from typing import Any

import pytest

from itempool import ItemType, PoolItem
from itempool.items import NumericAnswer
from synth import prompts
from synth.errors import SynthError
from synth.few_shot import FewShot
from synth.generation import GenerationSettings
from synth.names import Style
from synth.prompter import Prompter
from tests.synth.pools import EN_ITEMS, ZH_ITEMS

ITEMS = tuple(EN_ITEMS)
TEMPLATE = (
    "[{{ scenario }}/{{ type }}/{{ id }}] {{ question }}\n"
    "{% for letter, text in choices %}{{ letter }}) {{ text }}\n{% endfor %}"
    "{{ options['B'] }}|{{ language }}\n{{ instructions }}"
)


def _prompter(**settings: Any) -> Prompter:
    return Prompter.for_pool(GenerationSettings(**settings), ITEMS, "en", seed=3)


@pytest.mark.parametrize("style", list(Style))
def test_default_settings_give_the_built_in_prompts_byte_for_byte(style: Style) -> None:
    prompter = Prompter.for_pool(GenerationSettings(), ITEMS, "en", seed=0)
    for item in ITEMS[:5]:
        assert prompter.first(item, style) == prompts.generation(item, "en", style)
        assert prompter.debate(item, style, "x") == prompts.debate(item, "en", style, "x")
        request = prompter.request("m", prompter.first(item, style), 0, item_id=item.id)
        legacy = prompts.generation(item, "en", style)
        # The key of a run without settings is the key it always had.
        from synth.backend import ChatRequest

        assert request.key == ChatRequest("m", legacy, 0.0, 0, None).key


def test_a_template_renders_the_items_fields() -> None:
    item = ITEMS[1]
    ((_, system), (_, user)) = _prompter(prompt_template=TEMPLATE).first(item, Style.DIRECT)
    assert system == prompts.SYSTEM["en"]
    lines = user.splitlines()
    assert lines[0] == f"[dosing/single/{item.id}] {item.question}"
    assert lines[1:5] == [f"{k}) {v}" for k, v in item.options.items()]
    assert lines[5] == f"{item.options['B']}|en"
    assert "\n".join(lines[6:]) == prompts.instructions(item, "en", Style.DIRECT)


def test_a_misspelt_field_is_named_before_any_call() -> None:
    prompter = _prompter(prompt_template="{{ qestion }}\n{{ instructions }}")
    with pytest.raises(SynthError, match=r"'qestion' is undefined .*question"):
        prompter.check(ITEMS)


def test_an_item_of_a_shape_of_its_own_is_checked_and_named() -> None:
    # Only the last item lacks the meta key the template reads: the check renders one
    # item of each shape (not every item), so it still finds that one and names it.
    items = tuple(i.model_copy(update={"meta": {"note": "n"}}) for i in ITEMS)
    items += (ITEMS[-1].model_copy(update={"id": "odd", "meta": {}}),)
    template = "{{ meta.note }} {{ question }}\n{{ instructions }}"
    prompter = Prompter.for_pool(GenerationSettings(prompt_template=template), items, "en", 3)
    with pytest.raises(SynthError, match=r"on item odd: .*'note'"):
        prompter.check(items)
    prompter.check(items[:-1])


def test_the_template_is_sandboxed() -> None:
    prompter = _prompter(prompt_template="{{ question.__class__.__mro__ }}")
    with pytest.raises(SynthError, match="prompt template"):
        prompter.check(ITEMS[:1])


def test_the_system_prompt_is_replaced_or_left_out() -> None:
    item = ITEMS[0]
    own = _prompter(system_prompt="Be brief.")
    assert own.first(item, Style.DIRECT)[0] == ("system", "Be brief.")
    # a pair's review keeps its own user prompt, with the run's system message
    debate = own.debate(item, Style.DIRECT, "Answer: A")
    assert debate == (
        ("system", "Be brief."),
        prompts.debate(item, "en", Style.DIRECT, "Answer: A")[1],
    )
    none = _prompter(system_prompt="")
    assert [role for role, _ in none.first(item, Style.DIRECT)] == ["user"]


def test_few_shot_examples_come_from_the_items_scenario_fixed_by_seed() -> None:
    prompter = _prompter(few_shot=3)
    item = next(i for i in ITEMS if i.id not in prompter.shown())
    messages = prompter.first(item, Style.DIRECT)
    roles = [role for role, _ in messages]
    assert roles == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    examples = prompter.examples.examples_for(item)  # type: ignore[union-attr]
    assert len(examples) == 3 and all(e.scenario == item.scenario for e in examples)
    assert item not in examples
    for k, example in enumerate(examples):
        assert messages[1 + 2 * k][1] == prompts.user_prompt(example, "en", Style.DIRECT)
        assert messages[2 + 2 * k][1] == f"Answer: {example.answer}"
    # every item of a scenario is shown the same examples; the same seed draws them again
    same = [i for i in ITEMS if i.scenario == item.scenario and i.id not in prompter.shown()]
    ids = [e.id for e in examples]
    assert all([e.id for e in prompter.examples.examples_for(i)] == ids for i in same)  # type: ignore[union-attr]
    assert _prompter(few_shot=3).first(item, Style.DIRECT) == messages
    other = Prompter.for_pool(GenerationSettings(few_shot=3), ITEMS, "en", seed=4)
    assert other.first(item, Style.DIRECT) != messages


def test_an_item_is_never_its_own_example() -> None:
    shots = FewShot.draw(ITEMS, 2, seed=0)
    shown = set(shots.shown())
    assert len(shown) == 4  # two per scenario
    for item in ITEMS:
        examples = shots.examples_for(item)
        assert len(examples) == 2 and item not in examples
    with pytest.raises(SynthError, match="more than 30 items"):
        FewShot.draw(ITEMS, 30, seed=0)


def test_a_small_scenario_is_topped_up_from_the_pool() -> None:
    lonely = PoolItem(
        id="lonely",
        scenario="rare",
        question="Which one?",
        options={"A": "x", "B": "y"},
        answer="A",
    )
    shots = FewShot.draw((*ITEMS[:6], lonely), 2, seed=1)
    examples = shots.examples_for(lonely)
    assert len(examples) == 2 and lonely not in examples


def test_example_answers_follow_the_pools_language_and_item_type() -> None:
    assert prompts.example_answer(ZH_ITEMS[0], "zh") == "答案：A"
    opened = PoolItem(
        id="o1",
        type=ItemType.OPEN,
        question="How many mg?",
        references=("Five hundred mg.",),
        numeric_answer=NumericAnswer(value=500.0),
        max_score=4,
    )
    assert prompts.example_answer(opened, "en") == "Five hundred mg.\nFinal answer: 500"
    zh = Prompter.for_pool(GenerationSettings(few_shot=1), ZH_ITEMS, "zh", seed=0)
    item = next(i for i in ZH_ITEMS if i.id not in zh.shown())
    assert zh.first(item, Style.DIRECT)[2] == ("assistant", "答案：A")


def test_each_setting_changes_the_call_key() -> None:
    item = ITEMS[0]
    base = _prompter()
    key = base.request("m", base.first(item, Style.DIRECT), 0).key
    variants: list[dict[str, Any]] = [
        {"temperature": 0.5},
        {"max_tokens": 100},
        {"system_prompt": "Be brief."},
        {"prompt_template": TEMPLATE},
        {"few_shot": 1},
        {"stop": ["###"]},
        {"extra_body": {"reasoning_effort": "low"}},
    ]
    keys = set()
    for settings in variants:
        prompter = _prompter(**settings)
        keys.add(prompter.request("m", prompter.first(item, Style.DIRECT), 0).key)
    assert key not in keys and len(keys) == len(variants)
