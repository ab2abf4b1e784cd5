"""A pool's language: any language code (``en``, ``zh``, ``fr``, ``pt-BR``), and what
depends on it.

Two things do. The built-in prompts exist in English and Chinese: a pool in Chinese is
asked in Chinese, any other in English (the question itself in its own language), unless
a prompt template of the pool's protocol or of the run says otherwise. And open answers
are tokenised for ROUGE-L by words, except in Chinese and Japanese, written without
spaces, where each ideograph is a token (``synth.text_metrics``).
"""

from __future__ import annotations

import re
from typing import Annotated, Final, Literal

from pydantic import AfterValidator

#: A language code as BCP 47 writes one: a 2–3 letter language, then optional subtags.
LANGUAGE_PATTERN: Final = r"^[a-z]{2,3}(-[A-Za-z0-9]{1,8})*$"
#: The languages the built-in prompts are written in.
PROMPT_LANGUAGES: Final = ("en", "zh")
#: Languages written without spaces between words: each ideograph is a token.
_IDEOGRAPHIC: Final = ("zh", "ja")


def is_language_code(code: str) -> bool:
    return re.fullmatch(LANGUAGE_PATTERN, code) is not None


def primary(code: str) -> str:
    """The language of ``code`` without its subtags (``zh`` of ``zh-Hant``)."""
    return code.split("-", 1)[0].lower()


def prompt_language(code: str) -> Literal["zh", "en"]:
    """The language of the built-in prompts a pool in ``code`` is asked with."""
    return "zh" if primary(code) == "zh" else "en"


def text_language(code: str) -> Literal["zh", "en"]:
    """How open answers in ``code`` are tokenised: "zh" splits ideographs one a token."""
    return "zh" if primary(code) in _IDEOGRAPHIC else "en"


def _checked(code: str) -> str:
    if not is_language_code(code):
        raise ValueError(f"{code!r} is not a language code (en, zh, fr, pt-BR, ...)")
    return code


#: A pool's ``language``: a language code.
LanguageCode = Annotated[str, AfterValidator(_checked)]
