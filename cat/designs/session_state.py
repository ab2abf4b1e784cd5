"""A reference design inside one examinee's ``AssessmentSession``: items by pool
position, one at a time or k together, as the session asks and records them."""

from __future__ import annotations

import numpy as np

from cat.designs.audited import select_with_audits
from cat.designs.low_rank import LowRankTest
from cat.designs.mixture import MixtureTest
from cat.designs.models import ReferenceModels
from cat.designs.per_scenario import scenario_accuracy
from cat.errors import CatError
from irt.types import BoolArray

_ROW = np.array([0])


class ReferenceDesign:
    """The mixture, low-rank or bifactor design (``design``) of one examinee on a pool
    of ``n_items``, over at most ``max_items`` answers."""

    def __init__(self, design: str, models: ReferenceModels, n_items: int, max_items: int) -> None:
        if models.answers.shape[1] != n_items:
            raise CatError(
                f"the references answered {models.answers.shape[1]} items, the pool has {n_items}"
            )
        can_answer = np.ones((1, n_items), dtype=bool)
        test = models.test(design, can_answer, max_items)
        assert isinstance(test, MixtureTest | LowRankTest)
        self.test: MixtureTest | LowRankTest = test
        self._right = np.zeros(n_items)
        self._given = np.zeros(n_items, dtype=bool)
        self._blocked = np.zeros(n_items, dtype=bool)

    def block(self, positions: list[int]) -> None:
        """Never select ``positions`` (the few-shot examples): unlike a skipped item,
        a blocked one stays among the items the prediction is over."""
        self._blocked[positions] = True

    def select(self, k: int, n_given: int = 0, audit_every: int | None = None) -> list[int]:
        """The next ``k`` positions (fewer when fewer are left) for an examinee who has
        answered ``n_given``, with an audit item every ``audit_every`` items
        (``cat.engine.audit``)."""
        available = self.test.available
        open_now = available[0] & ~self._blocked
        k = min(k, int(open_now.sum()))
        if k < 1:
            return []
        if not self._blocked.any():
            return [int(j) for j in select_with_audits(self.test, _ROW, k, n_given, audit_every)[0]]
        # Hidden from the selection only: the mixture's scores are then exact, and the
        # low-rank design's target leaves out the few blocked items' share of the unasked
        # score while it chooses.
        blocked = available[0] & self._blocked
        available[0, blocked] = False
        try:
            return [int(j) for j in select_with_audits(self.test, _ROW, k, n_given, audit_every)[0]]
        finally:
            available[0, blocked] = True

    def record(self, position: int, right: int) -> None:
        self.test.record(_ROW, np.array([position]), np.array([float(right)]))
        self._right[position] = float(right)
        self._given[position] = True

    def skip(self, position: int) -> None:
        self.test.skip(_ROW, np.array([position]))

    def refit(self) -> None:
        self.test.refit(_ROW)

    def predicted(self, mask: BoolArray | None = None) -> tuple[float, float]:
        """(predicted accuracy, its sd under the design's own model) on the items in
        ``mask`` (all when None) that the examinee can answer: the right answers given
        there plus the expected number right on the rest."""
        mask = np.ones(len(self._given), dtype=bool) if mask is None else mask
        answerable = (self.test.available[0] | self._given)[None, :]
        n = int((answerable[0] & mask).sum())
        if n == 0:
            return float("nan"), float("nan")
        value = scenario_accuracy(
            mask[None, :],
            answerable,
            self._given[None, :],
            self._right[None, :],
            self.test.item_expectations(),
        )[0, 0]
        return float(value), float(self.test.spread(mask)[0]) / n
