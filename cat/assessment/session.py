"""One examinee's adaptive test as an object: ask, record, re-estimate, stop; saved to
JSON and resumed exactly (same seed, same next item)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from cat.designs.models import ReferenceModels
from cat.designs.session_state import ReferenceDesign
from cat.engine.audit import Audited
from cat.engine.constraints import ContentBalanced, MaxExposure, pool_shares
from cat.engine.estimators import AbilityEstimator
from cat.engine.graded_estimators import GradedEstimator
from cat.engine.names import AUDIT_EVERY
from cat.engine.registry import (
    DEFAULT_CONTENT_BALANCING,
    DEFAULT_ESTIMATOR,
    DEFAULT_POLICY,
    MULTIDIMENSIONAL_DESIGNS,
    CriterionName,
    DesignName,
    EstimatorName,
    PolicyName,
    make_any_estimator,
    make_policy,
)
from cat.engine.selection import (
    PoolInfo,
    PoolParams,
    SelectionPolicy,
    SelectionState,
    is_scored,
)
from cat.engine.simulation import estimation
from cat.engine.stopping import StoppingRule
from cat.errors import CatError

SESSION_FORMAT = 1


class SessionConfig(BaseModel):
    """Every setting of a session; with the seed it fixes the sequence of items."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # "irt": items by ``policy`` at θ̂ and the IRT plug-in; "mixture"/"low-rank": items and
    # prediction by that reference design (cat.designs), θ̂ kept for the rank only.
    design: DesignName = DesignName.IRT
    # How a multidimensional design (bifactor, mirt) picks items; None: its default.
    criterion: CriterionName | None = None
    policy: PolicyName = DEFAULT_POLICY
    randomesque_k: int = Field(5, ge=1)
    n_strata: int = Field(4, ge=1)
    estimator: EstimatorName = DEFAULT_ESTIMATOR
    max_items: int = Field(250, ge=1)
    se_target: float | None = Field(None, gt=0)
    min_items: int = Field(0, ge=0)
    # As ``cat.assess`` (the registry's default): keep the pool's mix of scenarios where
    # the session is given each item's scenario; without them there is nothing to balance.
    content_balancing: bool = DEFAULT_CONTENT_BALANCING
    # "pool": each scenario's share of the pool's items; "equal": the same for every one
    content_targets: Literal["pool", "equal"] = "pool"
    max_exposure: float | None = Field(None, gt=0, le=1)
    start_theta: float = 0.0
    seed: int = 0
    # Items the test never asks: the few-shot examples shown with every question
    # (``synth.few_shot``), whose answers are in the prompt. They still count in the
    # predicted accuracy on the whole pool.
    excluded_items: tuple[str, ...] = ()
    # Every how many items one is an audit item, chosen away from the current estimate
    # (cat.engine.audit) so that answers which ignore difficulty show; None: none.
    audit_every: int | None = Field(AUDIT_EVERY, ge=2)

    @model_validator(mode="after")
    def _criterion_of_a_multidimensional_design(self) -> SessionConfig:
        if self.criterion is not None and self.design.value not in MULTIDIMENSIONAL_DESIGNS:
            raise ValueError(
                f"a selection criterion is for the {' and '.join(MULTIDIMENSIONAL_DESIGNS)} "
                f"designs, not {self.design.value}"
            )
        return self

    @model_validator(mode="after")
    def _min_within_max(self) -> SessionConfig:
        # A minimum above the maximum would be cut silently to the maximum: say so instead.
        if self.min_items > self.max_items:
            raise ValueError(
                f"the minimum length ({self.min_items}) is above the maximum ({self.max_items})"
            )
        return self

    def policy_for(self, scenario: tuple[int, ...] | None) -> SelectionPolicy:
        """The selection policy, content-balanced when ``content_balancing`` is on and
        each item's ``scenario`` is known (as the registry's ``default_selection``)."""
        base = make_policy(self.policy, self.max_items, self.randomesque_k, self.n_strata)
        if self.content_balancing and scenario:
            shares = pool_shares(scenario) if self.content_targets == "pool" else ()
            base = ContentBalanced(base, scenario, shares)
        if self.max_exposure is not None:
            base = MaxExposure(base, self.max_exposure)
        if self.audit_every:
            base = Audited(base, self.audit_every)
        return base

    def estimator_for(self, scored: bool = False) -> AbilityEstimator | GradedEstimator:
        """The estimator, for a pool of scored items when ``scored``."""
        return make_any_estimator(self.estimator, scored)

    def stopping(self) -> StoppingRule:
        return StoppingRule(self.max_items, self.se_target, self.min_items)


#: The test so far: what a session records as it goes, and saves and restores as it is.
_PROGRESS = ("given", "responses", "skipped", "theta_history", "se_history", "stop_reason")


class SavedSession(BaseModel):
    """The JSON form of a session."""

    model_config = ConfigDict(extra="forbid")

    format: int = SESSION_FORMAT
    config: SessionConfig
    pool_items: int
    given: list[str]
    # Whole numbers, but for the continuous items of a mixed pool (ints stay ints).
    responses: list[int | float]
    skipped: list[str]
    theta_history: list[float]
    se_history: list[float]
    stop_reason: str | None
    rng_state: dict[str, Any]
    # Per item given, its chance of a right answer when it was chosen (NaN where none:
    # a scored item); absent from sessions saved before it was kept.
    chances: list[float | None] | None = None


@dataclass
class AssessmentSession:
    """The adaptive test of one examinee on a calibrated pool.

    Ask with ``next_items(k)``, answer with ``record(item_id, response)`` (1 right,
    0 wrong — on a pool of scored items the score 0..m —, None: the examinee cannot
    answer it: it is skipped, never asked again),
    read ``theta``/``se`` after each answer, stop when ``done``. ``to_json`` /
    ``from_json`` round-trip exactly: a resumed session asks the same next item.
    """

    params: PoolParams
    config: SessionConfig = field(default_factory=SessionConfig)
    scenario: tuple[int, ...] | None = None
    pool_info: PoolInfo | None = None  # the pool's information table, if built already
    # The references' models, which a reference design (config.design) chooses items by.
    reference_models: ReferenceModels | None = None
    # Item id -> the ids of its copies in the pool (``itempool.duplicates.twins``): once
    # one copy is asked, the others are not (the pool's builder may have kept both).
    twins: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.scenario is not None and len(self.scenario) != self.params.n_items:
            raise CatError("one scenario code per pool item is needed")
        self.design: ReferenceDesign | None = None
        self.scored = is_scored(self.params)
        if self.scored and self.config.design is not DesignName.IRT:
            raise CatError(
                f"the {self.config.design.value} design is for pools of 0/1 items; "
                "a pool of scored items runs the irt design"
            )
        if self.config.design is not DesignName.IRT:
            if self.reference_models is None:
                raise CatError(
                    f"the {self.config.design.value} design needs the references' answers "
                    "(a pool written by cat calibrate --pool keeps them)"
                )
            models = self.reference_models
            if self.config.criterion is not None:
                models = replace(models, criterion=self.config.criterion)
            self.design = ReferenceDesign(
                self.config.design,
                models,
                self.params.n_items,
                self.config.max_items,
            )
        self._index = {item: j for j, item in enumerate(self.params.item_ids)}
        # Copies among the calibrated items only (a pool's questions file may hold more).
        self.twins = {
            item: tuple(t for t in copies if t in self._index)
            for item, copies in self.twins.items()
            if item in self._index
        }
        unknown = [i for i in self.config.excluded_items if i not in self._index]
        if unknown:
            raise CatError(f"an excluded item is not in the pool (e.g. {unknown[0]!r})")
        if self.design is not None:
            self.design.block([self._index[i] for i in self.config.excluded_items])
        self._continuous_ids = frozenset(
            item
            for item, continuous in zip(
                self.params.item_ids, self.params.is_continuous.tolist(), strict=True
            )
            if continuous
        )
        self._policy = self.config.policy_for(self.scenario)
        self._estimator = self.config.estimator_for(self.scored)
        self._stopping = self.config.stopping()
        self._rng = np.random.default_rng(self.config.seed)
        self.given: list[str] = []
        self.responses: list[float] = []
        self.skipped: list[str] = []
        self.theta_history: list[float] = []
        self.se_history: list[float] = []
        self.stop_reason: str | None = None
        # Per item given, the chance of a right answer the design gave it when it chose
        # it, before the answer (cat.designs.flatness.slope_z reads them).
        self.chances: list[float] = []
        self._pending: list[str] = []
        self._pending_chances: dict[str, float] = {}

    # --- state -----------------------------------------------------------------------
    @property
    def theta(self) -> float:
        return self.theta_history[-1] if self.theta_history else self.config.start_theta

    @property
    def se(self) -> float:
        return self.se_history[-1] if self.se_history else float("inf")

    @property
    def done(self) -> bool:
        return self.stop_reason is not None

    def _available(self) -> np.ndarray:
        available = np.ones(self.params.n_items, dtype=bool)
        for item in (*self.given, *self.skipped, *self._pending, *self.config.excluded_items):
            available[self._index[item]] = False
        for item in self._twins_of((*self.given, *self.skipped, *self._pending)):
            available[self._index[item]] = False
        return available

    def _twins_of(self, items: Iterable[str]) -> list[str]:
        """The pool's other copies of ``items`` (``twins``)."""
        return [twin for item in items for twin in self.twins.get(item, ())]

    def _one_copy_each(self, positions: list[int]) -> list[int]:
        """``positions`` without a later copy of an item chosen before it."""
        kept: list[int] = []
        taken: set[str] = set()
        for j in positions:
            item = self.params.item_ids[j]
            if item not in taken:
                kept.append(j)
                taken.update(self.twins.get(item, ()))
        return kept

    # --- the test --------------------------------------------------------------------
    def next_items(self, k: int = 1) -> list[str]:
        """The next ``k`` items to ask (fewer if the test or the pool ends first)."""
        if self.done:
            return []
        if k < 1:
            raise CatError(f"ask for at least one item, not {k}")
        if self._pending:
            return list(self._pending)
        room = self.config.max_items - len(self.given)
        if self.design is not None:
            asked = self._twins_of((*self.given, *self.skipped))
            if asked:
                self.design.block([self._index[i] for i in asked])
            positions = self.design.select(min(k, room), len(self.given), self.config.audit_every)
            positions = self._one_copy_each(positions)
            self._pending = [self.params.item_ids[j] for j in positions]
            if positions:
                chances = self.design.test.answer_chances()[0]
                self._pending_chances = {
                    self.params.item_ids[j]: float(chances[j]) for j in positions
                }
            if not self._pending:
                self.stop_reason = "pool_exhausted"
            return list(self._pending)
        available = self._available()
        given = np.zeros(self.params.n_items, dtype=bool)
        given[[self._index[i] for i in self.given]] = True
        chosen: list[str] = []
        for _ in range(min(k, room, int(available.sum()))):
            state = SelectionState(
                theta=np.array([self.theta]), available=available[None, :], given=given[None, :]
            )
            j = int(self._policy.select(self._info(), state, self._rng)[0])
            available[j] = False
            given[j] = True
            for twin in self._twins_of([self.params.item_ids[j]]):
                available[self._index[twin]] = False
            chosen.append(self.params.item_ids[j])
        self._pending = chosen
        self._pending_chances = dict(zip(chosen, self._chances_at_theta(chosen), strict=True))
        if not chosen:
            self.stop_reason = "pool_exhausted"
        return list(chosen)

    def record(self, item_id: str, response: float | None) -> None:
        """Record the answer to an asked item; θ is re-estimated once every item asked
        together has its answer."""
        if item_id not in self._pending:
            raise CatError(f"item {item_id!r} was not asked (or is answered already)")
        self._check_response(item_id, response)
        self._pending.remove(item_id)
        if response is None:
            self.skipped.append(item_id)
        else:
            self.given.append(item_id)
            self.responses.append(float(response) if self._continuous(item_id) else int(response))
            self.chances.append(self._pending_chances.get(item_id, float("nan")))
        self._to_design(item_id, response)
        if not self._pending:
            if self.design is not None:
                self.design.refit()
            self._update()

    def _chances_at_theta(self, items: list[str]) -> list[float]:
        """Each of ``items``' chance of a right answer at the current θ̂ (NaN on a pool
        of scored items)."""
        if self.scored or not items:
            return [float("nan")] * len(items)
        positions = [self._index[i] for i in items]
        chances = self.params.expected_score(np.array([self.theta]))[0, positions]
        return [float(c) for c in chances]

    def _continuous(self, item_id: str) -> bool:
        return item_id in self._continuous_ids

    def _check_response(self, item_id: str, response: float | None) -> None:
        if response is None:
            return
        if not self.scored:
            if response not in (0, 1):
                raise CatError(f"a response is 1, 0 or None (cannot answer), not {response!r}")
            return
        if self._continuous(item_id):
            if isinstance(response, bool) or not (
                isinstance(response, int | float | np.integer | np.floating) and 0 <= response <= 1
            ):
                raise CatError(f"item {item_id!r} takes a score in [0, 1], not {response!r}")
            return
        top = int(self.params.max_scores[self._index[item_id]])
        if isinstance(response, bool) or not isinstance(response, int | np.integer):
            raise CatError(f"a score is a whole number 0..{top} or None, not {response!r}")
        if not 0 <= response <= top:
            raise CatError(f"item {item_id!r} allows scores 0..{top}, got {response}")

    def _info(self) -> PoolInfo:
        # Built on the first IRT selection only: a reference design never needs the
        # (grid x items) table, which on 34,000 items takes seconds and ~160 MB.
        if self.pool_info is None:
            self.pool_info = PoolInfo.build(self.params)
        return self.pool_info

    def _to_design(self, item_id: str, response: float | None) -> None:
        if self.design is not None:
            if response is None:
                self.design.skip(self._index[item_id])
            else:
                self.design.record(self._index[item_id], int(response))

    def _update(self) -> None:
        if self.given:
            items = np.array([[self._index[i] for i in self.given]])
            estimate = estimation(self.params, self._info(), self._estimator)
            theta, se = estimate(items, np.array([self.responses], float), np.array([self.theta]))
            self.theta_history.append(float(theta[0]))
            self.se_history.append(float(se[0]))
        left = float(self._available().sum())
        why = self._stopping.reasons(
            np.array([float(len(self.given))]), np.array([self.se]), np.array([left])
        )[0]
        self.stop_reason = None if why is None else str(why)

    # --- persistence -----------------------------------------------------------------
    def to_json(self) -> str:
        if self._pending:
            raise CatError("answer the items already asked before saving the session")
        saved = SavedSession(
            config=self.config,
            pool_items=self.params.n_items,
            rng_state=self._rng.bit_generator.state,
            **{name: getattr(self, name) for name in _PROGRESS},
            # NaN (a scored item's) as null: JSON has no NaN.
            chances=[c if np.isfinite(c) else None for c in self.chances],
        )
        return saved.model_dump_json(indent=1)

    @classmethod
    def from_json(
        cls,
        text: str,
        params: PoolParams,
        scenario: tuple[int, ...] | None = None,
        pool_info: PoolInfo | None = None,
        reference_models: ReferenceModels | None = None,
        twins: Mapping[str, tuple[str, ...]] | None = None,
    ) -> AssessmentSession:
        try:
            raw = json.loads(text)
            config = raw.get("config") if isinstance(raw, dict) else None
            if isinstance(config, dict) and "audit_every" not in config:
                config["audit_every"] = None  # saved before audits: it goes on without
            saved = SavedSession.model_validate(raw)
        except (json.JSONDecodeError, ValidationError) as exc:
            raise CatError(f"not a saved session: {str(exc).splitlines()[0]}") from exc
        if saved.pool_items != params.n_items:
            raise CatError(
                f"the session was saved on a pool of {saved.pool_items} items, not {params.n_items}"
            )
        unknown = [i for i in (*saved.given, *saved.skipped) if i not in set(params.item_ids)]
        if unknown:
            raise CatError(f"the session's items are not in this pool (e.g. {unknown[0]!r})")
        session = cls(
            params=params,
            config=saved.config,
            scenario=scenario,
            pool_info=pool_info,
            reference_models=reference_models,
            twins=twins or {},
        )
        for name, value in saved.model_dump(include=set(_PROGRESS)).items():
            setattr(session, name, value)  # fresh lists: the session's own
        session.chances = (
            [float("nan") if c is None else c for c in saved.chances]
            if saved.chances is not None
            else [float("nan")] * len(saved.given)  # saved before the chances were kept
        )
        if session.design is not None:  # its state follows from the answers, in order
            for item in session.skipped:
                session._to_design(item, None)
            for item, response in zip(session.given, session.responses, strict=True):
                session._to_design(item, response)
                session.design.refit()
        session._rng.bit_generator.state = saved.rng_state
        return session
