"""Find the option(s) an LLM chose in a free-text reply, and grade them against the key.

Replies come in English and Chinese, bare or buried in chain-of-thought, with markdown,
LaTeX and full-width punctuation. The rule is: the *last* explicit answer statement wins
(reasoning mentions other letters before settling); without one, a reply (or its last or
first line) that is nothing but letters, or nothing but one option's text, is the answer.
Anything else is unparsed rather than guessed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from itempool import ItemType, PoolItem
from synth.errors import SynthError


class GradeStatus(StrEnum):
    """Whether an answer could be read from the reply."""

    OK = "ok"
    UNPARSED = "unparsed"


@dataclass(frozen=True)
class Grade:
    """The graded reply: ``answer`` normalised ("B", sorted "BD", order "CABD") or None."""

    answer: str | None
    correct: bool
    score: float  # 1/0 for single and multi; Kendall tau against the key for order
    status: GradeStatus


# A letter token: an upper-case run ("B", "BD", "CABD") or one lower-case letter, not part of
# a word ("B-cell", "I'm") and not the pronoun "I" starting a clause.
_I_CLAUSE = (
    r"I[ \t]+(?:am|think|believe|guess|would|will|can|cannot|do|don't|feel|need|have|must"
    r"|should|was|hope|suppose|mean|agree)\b"
)
_TOKEN = r"(?<![A-Za-z0-9])(?:[A-Z]{1,10}|[a-z])(?![A-Za-z0-9'’]|-[a-z])"
_FIRST = rf"[(\[]?(?!{_I_CLAUSE}){_TOKEN}[)\]]?"
# After the first token, "A"/"I" followed by a lower-case word is prose ("B and I think").
_NEXT = rf"[(\[]?(?!{_I_CLAUSE})(?![AI][ \t]+[a-z]){_TOKEN}[)\]]?"
_SEP = (
    r"(?:[ \t]*(?:[,、;/&+>→⇒]|->|=>|[-–—])[ \t]*(?:(?:and|和|及|与|以及)[ \t]*)?"
    r"|[ \t]*(?:和|及|与|以及)[ \t]*|[ \t]+(?:and[ \t]+)?)"
)
# Verdicts name their letters before the verb ("A and C are correct"); after an answer
# phrase, a letter starting a new clause is not part of the answer ("B, C is wrong").
# Bounded: no answer lists more than a dozen options, and an unbounded list made scanning
# long letter-strewn replies quadratic.
_CLAIM_LIST = rf"{_FIRST}(?:{_SEP}{_NEXT}){{0,11}}"
_NEW_CLAUSE = (
    r"(?![(\[]?[A-Z]{1,10}[)\]]?(?:[ \t]+(?:is|was|are|were|would|could|can|does|has|seems"
    r"|might|may)\b|[ \t]*(?:项|选项|错|不)))"
)
_LIST_RE = re.compile(rf"{_FIRST}(?:{_SEP}{_NEW_CLAUSE}{_NEXT}){{0,11}}")
_TOKEN_RE = re.compile(_TOKEN)
# Lower-case letters only count when nothing follows them ("answer: b", not "answer is a bit").
_END_AFTER_LOWER = re.compile(r"[ \t]*(?:[.。!?,;:)\]]|\n|$)")
# "A or B" is a hedge, not an answer.
_HEDGE_RE = re.compile(rf"[ \t]*,?[ \t]*(?:or|或者?|还是)[ \t]*{_NEXT}")
_QUESTION_RE = re.compile(r"[ \t]*\?")
_SENTENCE_END_RE = re.compile(r"[.!?。！？;；](?:\s|$)")

# Phrases after which the answer follows. Connectors are required after "answer" so that
# "answer, I think, is B" or "to answer A patient..." do not read a letter.
_LEAD_RE = re.compile(
    "|".join(
        [
            r"(?i:\bfinal[ \t]+answers?(?:[ \t]+is)?[ \t]*:?)",
            r"(?i:\banswers?(?:[ \t]+to[ \t]+(?:this|the)[ \t]+question)?(?:[ \t]+(?:is|are"
            r"|would[ \t]+be|should[ \t]+be|must[ \t]+be|will[ \t]+be|has[ \t]+to[ \t]+be"
            r"|here[ \t]+is)(?:[ \t]+(?:therefore|thus|clearly|definitely|probably|likely"
            r"|most[ \t]+likely|then))?[ \t]*:?|[ \t]*[:=]))",
            r"(?i:\b(?:correct|right|best)[ \t]+(?:options?|choices?)(?:[ \t]+(?:is|are"
            r"|would[ \t]+be|should[ \t]+be))?[ \t]*:?)",
            r"(?i:\b(?:I|we)(?:'d|'ll|[ \t]+would|[ \t]+will|[ \t]+shall)?[ \t]+"
            r"(?:choose|select|pick|go[ \t]+with))",
            r"(?i:\b(?:order|ordering|sequence|ranking)(?:[ \t]+(?:is|would[ \t]+be"
            r"|should[ \t]+be)[ \t]*:?|[ \t]*[:=]))",
            r"(?:正确|最终|最后|标准|参考)?答案(?:应该|应当|应|就|则|可能|一定)?(?:是|为|选择|选)?",
            r"答[ \t]*:",
            r"正确(?:的选项|的答案|的说法|选项|的)(?:应该|应|就)?(?:是|为|有)",
            r"正确选项[ \t]*:",
            # "如果选A" / "不选A" are hypotheses and exclusions, not choices.
            r"(?<!不)(?<!如果)(?<!若)(?<!可)(?<!候)(?:选择|选定|选)(?!项)",
            r"(?:正确的?)?(?:排序|顺序|次序|排列)(?:应该|应|为|是)*[ \t]*:?",
        ]
    )
)
# "Therefore, B." counts only when nothing follows the letters ("So A patient..." does not).
_STRICT_LEAD_RE = re.compile(
    r"(?i:\b(?:therefore|thus|hence|so)\b)[ \t]*,?|(?:因此|所以|综上所述|综上|故)[ \t]*,?"
)
_PREFIX_RE = re.compile(r"[\s:=】]*(?:(?i:options?|choices?|letters?)\b|选项)?[\s:【\"'“「]*")
_ASIDE = r"(?:[ \t]*\([^()\n]{1,60}\))?"  # "option B (Paris) is correct"
_CLAIM_LIST_RE = re.compile(_CLAIM_LIST)
# Statements naming the letter first: "Option C is correct", "A项正确".
_CLAIM_RES = tuple(
    re.compile(p)
    for p in (
        rf"(?i:\b(?:options?|choices?|answers?))[ \t]*(?P<l>{_CLAIM_LIST}){_ASIDE}[ \t]+"
        r"(?i:(?:is|are|seems|appears)(?:[ \t]+to[ \t]+be)?[ \t]+(?:the[ \t]+)?(?:most[ \t]+)?"
        r"(?:correct|right|best|true|accurate|appropriate|valid)\b)",
        rf"(?P<l>{_CLAIM_LIST}){_ASIDE}[ \t]+(?i:(?:is|are)[ \t]+(?:the[ \t]+"
        r"(?:(?:correct|right|best)[ \t]+)?(?:answer|option|choice)s?|correct|right)\b)",
        rf"选项[ \t]*(?P<l>{_CLAIM_LIST})[ \t]*(?:是|为)?(?:正确|是对的)",
        rf"(?P<l>{_CLAIM_LIST})[ \t]*(?:选项|项)[ \t]*(?:是|为)?(?:正确|是对的)",
    )
)
_BOXED_RE = re.compile(r"\\(?:boxed|fbox)\s*\{([^{}]*)\}")
_LATEX_TEXT_RE = re.compile(r"\\(?:text|textbf|textrm|textit|mathrm|mathbf|mbox)\s*\{([^{}]*)\}")
_NOISE_RE = re.compile(r"\$|\\[()\[\]]|[*`#]|_{2,}")
_NEGATED_RE = re.compile(r"(?i:not\b|n't\b)|不")
_LETTER_THEN_TEXT_RE = re.compile(r"[(\[]?([A-Z])[)\].:]\s*(.+)", re.DOTALL)
_EDGE_PUNCT = " \t\r\n.。!?:;,\"'“”「」【】()[]"

_TAIL = 600  # characters read after an answer phrase: room for a long option text
_SKIP = "skip"  # this statement says nothing usable: look at earlier ones
_Outcome = tuple[str, ...] | str | None  # letters, _SKIP, or None (decisively unparsed)


def extract_answer(text: str, item_type: ItemType, options: Mapping[str, str]) -> str | None:
    """The answer stated in ``text``: one letter (single), sorted letters (multi) or the
    letters in the stated order (order), always among ``options``' keys; None if unclear."""
    choices = _choices_of(tuple(options.items()))
    clean = _clean(text)
    statements = sorted(_statements(clean), reverse=True)  # last first
    lines = [line for line in clean.splitlines() if line.strip()]
    # Answer phrases outrank verdicts on single options: the analysis of a "which is wrong"
    # question says "A项正确" of options that are not the answer.
    outcome = _first(_judge(k, p, item_type, choices) for _, k, p in statements if k != "claim")
    if outcome == _SKIP:
        claims = [_judge(k, p, item_type, choices) for _, k, p in statements if k == "claim"]
        outcome = _first(claims)
        if item_type is ItemType.MULTI and isinstance(outcome, tuple):
            # Option-by-option verdicts ("A项正确…C项正确") add up for a multi question.
            outcome = tuple(sorted({x for c in claims if isinstance(c, tuple) for x in c}))
    if outcome == _SKIP:
        segments = [(clean, True), *((line, False) for line in lines[-1:] + lines[:1])]
        outcome = _first(_fit(_standalone(s, choices, led), item_type) for s, led in segments)
    if outcome == _SKIP:
        # One line "B. Paris" among explanation lines, but not a restated list of options.
        led_lines = {_standalone(line, choices, True) for line in lines} - {_SKIP}
        outcome = _fit(led_lines.pop(), item_type) if len(led_lines) == 1 else _SKIP
    if not isinstance(outcome, tuple):
        return None
    return "".join(choices.keys[letter] for letter in outcome)


def grade(text: str, item: PoolItem, order_threshold: float = 0.8) -> Grade:
    """Extract the answer from ``text`` and score it against ``item.answer``; an order
    answer is correct when its Kendall tau with the key reaches ``order_threshold``."""
    if not -1.0 <= order_threshold <= 1.0:
        raise SynthError(f"order_threshold must lie in [-1, 1], got {order_threshold}")
    unparsed = Grade(answer=None, correct=False, score=0.0, status=GradeStatus.UNPARSED)
    answer = extract_answer(text, item.type, item.options)
    if answer is None:
        return unparsed
    if item.type is ItemType.ORDER:
        if sorted(answer) != sorted(item.answer):
            return unparsed
        tau = _kendall_tau(answer, item.answer)
        return Grade(answer, tau >= order_threshold, tau, GradeStatus.OK)
    if item.type is ItemType.MULTI:
        correct = set(answer) == set(item.answer)
    else:
        correct = answer == item.answer
    return Grade(answer, correct, 1.0 if correct else 0.0, GradeStatus.OK)


def _kendall_tau(order: str, key: str) -> float:
    if len(key) < 2:
        return 1.0
    rank = {letter: i for i, letter in enumerate(order)}
    pairs = [(a, b) for i, a in enumerate(key) for b in key[i + 1 :]]
    balance = sum(1 if rank[a] < rank[b] else -1 for a, b in pairs)
    return balance / len(pairs)


@dataclass(frozen=True)
class _Choices:
    """An item's options, prepared once per reply."""

    keys: dict[str, str]  # upper-case letter -> the option's key
    folded: dict[str, str]  # upper-case letter -> option text folded for equality
    # Whole-word, case-insensitive matchers, longest text first ("Paris, Texas" before "Paris").
    matchers: tuple[tuple[re.Pattern[str], str], ...]

    @classmethod
    def of(cls, options: Mapping[str, str]) -> _Choices:
        texts = {
            key.upper(): " ".join(_nfkc(value).strip(_EDGE_PUNCT).split())
            for key, value in options.items()
        }
        matchers = []
        for letter, text in sorted(texts.items(), key=lambda pair: -len(pair[1])):
            if text:
                left = r"(?<![A-Za-z0-9])" if text[0].isascii() and text[0].isalnum() else ""
                right = r"(?![A-Za-z0-9])" if text[-1].isascii() and text[-1].isalnum() else ""
                body = r"\s+".join(re.escape(word) for word in text.split())
                matchers.append((re.compile(left + body + right, re.IGNORECASE), letter))
        folded = {letter: _fold(text) for letter, text in texts.items()}
        return cls({key.upper(): key for key in options}, folded, tuple(matchers))

    def hits(self, segment: str) -> list[tuple[int, int, str]]:
        """(start, end, letter) of option texts in ``segment``; a longer text claims its span
        first, so "Paris" inside "Paris, Texas" does not count."""
        found: list[tuple[int, int, str]] = []
        for matcher, letter in self.matchers:
            for match in list(matcher.finditer(segment)):
                found.append((match.start(), match.end(), letter))
                segment = (
                    segment[: match.start()] + " " * len(match.group()) + segment[match.end() :]
                )
        return sorted(found)

    def named(self, segment: str) -> str | None:
        """The one option whose whole text ``segment`` is."""
        folded = _fold(segment)
        same = [letter for letter, text in self.folded.items() if folded and text == folded]
        return same[0] if len(same) == 1 else None


@lru_cache(maxsize=4096)
def _choices_of(options: tuple[tuple[str, str], ...]) -> _Choices:
    """``_Choices.of``, kept per set of options: an assessment grades the same items'
    replies again and again, and compiling an item's matchers costs far more than
    using them (with more items than Python's own pattern cache holds, every reply
    compiled them anew)."""
    return _Choices.of(dict(options))


def _nfkc(text: str) -> str:
    # NFKC folds full-width letters and punctuation ("Ｂ", "：", "（") to ASCII.
    return unicodedata.normalize("NFKC", text)


def _fold(value: str) -> str:
    return " ".join(value.strip(_EDGE_PUNCT).casefold().split())


def _clean(text: str) -> str:
    text = _nfkc(text)
    for _ in range(2):  # \textbf{\text{B}} nests
        text = _LATEX_TEXT_RE.sub(r"\1", text)
    return _NOISE_RE.sub("", text)


def _statements(text: str) -> Iterator[tuple[int, str, str]]:
    """(position, kind, payload) for every answer statement in ``text``."""
    # A bounded tail keeps many leads in a long reply from costing quadratic time.
    for match in _LEAD_RE.finditer(text):
        yield match.start(), "lead", text[match.end() : match.end() + _TAIL]
    for match in _STRICT_LEAD_RE.finditer(text):
        yield match.start(), "strict", text[match.end() : match.end() + _TAIL]
    for claim_re in _CLAIM_RES:
        for match in claim_re.finditer(text):
            yield match.start(), "claim", match.group("l")
    for match in _BOXED_RE.finditer(text):
        yield match.start(), "boxed", match.group(1)


def _judge(kind: str, payload: str, item_type: ItemType, choices: _Choices) -> _Outcome:
    if kind == "boxed":
        outcome = _standalone(payload, choices, True)
    elif kind == "claim":
        outcome = _letters(payload, choices)
    else:
        outcome = _after_lead(payload, choices, strict=kind == "strict")
    return _fit(outcome, item_type)


def _after_lead(tail: str, choices: _Choices, *, strict: bool) -> _Outcome:
    start = _PREFIX_RE.match(tail)
    tail = tail[start.end() if start else 0 :]
    listed = _LIST_RE.match(tail)
    if strict:
        if listed is None or not _END_AFTER_LOWER.match(tail, listed.end()):
            return _SKIP
        return _letters(listed.group(), choices)
    line = tail.split("\n", 1)[0]
    end = _SENTENCE_END_RE.search(line)
    hits = [hit for hit in choices.hits(line) if not end or hit[0] < end.start()]
    named = hits[0][2] if len({hit[2] for hit in hits}) == 1 else None
    # An option text that starts where the letters do and runs at least as far wins
    # ("the answer is DNA ligase" is not options D, N, A).
    if named and hits[0][0] == 0 and (listed is None or hits[0][1] >= listed.end()):
        return (named,)
    if listed is not None:
        lower = any(m.group().islower() for m in _TOKEN_RE.finditer(listed.group()))
        if not lower or _END_AFTER_LOWER.match(tail, listed.end()):
            letters = _letters(listed.group(), choices)
            if letters != _SKIP:
                if _QUESTION_RE.match(tail, listed.end()):
                    return _SKIP  # "the answer is A? No..." is still thinking
                return None if _HEDGE_RE.match(tail, listed.end()) else letters
    return (named,) if named and not _NEGATED_RE.match(line) else _SKIP


def _first(outcomes: Iterable[_Outcome]) -> _Outcome:
    return next((outcome for outcome in outcomes if outcome != _SKIP), _SKIP)


def _standalone(segment: str, choices: _Choices, led: bool) -> _Outcome:
    """A segment that is only letters, only one option's text, or (if ``led``) a letter
    followed by an option's text ("B. Paris")."""
    named = choices.named(segment)
    if named:
        return (named,)
    core = re.sub(r"[\W_]", "", segment)
    if re.fullmatch(r"[A-Z]{1,10}|[a-z]", core):
        return _letters(core, choices)
    listed = _CLAIM_LIST_RE.fullmatch(segment.strip(" \t\r\n.。"))
    if listed:
        return _letters(listed.group(), choices)
    lead = _LETTER_THEN_TEXT_RE.fullmatch(segment.strip()) if led else None
    if lead and lead.group(1) in choices.keys and choices.named(lead.group(2)):
        return (lead.group(1),)
    return _SKIP


def _letters(listed: str, choices: _Choices) -> _Outcome:
    letters = tuple(c.upper() for m in _TOKEN_RE.finditer(listed) for c in m.group())
    return letters if letters and all(c in choices.keys for c in letters) else _SKIP


def _fit(letters: _Outcome, item_type: ItemType) -> _Outcome:
    """Shape letters for the item type; a statement that cannot be that type's answer is
    decisive (None) when it is ambiguous, skipped when it is not an answer of that kind."""
    if not isinstance(letters, tuple):
        return letters
    if item_type is ItemType.SINGLE:
        return letters[:1] if len(set(letters)) == 1 else None
    if item_type is ItemType.MULTI:
        return tuple(sorted(set(letters)))
    if len(letters) < 2:
        return _SKIP  # "Option C is correct" inside an ordering discussion
    return letters if len(set(letters)) == len(letters) else None
