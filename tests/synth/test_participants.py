"""Agents, participants and their names."""

from __future__ import annotations

import pytest

from synth.errors import SynthError
from synth.participants import make_participants, parse_agents
from synth.prompts import Style


def test_agents_take_the_shared_or_their_own_url() -> None:
    agents = parse_agents("m1, m2@http://other:8000/v1", "http://main/v1")
    assert [(a.model, a.base_url) for a in agents] == [
        ("m1", "http://main/v1"),
        ("m2", "http://other:8000/v1"),
    ]
    with pytest.raises(SynthError, match="agent m1 has no URL"):
        parse_agents("m1", None)
    with pytest.raises(SynthError, match="listed twice"):
        parse_agents("m1,m1", "http://x/v1")
    with pytest.raises(SynthError, match="http"):
        parse_agents("m1@ftp://x", None)


def test_agents_of_a_run_through_batch_files_need_no_url() -> None:
    agents = parse_agents("m1, m2@http://other:8000/v1", None, need_url=False)
    assert [(a.model, a.base_url) for a in agents] == [("m1", ""), ("m2", "http://other:8000/v1")]
    with pytest.raises(SynthError, match="http"):
        parse_agents("m1@ftp://x", None, need_url=False)


def test_singles_and_ordered_pairs_per_style() -> None:
    agents = parse_agents("a,b,c", "http://x/v1")
    everyone = make_participants(agents, styles=(Style.DIRECT, Style.COT))
    names = [p.name for p in everyone]
    assert len(names) == 2 * (3 + 6) and len(set(names)) == len(names)
    assert {"a", "a>b", "b>a", "c+cot", "c>a+cot"} <= set(names)
    pairs = make_participants(agents, ["pairs"])
    assert all(p.second is not None and p.n_stages == 3 for p in pairs) and len(pairs) == 6
    with pytest.raises(SynthError, match="participants must be among"):
        make_participants(agents, ["trios"])
    with pytest.raises(SynthError, match="at least two agents"):
        make_participants(agents[:1], ["pairs"])
