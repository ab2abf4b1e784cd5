"""Every prompt ``synth`` sends, in English and Chinese, in one place.

``PROMPT_VERSION`` goes into every stored call and result: change it whenever any text
below changes, so that answers from different prompts are never mixed unknowingly (the
run store's cache key covers the messages themselves, so a changed prompt is a new call).

Roles (DESIGN.md): a single participant answers once. In an ordered pair LLM1 answers
(generation), LLM2 reviews that answer and gives its own (debate), and LLM1 gives the
final answer in the light of the review (reflection). A style of "direct" asks for the
answer alone, "cot" for reasoning first (as the CliMedBench authors compared).

An open item (issue 15) has no options: it is answered in free text, and an item with a
numeric answer asks for a last line "Final answer: <number>" ("最终答案：<数值>"), which
``synth.numeric_answer`` reads. In a pair the partner's free-text answer is shown as text,
exactly as a choice answer is.
"""

from __future__ import annotations

from itempool import ItemType, PoolItem
from itempool.languages import is_language_code, prompt_language
from synth.errors import SynthError
from synth.names import Style as Style

#: 1: the choice prompts. 2: open items' prompts added; every choice prompt is still
#: byte for byte that of 1 (tests pin it), so a store written under 1 resumes without
#: asking anything again.
PROMPT_VERSION = "2"

#: A chat message as sent: (role, content).
Message = tuple[str, str]


SYSTEM = {
    "en": "You are a helpful assistant.",
    "zh": "你是一个乐于助人的助手。",
}

_FORMAT = {
    "en": {
        ItemType.SINGLE: "Choose exactly one option. End your reply with a line 'Answer: X', "
        "where X is the option's letter.",
        ItemType.MULTI: "One or more options are correct. End your reply with a line "
        "'Answer: XY...', listing the letters of every correct option.",
        ItemType.ORDER: "Put the options in the right order. End your reply with a line "
        "'Answer: XYZ...', giving every option's letter once, in order.",
        ItemType.OPEN: "Answer in your own words.",
    },
    "zh": {
        ItemType.SINGLE: "只选一个选项。回答最后一行写“答案：X”，X为选项字母。",
        ItemType.MULTI: "可能有一个或多个正确选项。"
        "回答最后一行写“答案：XY…”，列出所有正确选项的字母。",
        ItemType.ORDER: "请将选项排成正确的顺序。"
        "回答最后一行写“答案：XYZ…”，按顺序给出每个选项的字母各一次。",
        ItemType.OPEN: "请用文字作答。",
    },
}

# Added after the open item's format when it has a numeric answer.
_NUMERIC = {
    "en": "End your reply with a line 'Final answer: <number>'.",
    "zh": "回答最后一行写“最终答案：<数值>”。",
}

_STYLE = {
    "en": {
        Style.DIRECT: "Give the answer only, without explanation.",
        Style.COT: "Think it through step by step before you answer.",
    },
    "zh": {
        Style.DIRECT: "只给出答案，不要解释。",
        Style.COT: "请先逐步分析，再给出答案。",
    },
}

_TEXT = {
    "en": {
        "question": "Question:",
        "options": "Options:",
        "debate": "Another assistant answered this question as follows.\n\n"
        "--- their answer ---\n{first}\n--- end ---\n\n"
        "Check their reasoning and point out any errors, then give your own answer.",
        "reflect": "You answered this question earlier:\n\n--- your answer ---\n{first}\n"
        "--- end ---\n\nAnother assistant reviewed it:\n\n--- review ---\n{review}\n--- end "
        "---\n\nWeigh the review against your answer and give your final answer.",
    },
    "zh": {
        "question": "题目：",
        "options": "选项：",
        "debate": "另一位助手对这道题的回答如下。\n\n--- 对方的回答 ---\n{first}\n--- 结束 ---\n\n"
        "请检查其推理并指出错误，然后给出你自己的答案。",
        "reflect": "你之前对这道题的回答：\n\n--- 你的回答 ---\n{first}\n--- 结束 ---\n\n"
        "另一位助手的评审意见：\n\n--- 评审 ---\n{review}\n--- 结束 ---\n\n"
        "请权衡评审意见与你的回答，给出最终答案。",
    },
}


def _language(language: str) -> str:
    """The built-in prompts' language for a pool in ``language``: Chinese for Chinese,
    English for any other (``itempool.languages``)."""
    if not is_language_code(language):
        raise SynthError(f"{language!r} is not a language code (en, zh, fr, pt-BR, ...)")
    return prompt_language(language)


def system_message(language: str) -> str:
    """The built-in system message for a pool in ``language``."""
    return SYSTEM[_language(language)]


def question_block(item: PoolItem, language: str) -> str:
    """The question and its lettered options (an open item has none)."""
    text = _TEXT[_language(language)]
    if item.type is ItemType.OPEN:
        return f"{text['question']}\n{item.question}"
    options = "\n".join(f"{letter}. {body}" for letter, body in item.options.items())
    return f"{text['question']}\n{item.question}\n\n{text['options']}\n{options}"


def _instructions(item: PoolItem, language: str, style: Style) -> str:
    form = _FORMAT[language][item.type]
    if item.type is ItemType.OPEN and item.numeric_answer is not None:
        form = f"{form}\n{_NUMERIC[language]}"
    return f"{_STYLE[language][style]}\n{form}"


def instructions(item: PoolItem, language: str, style: Style) -> str:
    """The style line and the answer format the grader reads (``Answer: X``), as the
    built-in prompts end; a prompt template gets it as ``instructions``."""
    return _instructions(item, _language(language), style)


def user_prompt(item: PoolItem, language: str, style: Style) -> str:
    """The built-in user message of the first answer: the question, then instructions."""
    lang = _language(language)
    return f"{question_block(item, lang)}\n\n{_instructions(item, lang, style)}"


#: The answer line of a solved few-shot example, as ``synth.grading`` reads it.
_ANSWER_LINE = {"en": "Answer: {}", "zh": "答案：{}"}
_FINAL_LINE = {"en": "Final answer: {}", "zh": "最终答案：{}"}


def example_answer(item: PoolItem, language: str) -> str:
    """The assistant turn of ``item`` shown as a solved example: its key as the answer
    line a reply must end with, or an open item's first reference answer (and its
    numeric answer on the final line the prompt asks for)."""
    lang = _language(language)
    if item.type is not ItemType.OPEN:
        return _ANSWER_LINE[lang].format(item.answer)
    lines = list(item.references[:1])
    if item.numeric_answer is not None:
        value = item.numeric_answer.value
        lines.append(_FINAL_LINE[lang].format(int(value) if value.is_integer() else value))
    return "\n".join(lines)


def generation(item: PoolItem, language: str, style: Style) -> tuple[Message, ...]:
    """The first (or only) answer to ``item``."""
    lang = _language(language)
    return (("system", SYSTEM[lang]), ("user", user_prompt(item, lang, style)))


def debate(item: PoolItem, language: str, style: Style, first: str) -> tuple[Message, ...]:
    """LLM2's review of LLM1's answer ``first``, ending in its own answer."""
    lang = _language(language)
    ask = _TEXT[lang]["debate"].format(first=first.strip())
    user = f"{question_block(item, lang)}\n\n{ask}\n{_instructions(item, lang, style)}"
    return (("system", SYSTEM[lang]), ("user", user))


def reflection(
    item: PoolItem, language: str, style: Style, first: str, review: str
) -> tuple[Message, ...]:
    """LLM1's final answer, given its own first answer and LLM2's review."""
    lang = _language(language)
    ask = _TEXT[lang]["reflect"].format(first=first.strip(), review=review.strip())
    user = f"{question_block(item, lang)}\n\n{ask}\n{_instructions(item, lang, style)}"
    return (("system", SYSTEM[lang]), ("user", user))
