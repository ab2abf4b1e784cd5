"""The LLM judge of open answers: its prompt, in English and Chinese, and reading its score.

The judge sees the question, the rubric (if any), the reference answers (if any), the
numeric answer with its tolerance (if any) and the reply to grade, and is asked for a
whole number 0..max_score on a last line "Score: k" ("评分：k").

``JUDGE_PROMPT_VERSION`` keys every stored judgement (with the item, the participant, the
reply's hash and the judge model): change it whenever any text below changes, so that a
judgement is never reused under another prompt.

``parse_judge_score`` reads the last score statement of the judge's reply: "Score: 3",
"**Score:** 3", "Score = 3/4", "Final score: 3", "评分：3", "得分为3分". A score that is
not a whole number, lies outside 0..max_score, or is out of another total ("3/5" when
the item scores 0..4) is refused, as is a reply without any score: the judgement is
then recorded as failed and asked again by the next run.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from itempool import PoolItem
from itempool.languages import is_language_code, prompt_language
from synth.errors import SynthError
from synth.prompts import Message

JUDGE_PROMPT_VERSION = "1"

SYSTEM = {
    "en": "You are a careful, impartial grader of answers.",
    "zh": "你是一位认真、公正的答案评分员。",
}

# The reply under judgement sits between these lines (the local server's scripted judge
# finds it there: ``judged_reply``).
REPLY_START = {"en": "--- answer to grade ---", "zh": "--- 待评分的回答 ---"}
REPLY_END = {"en": "--- end of answer ---", "zh": "--- 回答结束 ---"}

_TEXT = {
    "en": {
        "intro": "Grade an answer to the question below.",
        "question": "Question:",
        "references": "Reference answer(s):",
        "rubric": "Rubric:",
        "numeric": "Numeric answer: {value}, accepted {tolerance}.",
        "exact": "only when exactly equal",
        "within": "within {parts}",
        "or": " or ",
        "percent": "{value}% of it",
        "ask": "Compare the answer's content with {basis}; ignore its style and length. Score "
        "it from 0 (wrong or missing) to {top} (fully correct and complete). Explain "
        "briefly, then end your reply with a line 'Score: k', where k is a whole number "
        "from 0 to {top}.",
        "basis_refs": "the reference answer(s)",
        "basis_rubric": "the reference answer(s) and the rubric",
        "basis_number": "the numeric answer",
        "basis_rubric_only": "the numeric answer and the rubric",
    },
    "zh": {
        "intro": "请为下面这道题的一个回答评分。",
        "question": "题目：",
        "references": "参考答案：",
        "rubric": "评分标准：",
        "numeric": "数值答案：{value}，{tolerance}即算正确。",
        "exact": "完全相等时",
        "within": "误差在{parts}以内",
        "or": "或",
        "percent": "其{value}%",
        "ask": "请将回答的内容与{basis}比较，不必考虑文风和长短。评分从0（错误或未作答）到"
        "{top}（完全正确且完整）。先简要说明理由，回答最后一行写“评分：k”，k为0到{top}的整数。",
        "basis_refs": "参考答案",
        "basis_rubric": "参考答案和评分标准",
        "basis_number": "数值答案",
        "basis_rubric_only": "数值答案和评分标准",
    },
}


@dataclass(frozen=True)
class Judge:
    """The judge: a model name as its endpoint knows it, and the endpoint's base URL
    ("" for a judge only asked through batch files, which call no endpoint)."""

    model: str
    base_url: str

    def __post_init__(self) -> None:
        if not self.model:
            raise SynthError("the judge needs a model name")
        if self.base_url and not self.base_url.startswith(("http://", "https://")):
            raise SynthError(f"judge {self.model}: base URL must start with http(s)://")


def _language(language: str) -> str:
    """The judge prompt's language for a pool in ``language``: Chinese for Chinese,
    English for any other (``itempool.languages``)."""
    if not is_language_code(language):
        raise SynthError(f"{language!r} is not a language code (en, zh, fr, pt-BR, ...)")
    return prompt_language(language)


def _number(value: float) -> str:
    return f"{value:.12g}"


def judge_messages(item: PoolItem, language: str, reply: str) -> tuple[Message, ...]:
    """The judge's prompt for ``reply`` to the open ``item``."""
    lang = _language(language)
    text = _TEXT[lang]
    parts = [text["intro"], f"{text['question']}\n{item.question}"]
    if item.references:
        listed = "\n".join(f"{k}. {ref}" for k, ref in enumerate(item.references, 1))
        parts.append(f"{text['references']}\n{listed}")
    key = item.numeric_answer
    if key is not None:
        within = []
        if key.abs_tol > 0:
            within.append(_number(key.abs_tol))
        if key.rel_tol > 0:
            within.append(text["percent"].format(value=_number(key.rel_tol * 100)))
        tolerance = (
            text["within"].format(parts=text["or"].join(within)) if within else text["exact"]
        )
        parts.append(text["numeric"].format(value=_number(key.value), tolerance=tolerance))
    if item.rubric:
        parts.append(f"{text['rubric']}\n{item.rubric}")
    parts.append(f"{REPLY_START[lang]}\n{reply.strip()}\n{REPLY_END[lang]}")
    basis = "basis_refs" if item.references else "basis_number"
    if item.rubric:
        basis = "basis_rubric" if item.references else "basis_rubric_only"
    parts.append(text["ask"].format(basis=text[basis], top=item.max_score))
    return (("system", SYSTEM[lang]), ("user", "\n\n".join(parts)))


def judged_reply(prompt: str) -> str | None:
    """The reply a judge prompt (its user message) asks to grade, or None."""
    for lang, start in REPLY_START.items():
        begin = prompt.find(start + "\n")
        end = prompt.rfind("\n" + REPLY_END[lang])
        if begin >= 0 and end >= begin + len(start):
            return prompt[begin + len(start) + 1 : end]
    return None


# "Score: 3", "Score = 3/4", "Score is 3", "评分：3", "得分为3分"; markdown and full-width
# forms are folded first.
_SCORE_RE = re.compile(
    r"(?:(?i:\bscore)(?:[ \t]+is)?|评分|得分|分数)[ \t]*(?:[:=]|为|是)?[ \t]*"
    r"(?P<value>[-+]?\d+(?:\.\d+)?)(?!\d|\.\d)[ \t]*分?"
    r"(?:[ \t]*(?:/|(?i:out[ \t]+of))[ \t]*(?P<total>\d+))?"
)
_NOISE_RE = re.compile(r"[*_`#]|\\\(|\\\)|\$")


@dataclass(frozen=True)
class JudgeScore:
    """The judge's verdict on one reply: ``points`` 0..max_score, or None with the
    ``problem`` that made it unusable."""

    points: int | None
    problem: str | None = None


def parse_judge_score(text: str, max_score: int) -> JudgeScore:
    """The score the judge's reply ``text`` gives (module docstring)."""
    clean = _NOISE_RE.sub("", unicodedata.normalize("NFKC", text))
    matches = list(_SCORE_RE.finditer(clean))
    if not matches:
        return JudgeScore(None, "no 'Score: k' line")
    last = matches[-1]
    raw, total = last.group("value"), last.group("total")
    value = float(raw)
    if value != int(value):
        return JudgeScore(None, f"score {raw} is not a whole number")
    if total is not None and int(total) != max_score:
        return JudgeScore(None, f"scored out of {total}, not out of {max_score}")
    if not 0 <= value <= max_score:
        return JudgeScore(None, f"score {raw} is outside 0..{max_score}")
    return JudgeScore(int(value))
