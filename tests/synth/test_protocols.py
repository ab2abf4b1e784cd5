"""Asking by a pool's protocol (synth.protocols), worked examples (synth.few_shot) and
templates that render the examples themselves (synth.prompter)."""

from __future__ import annotations

import pytest

from itempool import LoadedProtocol, PoolItem, PoolProtocol, WorkedExample
from synth.errors import SynthError
from synth.few_shot import WorkedShots
from synth.generation import GenerationSettings, settings_from_options
from synth.names import Style
from synth.prompter import Prompter
from synth.protocols import follow_protocol

ITEMS = tuple(
    PoolItem(
        id=f"{s}{k}",
        scenario=s,
        question=f"{s} question {k}?",
        options={"A": "x", "B": "y"},
        answer="A",
    )
    for s in ("math", "law")
    for k in range(3)
)
EXAMPLES = tuple(
    WorkedExample(
        id=f"val-{s}{k}",
        scenario=s,
        question=f"worked {s} {k}",
        options={"A": "p", "B": "q"},
        answer="B",
        worked=f"Because. The answer is (B) {k}.",
    )
    for s in ("law", "math")
    for k in range(4)
)
INLINE = (
    "About {{ scenario }}.\n{% for e in examples %}Q: {{ e.question }}\nA: {{ e.worked }}\n"
    "{% endfor %}Q: {{ question }}"
)


def _protocol(**fields: object) -> LoadedProtocol:
    spec = PoolProtocol(name="p", **fields)  # type: ignore[arg-type]
    template = INLINE if spec.template is not None else None
    examples = EXAMPLES if spec.examples is not None else None
    return LoadedProtocol(spec, template, examples)


def test_the_protocol_decides_what_the_user_did_not_set() -> None:
    protocol = _protocol(
        style="cot", temperature=0.0, max_tokens=300, extractor="mmlu-pro-official"
    )
    followed = follow_protocol(protocol, settings_from_options())
    assert followed.on_protocol and followed.style is Style.COT
    assert followed.settings.max_tokens == 300
    assert followed.settings.extractor == "mmlu-pro-official"
    changed = follow_protocol(protocol, settings_from_options(temperature=0.5), "direct")
    assert changed.differs == ("style", "temperature")
    assert changed.settings.max_tokens == 300  # kept: not set by the user
    # setting a field to the protocol's own value is no departure
    same = follow_protocol(protocol, settings_from_options(max_tokens=300))
    assert same.on_protocol


def test_a_template_of_other_text_departs_however_it_is_named() -> None:
    protocol = _protocol(
        template="t.jinja", few_shot=2, examples="e.jsonl", few_shot_select="first"
    )
    other = GenerationSettings(prompt_template="{{ question }}", prompt_template_path="t.jinja")
    assert follow_protocol(protocol, other).differs == ("prompt_template",)


def test_the_first_examples_of_each_scenario_and_a_seeded_draw() -> None:
    first = WorkedShots.choose(EXAMPLES, 2, "first", seed=0)
    assert [e.id for e in first.examples_for(ITEMS[0])] == ["val-math0", "val-math1"]
    drawn = WorkedShots.choose(EXAMPLES, 2, "seeded", seed=3)
    again = WorkedShots.choose(EXAMPLES, 2, "seeded", seed=3)
    assert drawn == again
    assert all(e.scenario == "law" for e in drawn.examples_for(ITEMS[3]))
    lonely = PoolItem(
        id="z", scenario="chemistry", question="?", options={"A": "a", "B": "b"}, answer="A"
    )
    with pytest.raises(SynthError, match="no worked example of its scenario 'chemistry'"):
        first.examples_for(lonely)
    assert len(drawn.examples_for(lonely)) == 2  # a seeded draw falls back on every example


def test_a_template_that_uses_examples_renders_them_in_one_message() -> None:
    protocol = _protocol(
        template="t.jinja",
        few_shot=2,
        examples="e.jsonl",
        few_shot_select="first",
        system_prompt="",
    )
    settings = follow_protocol(protocol).settings
    prompter = Prompter.for_pool(settings, ITEMS, "en", seed=0)
    messages = prompter.first(ITEMS[0], Style.DIRECT)
    assert messages == (
        (
            "user",
            "About math.\nQ: worked math 0\nA: Because. The answer is (B) 0.\n"
            "Q: worked math 1\nA: Because. The answer is (B) 1.\nQ: math question 0?",
        ),
    )
    assert prompter.shown() == ()  # worked examples are not pool items


def test_worked_examples_as_turns_without_such_a_template() -> None:
    protocol = _protocol(few_shot=1, examples="e.jsonl", few_shot_select="first")
    prompter = Prompter.for_pool(follow_protocol(protocol).settings, ITEMS, "en", seed=0)
    roles = [role for role, _ in prompter.first(ITEMS[3], Style.DIRECT)]
    assert roles == ["system", "user", "assistant", "user"]
    assert prompter.first(ITEMS[3], Style.DIRECT)[2][1] == "Because. The answer is (B) 0."


def test_protocols_that_cannot_be_followed_are_refused() -> None:
    with pytest.raises(ValueError, match="must be a file inside the pool folder"):
        PoolProtocol(template="../outside.jinja")
    with pytest.raises(ValueError, match="few_shot is 0"):
        PoolProtocol(examples="e.jsonl")
    with pytest.raises(ValueError, match="takes a file's first examples"):
        PoolProtocol(few_shot=2, few_shot_select="first")
    with pytest.raises(SynthError, match="unknown answer extractor 'guess'"):
        follow_protocol(LoadedProtocol(PoolProtocol(extractor="guess")))
