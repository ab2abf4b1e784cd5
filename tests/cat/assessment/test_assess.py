"""``cat.assessment.assess``: saving an interrupted run and taking it up again."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from cat.assessment.assess import _saved, _start
from cat.assessment.result import ItemRecord
from cat.assessment.session import AssessmentSession, SessionConfig
from cat.errors import CatError
from cat.pools.loading import load_pool
from synth.store import RunStore

DEMO_EN = Path(__file__).resolve().parents[3] / "item_pools" / "demo-en"


def test_a_run_whose_answers_were_all_skipped_so_far_resumes(tmp_path: Path) -> None:
    """Before the first answer the SE is infinite; the saved run must come back as it was."""
    params = load_pool(DEMO_EN).params
    assert params is not None
    config = SessionConfig(max_items=5, seed=3)
    session = AssessmentSession(params, config)
    item = session.next_items(1)[0]
    session.record(item, None)
    log = [ItemRecord(id=item, scenario=None, response=None, theta_after=0.0, se_after=session.se)]
    assert math.isinf(log[0].se_after)
    with RunStore(tmp_path / "calls.db") as store:
        store.set_meta("key", _saved(session, log))
        resumed, items = _start(store, "key", "m", params, config, None, resume=True)
        assert items == log and resumed.skipped == [item]
        assert resumed.next_items(1) == session.next_items(1)  # the same next item
        with pytest.raises(CatError, match="add resume to continue"):
            _start(store, "key", "m", params, config, None, resume=False)
        other = SessionConfig(max_items=6, seed=3)
        with pytest.raises(CatError, match="same settings"):
            _start(store, "key", "m", params, other, None, resume=True)
