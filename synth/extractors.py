"""Named answer extractors: how the letter a reply chose is read, as a pool's protocol says.

A pool's references were graded by some rule, and a new model's replies must be graded
by the same rule, or its θ sits on another scale. Each extractor has a name that a
pool's protocol (``pool.json`` ``protocol.extractor``) records:

- ``builtin``: ``synth.grading``'s reader (the last explicit answer statement wins,
  hedges are refused, option texts are recognised), what ``cat synth`` grades with.
- ``mmlu-pro-official``: the three rules of MMLU-Pro's official evaluation
  (``evaluate_from_api.py`` and ``evaluate_from_local.py`` of TIGER-AI-Lab/MMLU-Pro):
  the *first* "answer is (X)", else "Answer: X" (the last on the first line that has
  one), else the last standalone capital A–J anywhere. ``**`` is removed first, as the
  API script does before it stores a reply. No letter: no answer (graded wrong, as the
  references' accuracies count it).
- ``mmlu-pro-official-2rule``: the first two of those rules only, without the ``**``
  removal: the extraction that produced the stored letters of the official results of
  July 2024 for open-weight models (``benchmarks/bench_mmlu_pro_grading.py`` tells which
  reference's letters follow which rules).

Every extractor reads the final answer only: a reasoning model's ``<think>…</think>``
block is dropped first (``synth.reasoning.final_answer``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from itempool import ItemType
from synth.errors import SynthError
from synth.grading import extract_answer

__all__ = [
    "BUILTIN",
    "EXTRACTORS",
    "LOGLIKELIHOOD_RULES",
    "MMLU_PRO_OFFICIAL",
    "check_extractor",
    "extract_with",
    "mmlu_pro_official",
]

BUILTIN = "builtin"
MMLU_PRO_OFFICIAL = "mmlu-pro-official"
MMLU_PRO_TWO_RULES = "mmlu-pro-official-2rule"

# The official first pattern, character for character (case-sensitive, A–J only).
_ANSWER_IS = re.compile(r"answer is \(?([A-J])\)?")
# The second is r".*[aA]nswer:\s*([A-J])" without DOTALL: the greedy ".*" finds the
# *last* such statement on the *first* line that has one, in time quadratic in a long
# line; _rule_two finds the same one in linear time.
_ANSWER_COLON = re.compile(r"[aA]nswer:\s*([A-J])")
# The official third rule is r"\b[A-J]\b(?!.*\b[A-J]\b)" under DOTALL: the last
# standalone letter. Taking the last match of the letter alone finds the same one
# without the lookahead's quadratic time on long replies.
_LETTER = re.compile(r"\b[A-J]\b")


def mmlu_pro_official(text: str, *, rules: int = 3, strip_bold: bool = True) -> str | None:
    """The letter MMLU-Pro's official rules read from ``text`` (module docstring), or
    None. ``rules`` 2 stops after the second rule; ``strip_bold`` removes ``**`` first."""
    if strip_bold:
        text = text.replace("**", "")
    found = _ANSWER_IS.search(text)
    if found is not None:
        return found.group(1)
    second = _rule_two(text)
    if second is not None:
        return second
    if rules < 3:
        return None
    last = None
    for last in _LETTER.finditer(text):  # noqa: B007 (only the last one counts)
        pass
    return None if last is None else last.group(0)


def _rule_two(text: str) -> str | None:
    """The letter of the last "Answer: X" that starts on the first line holding one."""
    found: re.Match[str] | None = None
    line_end = 0
    for match in _ANSWER_COLON.finditer(text):
        if found is None:
            found = match
            line_end = text.find("\n", match.start())
            line_end = len(text) if line_end < 0 else line_end
        elif match.start() < line_end:
            found = match
        else:
            break
    return None if found is None else found.group(1)


Extractor = Callable[[str, ItemType, Mapping[str, str]], "str | None"]


def _official(text: str, item_type: ItemType, options: Mapping[str, str]) -> str | None:
    return mmlu_pro_official(text)


def _two_rules(text: str, item_type: ItemType, options: Mapping[str, str]) -> str | None:
    return mmlu_pro_official(text, rules=2, strip_bold=False)


#: Every extractor by name. The official ones read one letter: single-choice items only.
EXTRACTORS: dict[str, Extractor] = {
    BUILTIN: extract_answer,
    MMLU_PRO_OFFICIAL: _official,
    MMLU_PRO_TWO_RULES: _two_rules,
}

#: How an answer is chosen in log-likelihood mode (``synth.loglikelihood``): the option
#: of highest log-likelihood, or of highest log-likelihood per character.
LOGLIKELIHOOD_RULES = ("loglikelihood", "loglikelihood-norm")

#: Extractors that read a single letter, whatever the item's type.
_SINGLE_ONLY = frozenset({MMLU_PRO_OFFICIAL, MMLU_PRO_TWO_RULES, *LOGLIKELIHOOD_RULES})


def check_extractor(name: str, item_type: ItemType | None = None) -> str:
    """``name`` if it names an extractor (that can read ``item_type``'s answers), else
    ``SynthError`` naming the known ones."""
    if name not in EXTRACTORS and name not in LOGLIKELIHOOD_RULES:
        known = ", ".join((*EXTRACTORS, *LOGLIKELIHOOD_RULES))
        raise SynthError(f"unknown answer extractor {name!r}; known: {known}")
    if item_type is not None and name in _SINGLE_ONLY and item_type is not ItemType.SINGLE:
        raise SynthError(f"the {name} extractor reads single-choice answers, not {item_type}")
    return name


def extract_with(
    name: str, text: str, item_type: ItemType, options: Mapping[str, str]
) -> str | None:
    """The answer extractor ``name`` reads from ``text`` (the builtin one returns only
    letters among ``options``; the official ones any letter A–J, which is then wrong
    when the item has no such option), or None."""
    if check_extractor(name) in LOGLIKELIHOOD_RULES:
        raise SynthError(f"{name} chooses by log-probabilities: there is no reply to read")
    return EXTRACTORS[name](text, item_type, options)
