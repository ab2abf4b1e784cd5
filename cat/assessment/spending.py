"""``--max-cost``: a live model's run stops before a call would take its spending past
a limit, at the prices of ``--prices`` (``synth.pricing``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from cat import arguments as check
from cat.arguments import PathArg
from cat.errors import CatError
from synth.errors import SynthError
from synth.pricing import Prices

#: The stop reason of a run held to its limit (RESULT.json's ``stop_reason``).
MAX_COST = "max_cost"


@dataclass(frozen=True)
class SpendingLimit:
    """Stop before the next batch when what was spent (``spent()``: the run's usage,
    its paid calls only) and the batch's expected cost (``per_call`` each) would pass
    ``max_cost``."""

    max_cost: float
    per_call: float
    prices: Prices
    model: str
    usage: Callable[[], Mapping[str, int] | None]

    def spent(self) -> float:
        usage = self.usage() or {}
        cost = self.prices.token_cost(
            self.model, usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
        )
        return cost or 0.0

    def reason(self, batch: int) -> str | None:
        """``MAX_COST`` where a batch of ``batch`` calls would pass the limit, else None.
        A call is expected to cost the estimate's ``per_call``, or what the run's paid
        calls have cost on average where that is more (a reply longer than expected, or
        of a length nobody knew)."""
        spent = self.spent()
        paid = (self.usage() or {}).get("calls", 0)
        per_call = max(self.per_call, spent / paid) if paid else self.per_call
        return MAX_COST if spent + batch * per_call > self.max_cost else None


def read_prices(prices: Prices | PathArg | None) -> Prices | None:
    """Prices as given, or read from their JSON file (``--prices``); None for none."""
    if prices is None or isinstance(prices, Prices):
        return prices
    try:
        return Prices.read(check.as_path(prices, "prices"))
    except SynthError as exc:
        raise CatError(str(exc)) from exc


def check_limit(max_cost: float | None, prices: Prices | None, model: str, live: bool) -> None:
    """Refuse a limit that could not be held: without prices, on a model that is not
    asked through an endpoint (it costs nothing), or without the model's price."""
    if max_cost is None:
        return
    if not max_cost > 0:
        raise CatError(f"max_cost must be above 0, got {max_cost}")
    if not live:
        raise CatError(f"max_cost holds a live model's spending; {model} makes no call")
    if prices is None:
        raise CatError("max_cost needs prices (--prices FILE) to turn tokens into money")
    if model not in prices.by_model:
        known = ", ".join(sorted(prices.by_model)) or "none"
        raise CatError(f"max_cost: the prices give no price for {model} (they price: {known})")
