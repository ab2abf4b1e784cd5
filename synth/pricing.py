"""Optional cost estimates: prices per model from a JSON file.

    {"gpt-4o": {"input": 2.5, "output": 10.0}, "deepseek-chat": {"input": 0.27, "output": 1.1}}

Prices are in any currency per million tokens; a model without a price costs ``None``
(unknown), not 0. A call answered through a batch (``--batch``, ``--batch-in``) costs the
batch price: half the online price unless the model gives its own
(``"batch_input"``, ``"batch_output"``), as OpenAI's Batch API charges half.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from synth.backend import ChatReply
from synth.errors import SynthError

#: A batch price as a share of the online one, where the prices file gives none.
BATCH_SHARE = 0.5


class ModelPrice(BaseModel):
    """Price per million prompt (input) and completion (output) tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    batch_input: float | None = Field(default=None, ge=0)
    batch_output: float | None = Field(default=None, ge=0)

    def per_token(self, batch: bool) -> tuple[float, float]:
        """(input, output) per million tokens, online or through a batch."""
        if not batch:
            return self.input, self.output
        return (
            BATCH_SHARE * self.input if self.batch_input is None else self.batch_input,
            BATCH_SHARE * self.output if self.batch_output is None else self.batch_output,
        )


@dataclass(frozen=True)
class Prices:
    """Prices by model name."""

    by_model: dict[str, ModelPrice]

    def cost(self, model: str, reply: ChatReply, batch: bool = False) -> float | None:
        return self.token_cost(model, reply.prompt_tokens, reply.completion_tokens, batch)

    def token_cost(
        self, model: str, prompt_tokens: int, completion_tokens: int, batch: bool = False
    ) -> float | None:
        """What the tokens cost online (or through a batch); None without a price."""
        price = self.by_model.get(model)
        if price is None:
            return None
        per_input, per_output = price.per_token(batch)
        return (prompt_tokens * per_input + completion_tokens * per_output) / 1e6

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
