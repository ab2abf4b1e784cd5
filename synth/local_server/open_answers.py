"""Scripted free-text answers to open items, and scripted judges, for the local server.

A simulated model answers an open item right (one of its references word for word, or
the numeric answer), partly (the start of a reference, cut after a uniformly drawn
number of its words, or characters in Chinese, short of the whole; for a numeric item,
a wrong number) or wrongly (an unrelated sentence, or a wrong number); a numeric item's
reply ends on "Final answer: <number>" ("最终答案：<数值>"), as the prompts ask.
``expected_share`` is a model's exact expected share of the item's top score under
this script, the truth that ``cat demo`` sets its predictions beside.

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

from itempool import ItemType, PoolItem
from synth.judge import judged_reply
from synth.scoring import score_reply
from synth.text_metrics import Language

__all__ = ["JUDGE_MODES", "expected_share", "judge_reply", "open_reply"]

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


def _replies(item: PoolItem, quality: Quality, chinese: bool) -> list[str]:
    """Every reply of ``quality`` the script may give to the open ``item``, each as
    likely as the others."""
    lang = "zh" if chinese else "en"
    key = item.numeric_answer
    if key is not None:
        right = quality == "right"
        value = _FINAL[lang].format(value=_number(key.value if right else key.value * 1.5 + 1.0))
        bodies = list(item.references) if item.references and right else [_WORKING[lang]]
        return [f"{body}\n{value}" for body in bodies]
    if quality == "wrong":
        return [_WRONG_TEXT[lang]]
    if quality == "right":
        return list(item.references)
    return [cut for reference in item.references for cut in _partial_replies(reference, chinese)]


def _partial_replies(reference: str, chinese: bool) -> list[str]:
    """Every partial reply to a reference: its first 1 .. n − 1 words (characters in
    Chinese); the reference itself when it has only one."""
    if chinese:
        return [reference[:k] for k in range(1, len(reference))] or [reference]
    words = reference.split()
    return [" ".join(words[:k]) for k in range(1, len(words))] or [reference]


def open_reply(item: PoolItem, quality: Quality, chinese: bool, rng: random.Random) -> str:
    """A free-text reply of ``quality`` to the open ``item``."""
    replies = _replies(item, quality, chinese)
    return replies[rng.randrange(len(replies))]


def expected_share(item: PoolItem, p_right: float, chinese: bool) -> float:
    """The expected points / max_score of a model answering ``item`` right with
    probability ``p_right`` under this module's script, each reply graded by
    ``synth.scoring`` (a choice item's share is ``p_right``)."""
    if item.type is not ItemType.OPEN:
        return p_right
    lang: Language = "zh" if chinese else "en"

    def mean_share(quality: Quality) -> float:
        replies = _replies(item, quality, chinese)
        points = [score_reply(reply, item, language=lang).points for reply in replies]
        return sum(points) / len(points) / item.max_score

    rest = 0.5 * (mean_share("partial") + mean_share("wrong"))
    return p_right * mean_share("right") + (1.0 - p_right) * rest


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
