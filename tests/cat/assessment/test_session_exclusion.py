"""Items a session never asks (the few-shot examples): every design, and after a resume."""

from __future__ import annotations

import numpy as np
import pytest

from cat.assessment.session import AssessmentSession, SessionConfig
from cat.designs.models import ReferenceModels
from cat.errors import CatError
from irt.simulate import random_params, simulate_responses

PARAMS = random_params(60, np.random.default_rng(0), "2pl")
INDEX = {item: j for j, item in enumerate(PARAMS.item_ids)}


def _models() -> ReferenceModels:
    rng = np.random.default_rng(1)
    return ReferenceModels.fit(simulate_responses(PARAMS, rng.normal(size=40), rng))


def _most_wanted(design: str, models: ReferenceModels) -> list[str]:
    """The items a session without exclusions asks first: those an exclusion must move."""
    session = AssessmentSession(
        PARAMS, SessionConfig(design=design, max_items=5), reference_models=models
    )
    return session.next_items(5)


@pytest.mark.parametrize("design", ["irt", "mixture", "low-rank"])
def test_excluded_items_are_never_asked_even_after_a_resume(design: str) -> None:
    models = _models()
    excluded = tuple(_most_wanted(design, models))
    config = SessionConfig(design=design, max_items=PARAMS.n_items, excluded_items=excluded)  # type: ignore[arg-type]
    session = AssessmentSession(PARAMS, config, reference_models=models)
    rng = np.random.default_rng(2)
    for _ in range(10):
        for item in session.next_items(2):
            session.record(item, int(rng.random() < 0.6))
    session = AssessmentSession.from_json(session.to_json(), PARAMS, reference_models=models)
    while not session.done:
        for item in session.next_items(3):
            session.record(item, int(rng.random() < 0.6))
    # Every other item is asked, then the pool counts as exhausted.
    assert session.stop_reason == "pool_exhausted"
    assert not set(session.given) & set(excluded)
    assert len(session.given) == PARAMS.n_items - len(excluded)
    if session.design is not None:
        # still in the items the prediction is over, unlike a skipped item
        value, _ = session.design.predicted()
        assert 0 < value < 1
        mask = np.zeros(PARAMS.n_items, dtype=bool)
        mask[[INDEX[i] for i in excluded]] = True
        assert not np.isnan(session.design.predicted(mask)[0])


def test_an_excluded_item_must_be_in_the_pool() -> None:
    with pytest.raises(CatError, match="not in the pool"):
        AssessmentSession(PARAMS, SessionConfig(excluded_items=("nope",)))


@pytest.mark.parametrize("design", ["irt", "mixture"])
def test_one_copy_of_a_duplicated_item_is_asked_even_after_a_resume(design: str) -> None:
    models = _models()
    # The items each design asks first, each copied by another item of the pool.
    wanted = _most_wanted(design, models)
    others = [i for i in PARAMS.item_ids if i not in wanted]
    pairs = list(zip(wanted, others[: len(wanted)], strict=True))
    copies = {a: (b,) for a, b in pairs} | {b: (a,) for a, b in pairs}
    config = SessionConfig(design=design, max_items=PARAMS.n_items)  # type: ignore[arg-type]
    session = AssessmentSession(PARAMS, config, reference_models=models, twins=copies)
    rng = np.random.default_rng(3)
    for _ in range(10):
        for item in session.next_items(3):
            session.record(item, int(rng.random() < 0.6))
    session = AssessmentSession.from_json(
        session.to_json(), PARAMS, reference_models=models, twins=copies
    )
    while not session.done:
        for item in session.next_items(4):
            session.record(item, int(rng.random() < 0.6))
    asked = set(session.given)
    assert all(len(asked & {a, b}) == 1 for a, b in pairs)
    assert len(session.given) == PARAMS.n_items - len(pairs)


def test_copies_outside_the_calibrated_items_are_left_out() -> None:
    first = PARAMS.item_ids[0]
    copies = {first: ("not-calibrated", PARAMS.item_ids[1]), "not-calibrated": (first,)}
    session = AssessmentSession(PARAMS, SessionConfig(max_items=5), twins=copies)
    assert session.twins == {first: (PARAMS.item_ids[1],)}
    for item in session.next_items(5):
        session.record(item, 1)
    assert len(session.given) == 5
