"""Reference metrics for free-text answers in Chinese and English: normalisation,
tokenisation, ROUGE-L and token-level F1.

Normalisation (``normalize_text``), in order:

1. Unicode NFKC: full-width letters, digits and punctuation become their ASCII forms.
2. Case folding (``str.casefold``); CJK ideographs have no case and are unchanged.
3. Answer lead-ins are removed, only at the start and repeatedly ("The answer is",
   "Final answer:", "Answer:", "答案是", "答案为", "答案:", "最终答案", "答:").
4. Punctuation and symbols (every Unicode P* and S* character: ASCII ``!"#$%&'()*+,-./:;<=>?@
   [\\]^_`{|}~``, CJK ``，。、；：？！“”‘’（）《》【】…—`` and the like) become spaces, with
   two exceptions: a "." or "," between two digits stays ("2.5", "1,234" remain one number)
   and an apostrophe between two letters is deleted ("don't" -> "dont").
5. Whitespace is collapsed to single spaces and stripped.

Tokenisation (``tokenize``) works on normalised text. In both languages a number ("45",
"2.5", "1,234") is one token and a run of other non-space characters ("crcl", "mg") is
another, so "500mg" and "500 mg" are the same two tokens. Chinese is scored at the
character level: every CJK ideograph is a token of its own. English keeps a run of
ideographs as one token. On text without ideographs the two agree, so the language only
decides how ideographs are split. Without a ``language`` the text decides
(``detect_language``).

Metrics, each in [0, 1] and 0 when either side has no tokens:

- ROUGE-L F-measure (Lin 2004, "ROUGE: A Package for Automatic Evaluation of Summaries"):
  with L the length of the longest common subsequence (LCS) of the token sequences,
  P = L / len(candidate), R = L / len(reference), F = (1 + β²)PR / (R + β²P) with β = 1,
  i.e. F = 2L / (len(candidate) + len(reference)).
- Token-level F1 as in SQuAD's evaluation (Rajpurkar et al. 2016, "SQuAD: 100,000+
  Questions for Machine Comprehension of Text"): the overlap C counts each token
  min(count in candidate, count in reference) times, and F1 = 2C / (len(candidate) +
  len(reference)). Unlike SQuAD, articles are not removed: the score should not depend on
  an English-only stop list.

With several references, ``best_text_score`` takes the maximum over them.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Hashable, Sequence
from enum import StrEnum
from functools import lru_cache
from typing import Literal

from synth.errors import SynthError

Language = Literal["zh", "en"]
LANGUAGES: tuple[Language, ...] = ("zh", "en")


class TextMetric(StrEnum):
    """A reference metric for free text."""

    ROUGE_L = "rouge_l"
    F1 = "f1"


# CJK Unified Ideographs, Extension A, compatibility ideographs, Extensions B-G.
CJK_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_CJK_RE = re.compile(f"[{CJK_RANGES}]")
_NUMBER_TOKEN = r"\d+(?:[.,]\d+)*"
_ZH_TOKEN_RE = re.compile(f"[{CJK_RANGES}]|{_NUMBER_TOKEN}|[^\\s\\d{CJK_RANGES}]+")
_EN_TOKEN_RE = re.compile(f"{_NUMBER_TOKEN}|[^\\s\\d]+")
# Runs of letters other than ideographs (a Latin word counts once, like one ideograph).
_OTHER_WORD_RE = re.compile(f"(?:(?![{CJK_RANGES}])[^\\W\\d_])+")
# Share of ideographs among words at which a text counts as Chinese. Low on purpose: the
# Chinese tokeniser splits Latin words exactly as the English one does, so erring towards
# "zh" costs nothing on English words, while clinical Chinese is full of Latin units and
# drug names ("患者CrCl为45 mL/min" is 3 ideographs among 6 words).
ZH_SHARE = 0.2

_LEAD_IN_RE = re.compile(
    r"[\s*_#>\"'`]*"
    r"(?:(?:the\s+)?(?:final\s+|correct\s+)?answer(?:\s+is(?![\w'’])|\s*:)"
    r"|(?:最终|正确)?答案\s*(?:是|为|:)|最终答案|答\s*:)"
    r"[\s*_:]*"
)
_APOSTROPHES = "'’ʼ"
_KEPT_BETWEEN_DIGITS = ".,"


@lru_cache(maxsize=2**16)
def normalize_text(text: str) -> str:
    """``text`` normalised for comparison (see the module docstring): NFKC, case folded,
    leading answer phrases removed, punctuation and symbols as spaces, spaces collapsed.

    Cached: grading compares every reply with its item's reference answers, so the same
    references (and, from models that answer alike, the same replies) come back again
    and again (98 calls in 100 in ``cat demo``)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    start = 0
    while (lead := _LEAD_IN_RE.match(text, start)) is not None:
        start = lead.end()
    text = text[start:]
    chars = []
    for i, char in enumerate(text):
        if unicodedata.category(char)[0] not in "PS":
            chars.append(char)
            continue
        before = text[i - 1] if i > 0 else ""
        after = text[i + 1] if i + 1 < len(text) else ""
        if char in _KEPT_BETWEEN_DIGITS and before.isdecimal() and after.isdecimal():
            chars.append(char)
        elif char in _APOSTROPHES and before.isalpha() and after.isalpha():
            continue
        else:
            chars.append(" ")
    return " ".join("".join(chars).split())


def detect_language(text: str) -> Language:
    """Chinese ("zh") when CJK ideographs make up at least ``ZH_SHARE`` of the words of
    ``text`` (each ideograph counting as one word, each run of other letters as one), else
    English ("en").
    Digits do not count; a text without letters is "en"."""
    text = unicodedata.normalize("NFKC", text)
    ideographs = len(_CJK_RE.findall(text))
    words = ideographs + len(_OTHER_WORD_RE.findall(text))
    return "zh" if words and ideographs / words >= ZH_SHARE else "en"


def check_language(language: str | None) -> Language | None:
    """``language`` if it is "zh", "en" or None; a ``SynthError`` otherwise."""
    if language is None:
        return None
    if language not in LANGUAGES:
        raise SynthError(f"language must be 'zh', 'en' or None (detect), got {language!r}")
    return "zh" if language == "zh" else "en"


def tokenize(text: str, language: Language | None = None) -> tuple[str, ...]:
    """The tokens of ``text`` after ``normalize_text``: numbers, runs of other characters,
    and for "zh" each ideograph on its own (module docstring); detected when None."""
    language = check_language(language) or detect_language(text)
    pattern = _ZH_TOKEN_RE if language == "zh" else _EN_TOKEN_RE
    return tuple(pattern.findall(normalize_text(text)))


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Length of the longest common subsequence of ``a`` and ``b``.

    Bit-parallel (Allison & Dix 1986; Hyyrö 2004): bit j of ``v`` is 0 where the LCS of the
    prefix of the outer sequence read so far with b[: j + 1] grows by one at j, so the LCS
    is the number of zero bits. Python integers make it O(len(a) · len(b) / 64) word
    operations, which keeps long chain-of-thought replies cheap."""
    if len(a) > len(b):
        a, b = b, a  # loop over the shorter sequence, bits over the longer
    if not a:
        return 0
    masks: dict[Hashable, int] = {}
    for j, token in enumerate(b):
        masks[token] = masks.get(token, 0) | (1 << j)
    full = (1 << len(b)) - 1
    v = full
    for token in a:
        u = v & masks.get(token, 0)
        v = ((v + u) | (v - u)) & full
    return len(b) - v.bit_count()


def rouge_l(candidate: Sequence[str], reference: Sequence[str]) -> float:
    """ROUGE-L F-measure with β = 1 (Lin 2004) of two token sequences:
    2 · LCS / (len(candidate) + len(reference)); 0 when either is empty."""
    if not candidate or not reference:
        return 0.0
    return 2 * lcs_length(candidate, reference) / (len(candidate) + len(reference))


def token_f1(candidate: Sequence[str], reference: Sequence[str]) -> float:
    """Bag-of-tokens F1 as in SQuAD's evaluation (Rajpurkar et al. 2016): with C the
    multiset overlap, 2C / (len(candidate) + len(reference)); 0 when either is empty."""
    if not candidate or not reference:
        return 0.0
    overlap = sum((Counter(candidate) & Counter(reference)).values())
    return 2 * overlap / (len(candidate) + len(reference))


def check_metric(metric: str) -> TextMetric:
    """``metric`` as a ``TextMetric``; a ``SynthError`` when it names none."""
    try:
        return TextMetric(metric)
    except ValueError:
        known = ", ".join(repr(m.value) for m in TextMetric)
        raise SynthError(f"metric must be one of {known}, got {metric!r}") from None


def best_text_score(
    reply: str,
    references: Sequence[str],
    *,
    metric: TextMetric | str = TextMetric.ROUGE_L,
    language: Language,
) -> float:
    """The highest ``metric`` score of ``reply`` against any of ``references`` (0 when
    there are none), both tokenised as ``language``."""
    score = rouge_l if check_metric(metric) is TextMetric.ROUGE_L else token_f1
    candidate = tokenize(reply, language)
    return max((score(candidate, tokenize(ref, language)) for ref in references), default=0.0)
