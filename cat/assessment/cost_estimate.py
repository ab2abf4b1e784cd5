"""What a run will cost before its first call (``--dry-run``): calls, tokens in and out,
money with prices.

Prompt tokens come from the prompts themselves, rendered as the run would send them
(the pool's protocol, the run's generation settings, its few-shot examples) and counted
by ``synth.token_estimate``: every item's for pools up to ``SAMPLE`` items, else a
seeded sample's mean. An adaptive test asks the pool's scenarios in their shares
(content balancing), so the pool's mean prompt is the test's. Reply tokens come from the
references' replies where the pool records their mean length (``cat synth`` and ``cat
pool create`` record it in the protocol's ``reply_tokens``), else from the model's own
replies in its run store (an earlier run), else from ``max_tokens`` as a ceiling, else
they are unknown and said so.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cat.assessment.endpoint import ASSESS_STAGE, EndpointExaminee
from itempool import LoadedPool, PoolItem
from synth.pricing import Prices
from synth.store import RunStore
from synth.token_estimate import estimate_tokens, message_tokens

#: Pools up to this many items have every prompt rendered; larger ones a sample this big.
SAMPLE = 2000


@dataclass(frozen=True)
class CallsEstimate:
    """What one model's run is expected to cost: ``calls`` at most (a test may stop
    early), ``prompt_tokens`` and ``completion_tokens`` in all (None: unknown),
    ``cost`` with prices (None without the model's price or the reply length)."""

    model: str
    calls: int
    prompt_tokens: int
    completion_tokens: int | None
    cost: float | None
    prompt_per_call: float
    reply_per_call: float | None
    #: Where ``reply_per_call`` comes from, in words.
    reply_source: str
    #: How many items' prompts were rendered for ``prompt_per_call``.
    rendered: int

    @property
    def tokens(self) -> int | None:
        if self.completion_tokens is None:
            return None
        return self.prompt_tokens + self.completion_tokens


def estimate_assessment(
    pool: LoadedPool,
    examinee: EndpointExaminee,
    *,
    length: int,
    seed: int = 0,
    prices: Prices | None = None,
) -> CallsEstimate:
    """The cost of ``examinee``'s test of at most ``length`` items on ``pool``; no call is
    made and nothing is written (an examinee started already is not prepared again)."""
    if examinee.followed is None:
        examinee.prepare(pool, seed)
    excluded = set(examinee.example_items())
    askable = [item for item in pool.items if item.id not in excluded]
    calls = min(length, len(askable))
    rendered = _sample(askable, seed)
    assert examinee.followed is not None  # set by prepare
    settings = examinee.followed.settings
    if settings.mode == "loglikelihood":
        # One call an item scores every option: the prompt once per option, no reply.
        per_call = _mean(
            [
                len(item.options) * (message_tokens(examinee.prompt(item)) + 1)
                + sum(estimate_tokens(text) for text in item.options.values())
                for item in rendered
            ]
        )
        reply: float | None = 0.0
        source = "log-likelihood scoring: no reply"
    else:
        per_call = _mean([message_tokens(examinee.prompt(item)) for item in rendered])
        reply, source = reply_tokens(pool, examinee)
    prompt_total = round(per_call * calls)
    completion_total = None if reply is None else round(reply * calls)
    cost = None
    if prices is not None and completion_total is not None:
        cost = prices.token_cost(examinee.model, prompt_total, completion_total)
    return CallsEstimate(
        model=examinee.model,
        calls=calls,
        prompt_tokens=prompt_total,
        completion_tokens=completion_total,
        cost=cost,
        prompt_per_call=per_call,
        reply_per_call=reply,
        reply_source=source,
        rendered=len(rendered),
    )


def reply_tokens(pool: LoadedPool, examinee: EndpointExaminee) -> tuple[float | None, str]:
    """(a reply's expected tokens, where the figure comes from): the references' mean
    under the protocol followed; the model's own in its store; ``max_tokens`` as a
    ceiling; else (None, why)."""
    followed = examinee.followed
    assert followed is not None  # set by prepare
    spec = pool.protocol.spec
    form = spec.in_form(followed.form) if followed.form in spec.form_names else spec
    if form.reply_tokens is not None:
        departs = ", ".join(followed.differs)
        note = f" (this run departs from it: {departs})" if departs else ""
        return form.reply_tokens, f"the references' mean reply under the pool's protocol{note}"
    mine = _stored_replies(examinee)
    if mine is not None:
        return mine, "the mean of this model's replies in the store"
    if followed.settings.max_tokens is not None:
        ceiling = float(followed.settings.max_tokens)
        return ceiling, "max_tokens, a ceiling (the pool records no reply length)"
    return None, "unknown: the pool records no reply length and the run sets no max_tokens"


def _stored_replies(examinee: EndpointExaminee) -> float | None:
    """The mean completion tokens of the model's assessment calls in its store (read
    only; None without a store file or such calls)."""
    store = examinee.store
    if store is None:  # a dry run's examinee may have none
        return None
    if isinstance(store, RunStore):
        return store.mean_completion_tokens([examinee.model], ASSESS_STAGE)
    path = Path(store)
    if not path.is_file():
        return None
    with RunStore(path) as opened:
        return opened.mean_completion_tokens([examinee.model], ASSESS_STAGE)


def _sample(items: Sequence[PoolItem], seed: int) -> list[PoolItem]:
    if len(items) <= SAMPLE:
        return list(items)
    return random.Random(seed).sample(list(items), SAMPLE)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0
