"""A reference design inside ``AssessmentSession``: items, skips, prediction and an
exact resume."""

from __future__ import annotations

import numpy as np
import pytest

from cat.assessment.session import AssessmentSession, SessionConfig
from cat.designs.models import ReferenceModels
from cat.errors import CatError
from irt.responses import ResponseMatrix
from irt.simulate import random_params, simulate_responses

PARAMS = random_params(120, np.random.default_rng(0), "2pl")


def _references(n: int = 60) -> ResponseMatrix:
    rng = np.random.default_rng(1)
    return simulate_responses(PARAMS, rng.normal(size=n), rng)


def _answers(theta: float) -> np.ndarray:
    rng = np.random.default_rng(2)
    prob = 1 / (1 + np.exp(-PARAMS.a * (theta - PARAMS.b)))
    return (rng.random(PARAMS.n_items) < prob).astype(int)


@pytest.mark.parametrize("design", ["mixture", "low-rank"])
def test_a_session_runs_the_design_and_resumes_exactly(design: str) -> None:
    models = ReferenceModels.fit(_references())
    config = SessionConfig(design=design, max_items=30)
    session = AssessmentSession(PARAMS, config, reference_models=models)
    answers = _answers(0.4)
    index = {item: j for j, item in enumerate(PARAMS.item_ids)}
    for step in range(12):
        (item,) = session.next_items()
        # Every fifth item cannot be answered: it is skipped, never asked again.
        session.record(item, None if step % 5 == 4 else int(answers[index[item]]))
    saved = session.to_json()
    resumed = AssessmentSession.from_json(saved, PARAMS, reference_models=models)
    assert resumed.next_items(3) == session.next_items(3)
    assert resumed.design is not None and session.design is not None
    assert resumed.design.predicted() == pytest.approx(session.design.predicted())
    value, sd = session.design.predicted()
    assert 0 < sd < 0.2
    # Over the items it can answer (the skipped ones are not), near its true share right.
    answerable = np.ones(PARAMS.n_items, dtype=bool)
    answerable[[index[i] for i in session.skipped]] = False
    assert abs(value - answers[answerable].mean()) < 0.1


def test_a_session_with_every_item_answered_predicts_exactly() -> None:
    models = ReferenceModels.fit(_references())
    config = SessionConfig(design="mixture", max_items=PARAMS.n_items)
    session = AssessmentSession(PARAMS, config, reference_models=models)
    answers = _answers(-0.3)
    index = {item: j for j, item in enumerate(PARAMS.item_ids)}
    while not session.done:
        for item in session.next_items(7):
            session.record(item, int(answers[index[item]]))
    assert session.design is not None
    value, sd = session.design.predicted()
    assert value == pytest.approx(answers.mean()) and sd == pytest.approx(0.0)


def test_a_reference_design_needs_the_references_answers() -> None:
    with pytest.raises(CatError, match="references' answers"):
        AssessmentSession(PARAMS, SessionConfig(design="low-rank"))
    with pytest.raises(CatError, match="answered 50 items"):
        models = ReferenceModels.fit(_references().subset(items=np.arange(50)))
        AssessmentSession(PARAMS, SessionConfig(design="mixture"), reference_models=models)
