"""Scripted free-text answers to open items, and scripted judges, for the local server.

A simulated model answers an open item right (one of its references word for word, or
the numeric answer), partly (the first half of a reference; for a numeric item, a
wrong number) or wrongly (an unrelated sentence, or a wrong number); a numeric item's
reply ends on "Final answer: <number>" ("最终答案：<数值>"), as the prompts ask.

A scripted judge reads the reply under judgement out of the judge prompt
(``synth.judge.judged_reply``), grades it as the reference metric does
(``synth.scoring``) and answers "Score: k" by its mode:

- ``fair``: the metric's points;
- ``harsh`` / ``lenient``: one point below / above them (within 0..max_score);
- ``noisy``: one below, the same or one above, drawn per request;
- ``out-of-range``: max_score + 1 (a score a run must refuse);
- ``mute``: no score at all (an unreadable judgement).
"""

from __future__ import annotations

import random
from typing import Final, Literal

from itempool import PoolItem
from synth.judge import judged_reply
from synth.scoring import score_reply
from synth.text_metrics import Language

__all__ = ["JUDGE_MODES", "judge_reply", "open_reply"]

JUDGE_MODES: Final = ("fair", "harsh", "lenient", "noisy", "out-of-range", "mute")

Quality = Literal["right", "partial", "wrong"]

_WRONG_TEXT: Final = {
    "en": "Hard to say without more details; it could depend on many circumstances.",
    "zh": "缺少信息，无法判断，需视具体情况而定。",
}
_WORKING: Final = {
    "en": "Working it out from the figures given.",
    "zh": "根据题中数据计算。",
}
_FINAL: Final = {"en": "Final answer: {value}", "zh": "最终答案：{value}"}
# By the fair score: none, some, all of the points.
_VERDICT: Final = {
    "en": (
        "The answer misses the reference.",
        "The answer partly matches the reference.",
        "The answer matches the reference.",
    ),
    "zh": ("回答与参考答案不符。", "回答与参考答案部分相符。", "回答与参考答案一致。"),
}
_SCORE: Final = {"en": "Score: {k}", "zh": "评分：{k}"}


def _number(value: float) -> str:
    """A number as a model would write it: no exponent, no trailing zeros."""
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def draw_quality(p_right: float, rng: random.Random) -> Quality:
    """Right with probability ``p_right``; else partly right or wrong, evenly."""
    if rng.random() < p_right:
        return "right"
    return "partial" if rng.random() < 0.5 else "wrong"


def open_reply(item: PoolItem, quality: Quality, chinese: bool, rng: random.Random) -> str:
    """A free-text reply of ``quality`` to the open ``item``."""
    lang = "zh" if chinese else "en"
    key = item.numeric_answer
    if key is not None:
        right = quality == "right"
        value = key.value if right else key.value * 1.5 + 1.0
        body = rng.choice(item.references) if item.references and right else _WORKING[lang]
        return f"{body}\n{_FINAL[lang].format(value=_number(value))}"
    if quality == "wrong":
        return _WRONG_TEXT[lang]
    reference = rng.choice(item.references)
    if quality == "right":
        return reference
    if chinese:
        return reference[: max(1, len(reference) // 2)]
    words = reference.split()
    return " ".join(words[: max(1, len(words) // 2)])


def judge_reply(mode: str, item: PoolItem, prompt: str, chinese: bool, rng: random.Random) -> str:
    """A scripted judge's reply (module docstring) to the judge ``prompt`` about ``item``."""
    lang: Language = "zh" if chinese else "en"
    reply = judged_reply(prompt)
    if reply is None or mode == "mute":
        return "The answer is hard to assess." if lang == "en" else "这个回答难以评价。"
    top = item.max_score
    fair = score_reply(reply, item, language=lang).points
    if mode == "harsh":
        points = max(fair - 1, 0)
    elif mode == "lenient":
        points = min(fair + 1, top)
    elif mode == "noisy":
        points = min(max(fair + rng.choice((-1, 0, 1)), 0), top)
    elif mode == "out-of-range":
        points = top + 1
    else:
        points = fair
    verdict = _VERDICT[lang][0 if fair == 0 else 2 if fair == top else 1]
    return f"{verdict}\n{_SCORE[lang].format(k=points)}"
