"""How a simulated model answers: which pool item a request asks about, whether the model
gets it right, and the reply text it sends.

A simulated model is a name and the probability that it answers a question right (or,
with IRT parameters, an ability θ). The item is recognised by finding its question text
in the request's messages (``synth.question_match``); the answer is drawn from a
generator seeded by a stable hash of (server seed, item, request key), so the same
request always gets the same reply and distinct requests are independent draws.

Open items get free-text replies, and judge models (``judges``: name -> mode) answer
judge prompts with a score (``synth.local_server.open_answers``).

A *replayed* model (``replay``: name -> {item id: 0/1}) answers as a real model did: the
key where its recorded answer is 1, a wrong option where 0, and a reply naming no option
at all where it has no answer (so it is graded unparsed, as the benchmark's own "no
letter extracted"). Questions that repeat with other options are told apart by their
options; an item that repeats another one's question and options is that item to the
server (the first in pool order), since no request could tell them apart.

A *thinking* model (``thinking``: name -> "inline" or "field") first weighs a wrong
option, in a ``<think>`` block inside its reply or in the message's
``reasoning_content`` field, as reasoning models do, then answers as a simulated model:
only its final answer may be graded.

A model that gains from reasoning (``reasoning_gain``: name -> gain) answers as
simulated when the request asks it to think "step by step", and worse otherwise: its θ
lower by the gain (with ``irt``), or its probability of a right answer lower by it. So a
test can show that asking off the references' chain-of-thought protocol moves θ.

A model of recorded *replies* (``replies``: name -> {item id: reply text}) sends the
very text a real model sent (e.g. the official MMLU-Pro outputs), so that a test sees it
graded as the references' results were; an item it has no reply for gets one naming no
option.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from itempool import ItemType, PoolItem
from synth.errors import SynthError
from synth.local_server.open_answers import JUDGE_MODES, draw_quality, judge_reply, open_reply
from synth.question_match import QuestionIndex, message_text, normalise

__all__ = ["THINKING_MODES", "ItemInfo", "Simulator"]

#: Where a thinking model's reasoning goes: inside the reply, or in its own field.
THINKING_MODES: Final = ("inline", "field")

_CJK: Final = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

# Reasoning filler. It never contains a lone capital letter (no "I", no "A ..."), so a
# parser looking for option letters finds only the final answer statement.
_EN_REASONING: Final = (
    "The question asks which option best fits the description.",
    "Comparing each option with the key facts, one of them matches clearly.",
    "The other options contain details that do not hold up on closer inspection.",
    "Recalling the relevant background narrows it down quickly.",
    "Checking the wording of the question carefully rules out the distractors.",
    "Based on the standard definition, the choice is straightforward.",
)
_ZH_REASONING: Final = (
    "题目考查的是相关概念的理解。",
    "逐一比较各选项，与题意相符的选项很明确。",
    "其余选项存在明显错误或与题干不符。",
    "结合背景知识可以排除干扰项。",
    "仔细审题后，关键信息已经给出。",
    "根据常见定义即可判断。",
)


# Replies of a replayed model that left an item unanswered: no capital letter stands
# alone and none of them says "answer", so no option can be read out of them.
_EN_NO_ANSWER: Final = (
    "Sorry, there is not enough here to go on; no choice from me this time.",
    "Let me think step by step. The options all look plausible, so no pick from me.",
)
_ZH_NO_ANSWER: Final = ("抱歉，这道题我无法作出选择。", "信息不足，无法判断。")


@dataclass(frozen=True)
class ItemInfo:
    """A pool item as the simulator answers it."""

    item: PoolItem
    letters: tuple[str, ...]  # the option letters, sorted
    chinese: bool


class Simulator:
    """The simulated models of one server: what each answers to a question, free of HTTP.

    ``models`` maps a model name to its probability of answering right, or, with ``irt``
    (item id -> a, b, c), to its ability θ; ``seed`` fixes every answer. ``judges`` maps
    a judge model's name to its mode (``open_answers.JUDGE_MODES``). ``replay`` maps a
    replayed model's name to its recorded answers (item id -> 1 right, 0 wrong; an item
    it lacks gets a reply naming no option).
    """

    def __init__(
        self,
        items: Sequence[PoolItem],
        models: Mapping[str, float],
        seed: int,
        irt: Mapping[str, tuple[float, float, float]] | None = None,
        judges: Mapping[str, str] | None = None,
        replay: Mapping[str, Mapping[str, int]] | None = None,
        replies: Mapping[str, Mapping[str, str]] | None = None,
        thinking: Mapping[str, str] | None = None,
        reasoning_gain: Mapping[str, float] | None = None,
    ) -> None:
        self.replay: dict[str, dict[str, int]] = _checked_replay(replay or {}, models)
        self.replies: dict[str, dict[str, str]] = {
            name: {str(item): str(text) for item, text in texts.items()}
            for name, texts in (replies or {}).items()
        }
        taken = set(models) | set(self.replay)
        for name in self.replies:
            if not name or name in taken:
                raise SynthError(f"model {name!r} of recorded replies needs a name of its own")
        if not models and not self.replay and not self.replies:
            raise SynthError("at least one simulated model is needed")
        self.reasoning_gain: dict[str, float] = dict(reasoning_gain or {})
        for name in self.reasoning_gain:
            if name not in models:
                raise SynthError(f"reasoning gain of {name!r}: not a simulated model")
        self.thinking: dict[str, str] = dict(thinking or {})
        for name, mode in self.thinking.items():
            if mode not in THINKING_MODES or name not in models:
                raise SynthError(
                    f"thinking model {name!r}: a simulated model, thinking "
                    f"{' or '.join(THINKING_MODES)}"
                )
        self.judges: dict[str, str] = dict(judges or {})
        for name, mode in self.judges.items():
            if mode not in JUDGE_MODES:
                raise SynthError(f"judge {name!r}: mode must be one of {', '.join(JUDGE_MODES)}")
            if name in models or name in self.replay or name in self.replies or not name:
                raise SynthError(f"judge {name!r} needs a name of its own, not a model's")
        for name, p in models.items():
            if not name:
                raise SynthError("a model name must not be empty")
            if irt is None and not 0.0 <= p <= 1.0:
                raise SynthError(f"model {name!r}: probability of a right answer must be in [0, 1]")
        if irt is not None:
            missing = [item.id for item in items if item.id not in irt]
            if missing:
                raise SynthError(f"no IRT parameters for {len(missing)} items (e.g. {missing[0]})")
        # With ``irt``, an item is answered right with the 3PL probability: models then
        # differ item by item, as real ones do, and a calibration has something to recover.
        self.irt = dict(irt) if irt is not None else None
        self.models: dict[str, float] = dict(models)
        self.seed = seed
        # An item asked exactly as an earlier one is that item, to the server
        # (synth.question_match).
        self._infos = {
            item.id: ItemInfo(
                item=item,
                letters=tuple(sorted(item.options)),
                chinese=_CJK.search(item.question) is not None,
            )
            for item in items
        }
        self._index = QuestionIndex(items)

    @property
    def names(self) -> list[str]:
        """Every model the server answers as: the simulated models, the replayed ones,
        then the judges."""
        return [*self.models, *self.replay, *self.replies, *self.judges]

    def p_right(self, model: str, item_id: str, *, reasoning: bool = True) -> float:
        """The probability that ``model`` answers ``item_id`` right (a replayed model:
        its recorded answer, 0 where it has none; a model of recorded replies: 0, since
        only grading its reply tells); ``reasoning`` False: when not asked to reason
        (``reasoning_gain``)."""
        if model in self.replies:
            return 0.0
        if model in self.replay:
            return float(self.replay[model].get(item_id, 0))
        value = self.models[model]
        if not reasoning:
            value -= self.reasoning_gain.get(model, 0.0)
        if self.irt is None:
            return min(max(value, 0.0), 1.0)
        a, b, c = self.irt[item_id]
        return c + (1.0 - c) / (1.0 + math.exp(-a * (value - b)))

    @staticmethod
    def last_user_text(messages: list[dict[str, Any]]) -> str:
        """The text of the request's last user message ("" without one)."""
        users = [m for m in messages if m.get("role") == "user"]
        return message_text(users[-1].get("content")) if users else ""

    def find_item(self, messages: list[dict[str, Any]]) -> ItemInfo | None:
        """The pool item a chat request's ``messages`` ask about, or None."""
        found = self._index.find(messages)
        return None if found is None else self._infos[found.id]

    def answer_text(self, model: str, info: ItemInfo | None, key: str, prompt: str = "") -> str:
        """``model``'s reply to the request with key ``key`` about ``info`` (None: an
        unrecognised question); ``prompt`` is the request's last user message (a judge
        reads the reply to grade there). The same arguments always give the same text."""
        if info is None:
            return "I am not sure."
        digest = hashlib.sha256(f"{self.seed}\x00{info.item.id}\x00{key}".encode()).digest()
        rng = random.Random(int.from_bytes(digest[:8], "big"))
        if model in self.judges:
            return judge_reply(self.judges[model], info.item, prompt, info.chinese, rng)
        if model in self.replies:
            recorded = self.replies[model].get(info.item.id)
            return _no_answer(info, rng) if recorded is None else recorded
        if model in self.replay and info.item.id not in self.replay[model]:
            return _no_answer(info, rng)
        if info.item.type is ItemType.OPEN:
            quality = draw_quality(self.p_right(model, info.item.id), rng)
            return open_reply(info.item, quality, info.chinese, rng)
        asked_to_reason = "step by step" in prompt.lower()
        p = self.p_right(model, info.item.id, reasoning=asked_to_reason)
        answer = info.item.answer if rng.random() < p else _wrong(info, rng)
        return _render(info, answer, rng)


def random_item_params(
    items: Sequence[PoolItem], seed: int
) -> dict[str, tuple[float, float, float]]:
    """3PL parameters (a, b, c) for each item, drawn from ``seed``: a ~ lognormal(0, 0.3),
    b ~ normal(0, 1), c the chance of guessing among the item's options (0 for an item
    without options). Simulated models then differ item by item, as real ones do on a
    benchmark that has none recorded."""
    rng = random.Random(seed)
    params: dict[str, tuple[float, float, float]] = {}
    for item in items:
        a = math.exp(rng.gauss(0.0, 0.3))
        b = rng.gauss(0.0, 1.0)
        params[item.id] = (a, b, 1.0 / len(item.options) if item.options else 0.0)
    return params


def _checked_replay(
    replay: Mapping[str, Mapping[str, int]], models: Mapping[str, float]
) -> dict[str, dict[str, int]]:
    """``replay`` as plain dicts, each answer 0 or 1 and each name free."""
    checked: dict[str, dict[str, int]] = {}
    for name, answers in replay.items():
        if not name:
            raise SynthError("a model name must not be empty")
        if name in models:
            raise SynthError(f"model {name!r} is both simulated and replayed")
        bad = [(item, v) for item, v in answers.items() if v not in (0, 1) or isinstance(v, bool)]
        if bad:
            item, value = bad[0]
            raise SynthError(
                f"replayed model {name!r}: answer to {item!r} is {value!r}; only 0 or 1"
            )
        checked[name] = {str(item): int(v) for item, v in answers.items()}
    return checked


def _no_answer(info: ItemInfo, rng: random.Random) -> str:
    """A reply naming no option: a model that gave no answer the benchmark could read."""
    if info.chinese:
        return rng.choice(_ZH_NO_ANSWER)
    return rng.choice(_EN_NO_ANSWER)


def _wrong(info: ItemInfo, rng: random.Random) -> str:
    """A wrong answer of the item's type, drawn with ``rng``."""
    key = info.item.answer
    letters = info.letters
    if info.item.type is ItemType.MULTI:
        while True:
            size = rng.randint(1, len(letters))
            pick = "".join(sorted(rng.sample(letters, size)))
            if set(pick) != set(key):
                return pick
    if info.item.type is ItemType.ORDER and len(key) >= 2:
        order = list(key)
        while "".join(order) == key:
            rng.shuffle(order)
        return "".join(order)
    return rng.choice([letter for letter in letters if letter != key])


def _render(info: ItemInfo, answer: str, rng: random.Random) -> str:
    """``answer`` in one of several realistic shapes; the answer statement is always last."""
    kind = info.item.type
    if info.chinese:
        reasoning = "".join(rng.sample(_ZH_REASONING, rng.randint(1, 2)))
        statement = f"答案：{answer}"
        prefixes = ("", f"分析：{reasoning}\n", f"{reasoning}\n\n")
        return rng.choice(prefixes) + statement
    listed = ", ".join(answer)
    if kind is ItemType.MULTI:
        statements: tuple[str, ...] = (f"The answer is {listed}.", f"Answer: {answer}")
    elif kind is ItemType.ORDER:
        statements = (f"The order is {listed}.", f"Answer: {answer}")
    else:
        statements = (f"The answer is ({answer}).", f"Answer: {answer}", f"The answer is {answer}.")
    reasoning = " ".join(rng.sample(_EN_REASONING, rng.randint(1, 2)))
    prefixes = ("", f"Let me think step by step. {reasoning}\n", f"{reasoning}\n\n")
    prefix, statement = rng.choice(prefixes), rng.choice(statements)
    if kind is ItemType.SINGLE and any(
        normalise(body).upper() in info.letters for body in info.item.options.values()
    ):
        # An option reading "B" or "b" (boron; a variable) makes "Answer: B" mean
        # either; the bracketed letter is what the model would write to be understood.
        statement = f"The answer is ({answer})."
    return prefix + statement


def thinking_about(info: ItemInfo | None, key: str, seed: int, final: str) -> str:
    """A reasoning model's thinking about ``info`` before its ``final`` reply: it weighs
    another option first ("the answer is (X)": neither the key nor the one it settles
    on), then doubts it; the same request always thinks the same."""
    if info is None or not info.letters:
        return "Let me think about this question carefully."
    digest = hashlib.sha256(f"{seed}\x00think\x00{key}".encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    settled = set(re.findall(r"\b[A-Z]\b", final[-40:]))
    others = [x for x in info.letters if x != info.item.answer and x not in settled]
    wrong = rng.choice(others) if others else info.letters[0]
    return (
        f"At first sight the answer is ({wrong}). But that reading does not hold up; "
        "checking each option again settles it."
    )
