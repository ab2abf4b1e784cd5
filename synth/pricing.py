"""Optional cost estimates: prices per model from a JSON file.

    {"gpt-4o": {"input": 2.5, "output": 10.0}, "deepseek-chat": {"input": 0.27, "output": 1.1}}

Prices are in any currency per million tokens; a model without a price costs ``None``
(unknown), not 0.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from synth.backend import ChatReply
from synth.errors import SynthError


class ModelPrice(BaseModel):
    """Price per million prompt (input) and completion (output) tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0)
    output: float = Field(ge=0)


@dataclass(frozen=True)
class Prices:
    """Prices by model name."""

    by_model: dict[str, ModelPrice]

    def cost(self, model: str, reply: ChatReply) -> float | None:
        price = self.by_model.get(model)
        if price is None:
            return None
        return (reply.prompt_tokens * price.input + reply.completion_tokens * price.output) / 1e6

    @classmethod
    def read(cls, path: str | Path) -> Prices:
        path = Path(path)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeError, json.JSONDecodeError) as exc:
            raise SynthError(f"{path}: cannot read the prices ({exc})") from exc
        if not isinstance(raw, dict):
            raise SynthError(f"{path}: prices must be a JSON object of models")
        try:
            return cls({str(m): ModelPrice.model_validate(p) for m, p in raw.items()})
        except ValidationError as exc:
            first = exc.errors()[0]
            raise SynthError(f"{path}: {first['loc']}: {first['msg']}") from exc
