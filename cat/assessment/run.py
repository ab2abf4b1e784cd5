"""One model's adaptive test on a calibrated pool, from the first item to RESULT.json.

The loop asks the session for the next k items, has the examinee answer them (k calls at
once for a live model), records the answers and calls ``on_step`` so that the command
line can show θ ± SE and the current rank, and ``checkpoint`` so that an interrupted
assessment resumes where it stopped.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

from cat.examinees import Examinee
from cat.prediction_errors import PredictionErrors
from cat.report import Reference, summarize
from cat.session import AssessmentSession

#: Called after each batch with the session and the item log so far.
Step = Callable[[AssessmentSession, list[dict[str, Any]]], None]


def run_assessment(
    session: AssessmentSession,
    examinee: Examinee,
    batch_size: int = 1,
    item_log: list[dict[str, Any]] | None = None,
    scenario_of: dict[str, str] | None = None,
    on_step: Step | None = None,
    checkpoint: Step | None = None,
) -> list[dict[str, Any]]:
    """Run ``session`` to its stopping rule; returns the item log
    [{id, scenario, response, theta_after, se_after}] (skipped items have response None)."""
    log = list(item_log or [])
    while not session.done:
        asked = session.next_items(batch_size)
        if not asked:
            break
        answers = examinee.answer(asked)
        for item, response in zip(asked, answers, strict=True):
            session.record(item, response)
        for item, response in zip(asked, answers, strict=True):
            log.append(
                {
                    "id": item,
                    "scenario": (scenario_of or {}).get(item),
                    "response": response,
                    "theta_after": session.theta,
                    "se_after": session.se,
                }
            )
        if checkpoint is not None:
            checkpoint(session, log)
        if on_step is not None:
            on_step(session, log)
    return log


def current_rank(theta: float, references: Sequence[Reference]) -> int:
    """1 + the number of references above ``theta``."""
    return 1 + sum(r.theta > theta for r in references)


def build_result(
    session: AssessmentSession,
    item_log: list[dict[str, Any]],
    references: list[Reference],
    scenario_names: list[str] | None,
    header: dict[str, Any],
    prediction_errors: PredictionErrors | None = None,
) -> dict[str, Any]:
    """The RESULT.json of the CLI contract: ``header`` (model, pool, settings, seed …)
    followed by the summary, the rank and the items in the order given."""
    summary = summarize(session, references or None, scenario_names, prediction_errors)
    return {
        **header,
        **summary,
        "items": item_log,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
