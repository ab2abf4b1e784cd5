"""What a ``cat synth`` run will cost before its first call (``--dry-run``).

Every call a run would make is rendered as it would be sent: each participant's first
answer to each item (one request per model, item and style, which a pair's generation
shares with its first model's single answer), and a pair's debate and reflection, whose
prompts hold the earlier replies: those are stood in for by text of the expected reply
length. Calls already in the store cost nothing and are counted apart: a first answer
by its request's key, a pair's debate and reflection where the store holds the pair's
whole answer (their keys depend on the replies they review). Tokens by
``synth.token_estimate``.
"""

from __future__ import annotations

from dataclasses import dataclass

from synth.job import RunPlan
from synth.names import GENERATION_STAGE
from synth.store import RunStore
from synth.token_estimate import message_tokens

#: A reply's expected tokens where nothing better is known and no max_tokens caps it.
_FILLER = "word "


@dataclass(frozen=True)
class ModelCalls:
    """One model's share of a run: ``calls`` to make (``stored`` more already in the
    store), tokens in and out (``completion_tokens`` None: unknown), ``cost``."""

    model: str
    calls: int
    stored: int
    prompt_tokens: int
    completion_tokens: int | None
    cost: float | None


@dataclass(frozen=True)
class SynthesisEstimate:
    models: list[ModelCalls]
    reply_tokens: float | None
    reply_source: str

    @property
    def calls(self) -> int:
        return sum(m.calls for m in self.models)


def estimate_synthesis(
    plan: RunPlan, store: RunStore | None, reply_tokens: float | None, reply_source: str
) -> SynthesisEstimate:
    """The calls ``plan`` would make, per model, with ``reply_tokens`` a reply's expected
    length (None: unknown; then ``max_tokens`` if set); ``store`` the run store, if any."""
    settings = plan.settings.generation
    if reply_tokens is None and settings.max_tokens is not None:
        reply_tokens = float(settings.max_tokens)
        reply_source = "max_tokens, a ceiling (no reply length known)"
    stand_in = _FILLER * round(reply_tokens or 0) if reply_tokens else ""
    per_model: dict[str, list[int]] = {}  # model -> [calls, stored, prompt tokens]
    seen: set[str] = set()

    def add(model: str, key: str, tokens: int) -> None:
        if key in seen:  # the same request twice is one call
            return
        seen.add(key)
        counts = per_model.setdefault(model, [0, 0, 0])
        if store is not None and store.get_call(key) is not None:
            counts[1] += 1
            return
        counts[0] += 1
        counts[2] += tokens

    # A pair's answer stored whole names its debate's and reflection's calls.
    answered = {
        (r.participant, r.item_id): {stage["role"]: str(stage["key"]) for stage in r.stages}
        for r in (store.results() if store is not None else [])
        if r.status != "failed"
    }
    prompter, seed = plan.prompter, plan.settings.seed
    for item in plan.questions.items:
        for who in plan.who:
            first = prompter.first(item, who.style)
            request = prompter.request(who.first.model, first, seed, item_id=item.id)
            add(who.first.model, request.key, message_tokens(first))
            if who.second is None:
                continue
            keys = answered.get((who.name, item.id), {})
            debate = prompter.debate(item, who.style, stand_in)
            key = keys.get("debate", f"debate:{who.name}:{item.id}")
            add(who.second.model, key, message_tokens(debate))
            reflection = prompter.reflection(item, who.style, stand_in, stand_in)
            key = keys.get("reflection", f"reflection:{who.name}:{item.id}")
            add(who.first.model, key, message_tokens(reflection))
    prices = plan.prices
    models = []
    for model, (calls, stored, prompt) in per_model.items():
        completion = None if reply_tokens is None else round(reply_tokens * calls)
        cost = None
        if prices is not None and completion is not None:
            cost = prices.token_cost(model, prompt, completion)
        models.append(ModelCalls(model, calls, stored, prompt, completion, cost))
    return SynthesisEstimate(models, reply_tokens, reply_source)


def dry_run(plan: RunPlan) -> SynthesisEstimate:
    """``cat synth --dry-run``: the estimate of ``plan`` against its store if it has one
    (read only), a reply's length the mean of the store's first answers of the run's
    models where it holds some."""
    if not plan.store.is_file():
        return estimate_synthesis(plan, None, None, _UNKNOWN)
    with RunStore(plan.store) as store:
        models = [agent.model for agent in plan.agents]
        mean = store.mean_completion_tokens(models, GENERATION_STAGE)
        source = _UNKNOWN if mean is None else "the mean of these models' replies in the store"
        return estimate_synthesis(plan, store, mean, source)


_UNKNOWN = "unknown: no reply of these models is stored and no max_tokens caps one"
