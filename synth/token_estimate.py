"""Tokens from text, without the model's tokenizer: what ``--dry-run`` counts prompts by.

OpenAI's rule of thumb for English is about four characters a token; a Chinese, Japanese
or Korean character is about one token in the byte-pair vocabularies of today's chat
models (often a little more, never much less). An estimate, not a count: an endpoint's
own tokenizer decides what a call costs, and the figures are checked against what runs
then spend (``benchmarks/bench_dry_run.py``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Final

#: Characters a token in Latin-script text.
CHARS_PER_TOKEN: Final = 4.0
#: What a chat message adds beside its text (the role and the separators).
MESSAGE_OVERHEAD: Final = 4

_CJK: Final = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def estimate_tokens(text: str) -> int:
    """About how many tokens ``text`` is: a token for each CJK character, one for every
    four other characters."""
    cjk = len(_CJK.findall(text))
    return cjk + math.ceil((len(text) - cjk) / CHARS_PER_TOKEN)


def message_tokens(messages: Iterable[tuple[str, str]]) -> int:
    """About how many prompt tokens a chat request's ``messages`` ((role, text) pairs, as
    ``synth.prompter`` makes them) are."""
    return sum(MESSAGE_OVERHEAD + estimate_tokens(text) for _, text in messages)
