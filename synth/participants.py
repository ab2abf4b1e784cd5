"""Who answers: agents (one LLM behind one endpoint) and participants built from them.

N agents give N single participants and N·(N−1) ordered pairs per prompt style; each
participant is one subject of the response matrix, named so that the name says how it
answered: ``m1`` (single, direct), ``m1>m2`` (m1 generates and reflects, m2 debates),
``m1+cot`` / ``m1>m2+cot`` for the chain-of-thought style.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from synth.errors import SynthError
from synth.names import KINDS as KINDS
from synth.prompts import Style


@dataclass(frozen=True)
class Agent:
    """A model name as the endpoint knows it, and the endpoint's base URL ("" for an
    agent only asked through batch files, which call no endpoint)."""

    model: str
    base_url: str

    def __post_init__(self) -> None:
        if not self.model:
            raise SynthError("an agent needs a model name")
        if self.base_url and not self.base_url.startswith(("http://", "https://")):
            raise SynthError(f"agent {self.model}: base URL must start with http(s)://")


@dataclass(frozen=True)
class Participant:
    """One agent answering alone, or an ordered pair (``first`` generates and reflects,
    ``second`` debates)."""

    first: Agent
    second: Agent | None = None
    style: Style = Style.DIRECT

    @property
    def name(self) -> str:
        base = (
            self.first.model if self.second is None else f"{self.first.model}>{self.second.model}"
        )
        return base if self.style is Style.DIRECT else f"{base}+{self.style.value}"

    @property
    def n_stages(self) -> int:
        return 1 if self.second is None else 3


def parse_agents(spec: str, base_url: str | None, *, need_url: bool = True) -> list[Agent]:
    """Agents from "m1,m2@http://host:8000/v1,...": a model takes its own URL after "@",
    else ``base_url``. An agent without either is refused unless ``need_url`` is false
    (a run through batch files): its URL is then ""."""
    agents: list[Agent] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        model, sep, url = part.partition("@")
        url = url if sep else (base_url or "")
        if not url and need_url:
            raise SynthError(f"agent {model} has no URL: give --base-url or {model}@URL")
        agents.append(Agent(model.strip(), url.strip()))
    if not agents:
        raise SynthError("give at least one agent")
    names = [a.model for a in agents]
    if len(set(names)) != len(names):
        raise SynthError(f"an agent is listed twice: {', '.join(names)}")
    return agents


def make_participants(
    agents: list[Agent], kinds: Iterable[str] = KINDS, styles: Iterable[Style] = (Style.DIRECT,)
) -> list[Participant]:
    """All singles and/or all ordered pairs of ``agents``, for each style."""
    chosen = set(kinds)
    unknown = chosen - set(KINDS)
    if unknown or not chosen:
        raise SynthError(f"participants must be among {', '.join(KINDS)}, got {sorted(chosen)}")
    out: list[Participant] = []
    for style in styles:
        if "singles" in chosen:
            out.extend(Participant(a, None, style) for a in agents)
        if "pairs" in chosen:
            out.extend(Participant(a, b, style) for a in agents for b in agents if a != b)
    if not out:
        raise SynthError("pairs need at least two agents")
    return out
