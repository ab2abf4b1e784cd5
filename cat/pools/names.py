"""The names that pool commands take as choices: the fields ``cat pool import questions``
maps columns to (it finds them by itself in the common shapes of benchmarks:
``cat.pools.question_shapes``), the language option, and the methods of ``cat
recalibrate``.

Kept apart from the modules that use them so that the command line can list them in its
help without importing numpy or pydantic.
"""

from __future__ import annotations

from enum import StrEnum

#: ``--language``'s help: any language code, and what it decides.
LANGUAGE_HELP = (
    "Language of the questions, as a code: en, zh, fr, de, ja, pt-BR, ... Chinese pools "
    "are asked with the built-in Chinese prompts, any other with the English ones (the "
    "question in its own language) unless a prompt template says otherwise; Chinese and "
    "Japanese open answers are compared character by character."
)


def language_code(value: str) -> str:
    """``--language``: a language code (``itempool.languages``' pattern, checked here
    without importing pydantic), or ``typer.BadParameter``."""
    import re

    import typer

    code = value.strip()
    if re.fullmatch(r"[a-z]{2,3}(-[A-Za-z0-9]{1,8})*", code) is None:
        raise typer.BadParameter(
            f"{value!r} is not a language code (en, zh, fr, pt-BR, ...: lower-case letters, "
            "then optional -subtags)"
        )
    return code


#: Our fields that ``import_questions`` can fill from a column, and what each takes.
QUESTION_FIELDS = {
    "id": "the item id",
    "question": "the question text",
    "options": "one column holding a JSON list or object, or several columns: a,b,c,d",
    "answer": "the key as letter(s), e.g. B or BD",
    "answer_index": "the key as a 0-based option position",
    "key": "the key read per row: a letter, a 0-based position or an option's text",
    "scenario": "the scenario (content area)",
    "type": "single, multi or order (default: single, or multi for several letters)",
    "meta": "columns copied into the item's meta: a,b",
}


class Method(StrEnum):
    """How the new responses are put on the pool's scale (see the module notes)."""

    ANCHOR = "anchor"
    CONCURRENT = "concurrent"
