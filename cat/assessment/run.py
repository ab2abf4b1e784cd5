"""The loop of one adaptive test: ask the session's next items, have the examinee answer,
record, repeat until the stopping rule holds.

``on_step`` lets a caller show θ ± SE and the current rank after each batch, and
``checkpoint`` lets it save the session so that an interrupted assessment resumes where
it stopped (``cat.assessment.assess`` does both).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cat.assessment.examinees import Examinee
from cat.assessment.result import ItemRecord
from cat.engine.session import AssessmentSession

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
) -> list[ItemRecord]:
    """Run ``session`` to its stopping rule; returns the item log, in the order given
    (skipped items have response None)."""
    log = list(item_log)
    while not session.done:
        asked = session.next_items(batch_size)
        if not asked:
            break
        answers = examinee.answer(asked)
        for item, response in zip(asked, answers, strict=True):
            session.record(item, response)
        for item, response in zip(asked, answers, strict=True):
            log.append(
                ItemRecord(
                    id=item,
                    scenario=(scenario_of or {}).get(item),
                    response=response,
                    theta_after=session.theta,
                    se_after=session.se,
                )
            )
        if checkpoint is not None:
            checkpoint(session, log)
        if on_step is not None:
            on_step(session, log)
    return log
