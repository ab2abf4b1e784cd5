"""Named answer extractors (synth.extractors) and reasoning replies (synth.reasoning)."""

from __future__ import annotations

import pytest

from itempool import ItemType, PoolItem
from synth.errors import SynthError
from synth.extractors import check_extractor, extract_with, mmlu_pro_official
from synth.reasoning import split_reasoning
from synth.scoring import score_reply
from tests.synth.official_rules import official_letter

OPTIONS = {letter: f"option {letter.lower()}" for letter in "ABCDEFGHIJ"}
ITEM = PoolItem(id="q1", question="Which?", options=OPTIONS, answer="C")


REPLIES = [
    # the first "answer is" wins, where the built-in reader takes the last statement
    "The answer is (C).\n\nNow the summary: the answer is (B).",
    "Let's think. So the answer is C. Finally, Answer: D",
    "Answer: B\nOn reflection, Answer: E",
    "Reasoning...\nAnswer:\n\nF",
    "It could be A or it could be G.",
    "no letter at all here",
    "**The answer is (H)**",
    "the answer is **(I)**",
    "The Answer is (J).",
    "I think B. Or C? Hmm, C.",
    "",
    "x Answer: B y Answer: C\nAnswer: D",
    "Answer:\n\nAnswer: E then Answer: F\nAnswer: G",
    "answer:B and answer: c",
    "ANSWER: B\nAnswer: C",
]


@pytest.mark.parametrize("reply", REPLIES)
def test_the_official_rules_read_what_the_official_regexes_read(reply: str) -> None:
    assert mmlu_pro_official(reply) == official_letter(reply.replace("**", ""))


def test_the_first_answer_statement_wins_under_the_official_rules() -> None:
    reply = "The answer is (C).\n\nNow, let's summarize all the answers: the answer is (B)."
    assert extract_with("mmlu-pro-official", reply, ItemType.SINGLE, OPTIONS) == "C"
    # the built-in reader takes the last statement
    assert extract_with("builtin", reply, ItemType.SINGLE, OPTIONS) == "B"


def test_two_rules_stop_before_the_last_letter_and_keep_bold() -> None:
    assert mmlu_pro_official("We refer to Wikipedia. The values are (A).", rules=2) is None
    assert mmlu_pro_official("We refer to Wikipedia. The values are (A).") == "A"
    assert mmlu_pro_official("answer is **B**", rules=2, strip_bold=False) is None
    assert mmlu_pro_official("answer is **B**") == "B"


def test_a_long_reply_is_read_in_linear_time() -> None:
    # One line of 400,000 characters: the official second pattern would take minutes.
    reply = "A " + "x " * 200_000 + "and finally D"
    assert mmlu_pro_official(reply) == "D"
    assert mmlu_pro_official("Answer: A " + "x " * 200_000 + "Answer: B") == "B"


def test_a_letter_read_officially_is_graded_against_the_key() -> None:
    right = score_reply("the answer is (C)", ITEM, extractor="mmlu-pro-official")
    wrong = score_reply("the answer is (J)", ITEM, extractor="mmlu-pro-official")
    none = score_reply("no idea", ITEM, extractor="mmlu-pro-official")
    assert (right.answer, right.correct, right.points) == ("C", True, 1)
    assert (wrong.answer, wrong.correct, wrong.points) == ("J", False, 0)
    assert (none.answer, none.correct, none.status.value) == (None, False, "unparsed")


def test_a_letter_beyond_the_options_is_an_answer_and_wrong() -> None:
    item = PoolItem(id="q2", question="Which?", options={"A": "x", "B": "y"}, answer="A")
    scored = score_reply("the answer is (F)", item, extractor="mmlu-pro-official")
    assert (scored.answer, scored.correct, scored.status.value) == ("F", False, "ok")


def test_unknown_extractors_and_other_item_types_are_refused() -> None:
    with pytest.raises(SynthError, match="unknown answer extractor 'nosuch'; known: builtin"):
        check_extractor("nosuch")
    with pytest.raises(SynthError, match="reads single-choice answers, not multi"):
        check_extractor("mmlu-pro-official", ItemType.MULTI)


def test_a_think_block_is_split_from_the_answer() -> None:
    reply = "<think>Maybe the answer is (A)... no, B fits.</think>\n\nThe answer is (B)."
    split = split_reasoning(reply)
    assert split.answer == "The answer is (B)."
    assert split.reasoning == "Maybe the answer is (A)... no, B fits."
    # graded on the final answer only, under the first-statement rule
    assert mmlu_pro_official(split.answer) == "B"
    assert mmlu_pro_official(reply) == "A"


def test_a_closing_tag_alone_splits_and_an_unclosed_block_leaves_no_answer() -> None:
    assert split_reasoning("thinking about A\n</think>Answer: C") == (
        "Answer: C",
        "thinking about A",
    )
    cut = split_reasoning("<think>The answer is (A) unless")
    assert cut.answer == "" and cut.reasoning == "The answer is (A) unless"
    assert split_reasoning("plain reply") == ("plain reply", "")
