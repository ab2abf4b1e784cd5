"""The names ``cat synth`` takes as choices: prompt styles, kinds of participant, ways of
grading open answers, and the default variable of the API key.

Kept apart from the modules that use them so that the command line can offer them
(``--help``, argument checks) without importing the openai client or pydantic.
"""

from __future__ import annotations

from enum import StrEnum


class Style(StrEnum):
    """How a participant is asked to answer."""

    DIRECT = "direct"
    COT = "cot"


#: Who answers: single LLMs, ordered pairs (generation → debate → reflection), or both.
KINDS = ("singles", "pairs")

#: The stage of a first answer (a single's, or a pair's generation) in the run store.
GENERATION_STAGE = "generation"

#: How open items are graded: by the reference metric, or by an LLM judge.
OPEN_GRADINGS = ("metric", "judge")

#: The environment variable holding the API key unless told otherwise.
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
