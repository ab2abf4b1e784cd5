"""The loop of one adaptive test: ask the session's next items, have the examinee answer,
record, repeat until the stopping rule holds.

``on_step`` lets a caller show θ ± SE and the current rank after each batch, and
``checkpoint`` lets it save the session so that an interrupted assessment resumes where
it stopped (``cat.assessment.assess`` does both). ``RunCalls`` counts the calls and
tokens of the whole assessment, its interrupted parts included, from the run store.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cat.assessment.examinees import Examinee
from cat.assessment.result import ItemRecord
from cat.assessment.session import AssessmentSession
from synth.store import RunStore

#: Called after each batch with the session and the item log so far.
Step = Callable[[AssessmentSession, list[ItemRecord]], None]


def run_assessment(
    session: AssessmentSession,
    examinee: Examinee,
    batch_size: int = 1,
    item_log: Sequence[ItemRecord] = (),
    scenario_of: dict[str, str] | None = None,
    on_step: Step | None = None,
    checkpoint: Step | None = None,
    stop_before: Callable[[int], str | None] | None = None,
) -> list[ItemRecord]:
    """Run ``session`` to its stopping rule; returns the item log, in the order given
    (skipped items have response None). An examinee with a ``reply_of(item_id)``
    method (``EndpointExaminee``) gives each item's raw reply and parsed answer too.
    ``stop_before(n)``, asked before each batch of ``n`` items, names a reason to stop
    there (a spending limit: "max_cost"), which becomes the session's stop reason."""
    log = list(item_log)
    reply_of: Callable[[str], tuple[str, str | None] | None] | None = getattr(
        examinee, "reply_of", None
    )
    while not session.done:
        asked = session.next_items(batch_size)
        if not asked:
            break
        why = None if stop_before is None else stop_before(len(asked))
        if why is not None:
            session.stop_reason = why
            break
        answers = examinee.answer(asked)
        for item, response in zip(asked, answers, strict=True):
            session.record(item, response)
        for item, response in zip(asked, answers, strict=True):
            replied = reply_of(item) if reply_of is not None else None
            reply, answer = replied if replied is not None else (None, None)
            log.append(
                ItemRecord(
                    id=item,
                    scenario=(scenario_of or {}).get(item),
                    response=response,
                    theta_after=session.theta,
                    se_after=session.se,
                    reply=reply,
                    answer=answer,
                )
            )
        if checkpoint is not None:
            checkpoint(session, log)
        if on_step is not None:
            on_step(session, log)
    return log


class RunCalls:
    """The calls of one assessment, across interruptions, counted from the run store.

    A fresh assessment notes the store's ``call_mark``: a call stored after it was paid
    by this assessment, any other one came from the store. Each checkpoint saves the
    mark and the keys of the calls so far (``state``), so that a resumed assessment's
    ``usage`` counts its earlier parts too, calls made after their last checkpoint
    included: those are asked again and found in the store above the mark. An examinee
    names its calls by a ``call_keys()`` method (``EndpointExaminee`` does)."""

    def __init__(
        self, store: RunStore, examinee: Examinee, saved: Mapping[str, Any] | None = None
    ) -> None:
        """``saved``: the checkpoint a resumed assessment continues; None for a fresh one."""
        self._store = store
        self._keys_of: Callable[[], list[str]] | None = getattr(examinee, "call_keys", None)
        self._mark: int | None
        if saved is None:
            self._mark, self._earlier = store.call_mark(), []
        else:  # a checkpoint written before these keys existed has neither
            mark = saved.get("call_mark")
            self._mark = mark if isinstance(mark, int) else None
            self._earlier = [str(k) for k in saved.get("call_keys") or []]

    def _keys(self) -> list[str]:
        return [*self._earlier, *(self._keys_of() if self._keys_of is not None else [])]

    def state(self) -> dict[str, Any]:
        """What a checkpoint saves beside the session: the mark and every call so far."""
        return {"call_mark": self._mark, "call_keys": self._keys()}

    def usage(self) -> dict[str, int] | None:
        """Tokens and calls of the whole assessment as ``Examinee.usage`` has them (a
        call is paid once, and its repeats come from the store); None where they cannot
        be told (an examinee that does not name its calls, or a checkpoint without them)."""
        if self._keys_of is None or self._mark is None:
            return None
        keys = self._keys()
        rows = self._store.call_rows(keys)
        paid: set[str] = set()
        usage = dict.fromkeys(
            ("prompt_tokens", "completion_tokens", "calls", "calls_from_store"), 0
        )
        usage["reasoning_tokens"] = 0
        # Replies cut off at the token limit, each call once (a judge's are not asked).
        usage["truncated"] = sum(
            1 for key in dict.fromkeys(keys) if key in rows and rows[key][4] == "length"
        )
        for key in keys:
            row = rows.get(key)
            if row is None or row[0] <= self._mark or key in paid:
                usage["calls_from_store"] += 1
                continue
            paid.add(key)
            usage["prompt_tokens"] += row[1]
            usage["completion_tokens"] += row[2]
            usage["reasoning_tokens"] += row[3]
            usage["calls"] += 1
        return usage
