"""Two models on the same items, one step at a time: ask, record both answers, re-estimate
both θ, check the stopping rule.

``PairedTest`` holds no examinee: ``next_items`` gives pool positions, ``record`` takes
both answers (None where a model cannot answer: the item is then dropped for both, as a
paired comparison uses only items both answered). ``cat.comparison.compare`` drives it
with two examinees; the benchmark drives it with recorded answers.

Each model's θ̂ comes from the pool's default estimator and its predicted accuracy from
``cat.comparison.plugin`` (``cat assess``'s IRT design) or the reference mixture; Δ̂ is
their difference. Its interval is joined with the shared answers' own paired interval,
and its stored width widened for a pair with a model unlike the references
(``cat.comparison.plugin.difference``). The
test stops, at a look (``CompareSettings.look_lengths``: a few numbers of shared items
from ``min_length`` on, each look's interval at the levels that keep the error rate of
the looks together, ``CompareSettings``), when the interval excludes 0 ("A better" or "B better") or
lies inside ±``margin`` ("equivalent"); at ``max_length`` it stops "inconclusive" unless
one of those holds there.
"""

from __future__ import annotations

import numpy as np

from cat.comparison.criterion import DifferencePolicy
from cat.comparison.plugin import (
    A_BETTER,
    B_BETTER,
    EQUIVALENT,
    INCONCLUSIVE,
    Difference,
    ModelAccuracy,
    PlugIn,
    Terms,
    decide,
    design_accuracy,
    difference,
)
from cat.comparison.predictors import IRT, MIXTURE, PairMixture, Predictor
from cat.comparison.settings import CompareSettings
from cat.engine.constraints import ContentBalanced, pool_shares
from cat.engine.registry import make_estimator
from cat.engine.selection import PoolInfo, RandomItem, SelectionPolicy, SelectionState
from cat.engine.simulation import estimation
from cat.errors import CatError
from irt.models import ItemParams

__all__ = [
    "A_BETTER",
    "B_BETTER",
    "EQUIVALENT",
    "EXCLUDES_ZERO",
    "INCONCLUSIVE",
    "MAX_LENGTH",
    "POOL_EXHAUSTED",
    "WITHIN_MARGIN",
    "PairedTest",
]

#: Why a comparison stopped.
EXCLUDES_ZERO, WITHIN_MARGIN, MAX_LENGTH, POOL_EXHAUSTED = (
    "interval_excludes_zero",
    "within_margin",
    "max_length",
    "pool_exhausted",
)


class PairedTest:
    """The comparison of two models, A and B, on one 0/1 pool (``params``): the
    references' ``offset``, the ``predictor`` of each model's accuracy with its
    cross-fitted errors (``cat.comparison.predictors``; None: the IRT plug-in without
    errors, the interval then the posterior one alone), each item's ``scenario`` code
    for content balancing.

    After each batch: ``theta`` and ``se`` (A's, B's), ``terms`` (each model's predicted
    accuracy, its slope in θ and the unseen answers' variance), ``difference`` (Δ̂ with
    the interval of the current look), and once stopped ``decision`` and
    ``stop_reason``."""

    def __init__(
        self,
        params: ItemParams,
        settings: CompareSettings,
        scenario: tuple[int, ...] | None = None,
        offset: float = 0.0,
        predictor: Predictor | None = None,
        pool_info: PoolInfo | None = None,
    ) -> None:
        if getattr(params, "family", None) != "binary":  # any other set, or none
            raise CatError("a paired comparison needs a pool of 0/1 items")
        if scenario is not None and len(scenario) != params.n_items:
            raise CatError("one scenario code per pool item is needed")
        self.params, self.settings = params, settings
        self.predictor = predictor or Predictor(IRT, None)
        self.errors = self.predictor.errors
        self.plug_in = PlugIn(params, offset)
        # The mixture of the references' answers: the prediction itself, or beside the
        # plug-in its companion (each model's disagreement scales the interval).
        self._mixture = None
        if self.predictor.references is not None:
            self._mixture = PairMixture(self.predictor.references, params.n_items)
        self._by_mixture = self._mixture is not None and self.predictor.name == MIXTURE
        self.scenario = scenario if settings.content_balancing and scenario else None
        self.pool_info = pool_info or PoolInfo.build(params)
        self._estimate = estimation(params, self.pool_info, make_estimator(settings.estimator))
        self._rng = np.random.default_rng(settings.seed)
        self.given: list[int] = []
        self.right: list[tuple[int, int]] = []
        self._paired: list[float] = []  # A right − B right, per shared item
        self.skipped: list[int] = []
        self.theta = np.zeros(2)
        self.se = np.full(2, np.inf)
        self.decision: str | None = None
        self.stop_reason: str | None = None
        self._pending: list[int] = []
        self._looked = 0  # shared items at the last check
        self._looks = settings.look_lengths()
        self._used = np.zeros(params.n_items, dtype=bool)  # given, skipped or pending
        self._given = np.zeros(params.n_items, dtype=bool)
        self._irt_terms = self._terms_now()
        self.terms = self._predicted_terms()
        self.difference = self._difference()

    @property
    def done(self) -> bool:
        return self.stop_reason is not None

    # --- the test --------------------------------------------------------------------
    def next_items(self, k: int = 1) -> list[int]:
        """The next ``k`` pool positions to ask both models (fewer where the test or the
        pool ends first); asked again until answered."""
        if self.done:
            return []
        if k < 1:
            raise CatError(f"ask for at least one item, not {k}")
        if self._pending:
            return list(self._pending)
        room = self.settings.max_length - len(self.given)
        available = ~self._used
        given = self._given.copy()
        totals = self._totals()
        for _ in range(min(k, room, int(available.sum()))):
            state = SelectionState(
                theta=self.theta[:1], available=available[None, :], given=given[None, :]
            )
            j = int(self._policy(totals).select(self.pool_info, state, self._rng)[0])
            available[j], given[j] = False, True
            self._pending.append(j)
            # A batch is chosen at one θ̂: each item adds its information before the next.
            info = self.pool_info.at(self.theta)[:, j]
            totals = (totals[0] + float(info[0]), totals[1] + float(info[1]))
        self._used[self._pending] = True
        if not self._pending:
            self._stop(INCONCLUSIVE, POOL_EXHAUSTED)
        return list(self._pending)

    def exclude(self, positions: list[int]) -> None:
        """Never ask these items (a live model's few-shot examples)."""
        if self.given or self.skipped or self._pending:
            raise CatError("exclude items before the first is asked")
        self._used[positions] = True

    def record(self, position: int, answer_a: int | None, answer_b: int | None) -> None:
        """Both models' answers (1, 0, or None: cannot answer) to an asked item; θ and
        the stopping rule are updated once every item asked together is answered."""
        if position not in self._pending:
            raise CatError(f"item {position} was not asked (or is answered already)")
        for answer in (answer_a, answer_b):
            if answer is not None and answer not in (0, 1):
                raise CatError(f"a response is 1, 0 or None (cannot answer), not {answer!r}")
        self._pending.remove(position)
        if answer_a is None or answer_b is None:
            self.skipped.append(position)
            if self._mixture is not None:
                self._mixture.skip(position)
        else:
            self.given.append(position)
            self.right.append((int(answer_a), int(answer_b)))
            self._paired.append(float(int(answer_a) - int(answer_b)))
            self._given[position] = True
            if self._mixture is not None:
                self._mixture.record(position, int(answer_a), int(answer_b))
        if not self._pending:
            self._update()

    def accuracy(self, model: int) -> ModelAccuracy:
        """Model ``model``'s (0: A, 1: B) predicted accuracy with its interval at the
        settings' level (``cat.comparison.plugin.PlugIn.accuracy``; the mixture's: its
        own sd, widened to its stored errors)."""
        if self._by_mixture:
            return design_accuracy(
                self.terms[model],
                float(self.theta[model]),
                float(self.se[model]),
                len(self.given),
                self.errors,
                self.settings.level,
            )
        return self.plug_in.accuracy(
            float(self.theta[model]),
            float(self.se[model]),
            self._given,
            self._n_right(model),
            self.errors,
            self.settings.level,
        )

    def _policy(self, totals: tuple[float, float]) -> SelectionPolicy:
        base: SelectionPolicy
        if self.settings.selection == "random":
            base = RandomItem()
        else:
            a, b = self._irt_terms
            theta_a, theta_b = (float(t) for t in self.theta)
            base = DifferencePolicy(theta_a, theta_b, a.slope, b.slope, *totals)
        if self.scenario is not None:
            return ContentBalanced(base, self.scenario, pool_shares(self.scenario))
        return base

    def _update(self) -> None:
        n = len(self.given)
        if n:
            items = np.tile(np.asarray(self.given, dtype=np.int_), (2, 1))
            right = np.asarray(self.right, dtype=np.float64).T
            theta, se = self._estimate(items, right, self.theta)
            self.theta, self.se = np.asarray(theta, float), np.asarray(se, float)
        self._irt_terms = self._terms_now()
        self.terms = self._predicted_terms()
        self.difference = self._difference()
        s = self.settings
        # Also when the pool runs out: the looks it will never reach leave their share.
        reached = any(self._looked < k <= n for k in self._looks) or self._used.all()
        look = n >= s.min_length and reached
        self._looked = n
        decided = decide(self.difference, s.margin) if look else None
        if decided is not None:
            self._stop(decided, WITHIN_MARGIN if decided == EQUIVALENT else EXCLUDES_ZERO)
        elif n >= s.max_length:
            self._stop(INCONCLUSIVE, MAX_LENGTH)
        elif self._used.all():
            self._stop(INCONCLUSIVE, POOL_EXHAUSTED)

    def _stop(self, decision: str, reason: str) -> None:
        self.decision, self.stop_reason = decision, reason

    # --- estimates -------------------------------------------------------------------
    def _n_right(self, model: int) -> float:
        return float(sum(pair[model] for pair in self.right))

    def _terms_now(self) -> tuple[Terms, Terms]:
        a, b = (
            self.plug_in.terms(float(self.theta[m]), self._given, self._n_right(m)) for m in (0, 1)
        )
        return a, b

    def _predicted_terms(self) -> tuple[Terms, Terms]:
        """The terms of the predictor the difference is read from."""
        if self._by_mixture and self._mixture is not None:
            return self._mixture.terms()
        return self._irt_terms

    @property
    def disagreements(self) -> tuple[float, float] | None:
        """A's and B's disagreement: how far the prediction in use lies from its
        companion of the same answers (the plug-in's is the mixture, the mixture's the
        plug-in); None before the first answer, or where the pool keeps no reference
        answers."""
        if self._mixture is None or not self.given:
            return None
        mixture = self.terms if self._by_mixture else self._mixture.terms()
        a, b = (abs(self._irt_terms[m].value - mixture[m].value) for m in (0, 1))
        return a, b

    def _totals(self) -> tuple[float, float]:
        """Information about each θ so far: test information at θ̂ plus the N(0, 1)
        prior's precision."""
        if not self.given:
            return 1.0, 1.0
        info = self.pool_info.at(self.theta)[:, self.given].sum(axis=1)
        return 1.0 + float(info[0]), 1.0 + float(info[1])

    def _difference(self) -> Difference:
        n = len(self.given)
        ses = (float(self.se[0]), float(self.se[1]))
        s = self.settings
        return difference(
            self.terms,
            ses,
            (n, n),
            self.errors,
            s.look_level,
            stored_level=s.stored_level,
            disagreements=self.disagreements,
            shared=np.asarray(self._paired),
        )
