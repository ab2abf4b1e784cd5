"""``cat.GenerationSettings``: ``synth.generation.GenerationSettings`` as the API gives it,
whose bad values raise ``CatError`` in one line, as every other bad call of the API does
(pydantic's own error is several lines, of another type)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from cat.errors import CatError
from itempool.problems import describe_errors
from synth.generation import GenerationSettings as _Settings

__all__ = ["GenerationSettings"]


class GenerationSettings(_Settings):
    __doc__ = _Settings.__doc__

    def __init__(self, **settings: Any) -> None:
        try:
            super().__init__(**settings)
        except ValidationError as exc:
            raise CatError(f"GenerationSettings: {describe_errors(exc)}") from None
