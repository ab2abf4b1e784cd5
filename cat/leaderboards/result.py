"""The leaderboard as typed results: ``Leaderboard.model_dump(mode="json")`` is the JSON
that ``cat leaderboard --out TABLE.json`` writes.

Keys of the file:

* ``pool``: the pool every run was assessed on (name, version, n_items, path, scored);
  ``measure``: "accuracy", or "score" on a pool of scored items;
* ``rows``: best first, one per run and, with references, one per reference model:

  - ``rank`` (1-based row position), ``kind`` ("model" or "reference"), ``label`` (what
    the table shows: the model's name, with its file where two runs share a name),
    ``model`` (the model's name or the reference's subject id), ``source`` (the
    RESULT.json read; null for a reference or a result passed in memory);
  - ``accuracy`` (the sort key: a run's predicted full-pool accuracy, a reference's
    observed accuracy), ``low`` and ``high`` (a run's 90% interval; null for a
    reference), ``true_accuracy`` (where the run knows it: simulated or replayed);
  - ``theta``, ``se``; ``p_above_next``: the probability that this row's accuracy (the
    sort key) is above the next row's, each taken as normal with the SD of its 90%
    interval (a reference's observed accuracy as exact); null on the last row;
  - ``n_items`` (items the run used; a reference's items answered), ``stop_reason``;
  - ``flags``: what ``cat assess`` flagged about the run's answers, "person fit" (lz below
    its threshold: the answers fit the IRT model poorly) and "difficulty" (the answers
    depend on difficulty less than the references' do), either of which makes the
    prediction less trustworthy, "unlike the references" (its prediction lies farther
    from a companion prediction of the same answers than 9 in 10 references' did: its
    interval is widened for it), "fallback" (the answers do not follow item difficulty,
    by the slope check or the difficulty check: the accuracy shown is the answers' own,
    RESULT.json's ``fallback``), and "off protocol" (the model was not asked and graded
    as the pool's references were: ``settings.protocol`` in RESULT.json names how; its
    θ is on another scale); empty where nothing was;
  - ``calls``, ``calls_from_store``, ``prompt_tokens``, ``completion_tokens`` (null
    without usage: a simulated or replayed model, a reference) and ``cost`` (of the
    run's new calls at the prices given; null where unknown);
  - ``seed``, ``package_version`` (of the run), ``settings`` (the run's settings, every
    key, a nested group's keys joined by a dot: ``generation.temperature``; null for a
    reference);
* ``differing_settings``: the settings keys whose values differ between the runs (the
  table's settings columns); ``common_settings``: the keys and values all runs share;
* ``notes``: what the reader should know (a model run twice, references left out);
* ``sources``: the files read; ``prices``: the prices file, if any;
  ``package_version`` and ``created``: of the leaderboard itself.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, JsonValue

from cat.assessment.result import PoolReference
from cat.results import ResultModel

__all__ = ["Leaderboard", "LeaderboardRow"]


class LeaderboardRow(BaseModel):
    """One row: a run of ``cat assess`` or a reference model of the pool."""

    model_config = ConfigDict(extra="forbid")

    rank: int
    kind: Literal["model", "reference"]
    label: str
    model: str
    source: str | None
    accuracy: float
    low: float | None
    high: float | None
    true_accuracy: float | None
    theta: float
    se: float
    p_above_next: float | None
    n_items: int
    stop_reason: str | None
    flags: list[str]
    calls: int | None
    calls_from_store: int | None
    prompt_tokens: int | None
    completion_tokens: int | None
    cost: float | None
    seed: int | None
    package_version: str | None
    settings: dict[str, JsonValue] | None


class Leaderboard(ResultModel):
    """Runs of ``cat assess`` on one pool, best first (``cat.leaderboard``)."""

    pool: PoolReference
    measure: Literal["accuracy", "score"]
    rows: list[LeaderboardRow]
    differing_settings: list[str]
    common_settings: dict[str, JsonValue]
    notes: list[str]
    sources: list[str]
    prices: str | None
    package_version: str
    created: str

    @property
    def models(self) -> list[LeaderboardRow]:
        """The runs' rows, best first (no references)."""
        return [row for row in self.rows if row.kind == "model"]
