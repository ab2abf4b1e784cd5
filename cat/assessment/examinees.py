"""Who takes the adaptive test: a simulated examinee, recorded answers, or a live model.

Each answers a batch of pool items with 1 (right), 0 (wrong) or None (cannot answer:
the item is skipped). ``cat assess`` names them ``sim:THETA``, ``replay:FILE#SUBJECT``
and a model name behind an OpenAI-compatible endpoint.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from cat import arguments as check
from cat.arguments import PathArg
from cat.assessment.endpoint import UNPARSED_RUN_LIMIT, EndpointExaminee
from cat.engine.pool_params import calibrated_params
from cat.engine.selection import PoolParams
from cat.errors import CatError
from cat.prediction.shares import expected_share
from irt.mixed import MixedParams, MixedResponses
from irt.polytomous_responses import PolytomousResponses
from irt.responses import ResponseMatrix
from itempool import LoadedPool
from itempool.formats.mixed_responses import read_mixed_responses
from itempool.formats.responses import read_responses, read_scored_responses
from synth.generation import FIELD_OPTIONS
from synth.store import RunStore

__all__ = [
    "UNPARSED_RUN_LIMIT",
    "EndpointExaminee",
    "Examinee",
    "ReplayExaminee",
    "SimulatedExaminee",
    "parse_model_spec",
]


class Examinee(Protocol):
    """Takes the adaptive test: ``start`` binds it to a pool (and the assessment's seed),
    then ``answer`` is called with batches of item ids until the test stops.

    ``cat.assess`` also uses, where an examinee has them: ``example_items()``, the items
    it shows as few-shot examples (never asked), ``generation``, its generation settings
    (recorded in RESULT.json), ``call_keys()`` (its usage across interruptions) and
    ``reply_of(item_id)`` (the raw reply and parsed answer), as ``EndpointExaminee``."""

    @property
    def label(self) -> str:
        """How RESULT.json's ``model`` names it (``sim:0.8``, ``replay:FILE#ID``, a model)."""
        ...

    def start(self, pool: LoadedPool, seed: int) -> None: ...

    def answer(self, item_ids: Sequence[str]) -> list[float | None]:
        """1/0, a score 0..m, or a score in [0, 1] for a continuous item; None: the
        examinee cannot answer it."""
        ...

    def truth(self) -> float | None:
        """Full-pool accuracy where it is known (simulated, replayed), else None."""
        ...

    def usage(self) -> dict[str, int] | None:
        """Calls and tokens of a live model, else None."""
        ...

    def checkpoints(self) -> RunStore | None:
        """Where an interrupted assessment is saved and resumed from, if anywhere."""
        ...

    def close(self) -> None: ...


class _OfflineExaminee:
    """What an examinee that makes no calls and keeps no store answers to the rest."""

    def usage(self) -> None:
        return None

    def checkpoints(self) -> None:
        return None

    def close(self) -> None:
        return None


@dataclass
class SimulatedExaminee(_OfflineExaminee):
    """Answers by the pool's own IRT model at a true ability ``theta``. With ``seed``
    None its answers are drawn from the assessment's seed."""

    theta: float
    seed: int | None = None
    _p: dict[str, float] = field(default_factory=dict, init=False, repr=False)
    _rng: np.random.Generator | None = field(default=None, init=False, repr=False)
    _params: PoolParams | None = field(default=None, init=False, repr=False)
    _position: dict[str, int] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        # Checked here, not at start: a NaN θ would answer every item wrong and report a
        # true accuracy of nan, and a string fails only when the label is formatted.
        self.theta = check.number(self.theta, "theta")
        if self.seed is not None:
            self.seed = check.seed(self.seed)

    @property
    def label(self) -> str:
        return f"sim:{self.theta:g}"

    def start(self, pool: LoadedPool, seed: int) -> None:
        params = calibrated_params(pool)
        self._params = params
        self._position = {item: j for j, item in enumerate(params.item_ids)}
        p = expected_share(params, [self.theta])[0]
        self._p = dict(zip(params.item_ids, p.tolist(), strict=True))
        self._rng = np.random.default_rng([seed, 1] if self.seed is None else self.seed)

    def answer(self, item_ids: Sequence[str]) -> list[float | None]:
        if self._rng is None or self._params is None:
            raise CatError("start the examinee on a pool before asking it")
        if self._params.scored:
            # A score per item drawn from its category probabilities (its density, for
            # a continuous item) at θ.
            items = np.array([self._position[i] for i in item_ids], dtype=np.int_)
            theta = np.full(items.size, self.theta)
            drawn = self._params.draw(theta, items, self._rng)
            continuous = self._params.is_continuous[items].tolist()
            return [
                float(x) if c else int(x) for c, x in zip(continuous, drawn.tolist(), strict=True)
            ]
        return [int(self._rng.random() < self._p[i]) for i in item_ids]

    def truth(self) -> float:
        """Expected accuracy (on scored items, expected share of the top score) on the
        whole pool."""
        return float(np.mean(list(self._p.values())))


@dataclass
class ReplayExaminee(_OfflineExaminee):
    """The recorded answers of one subject of a response matrix (JSONL or wide CSV);
    items it never answered (or that are not in the file) are skipped."""

    path: Path
    subject: str
    _answers: dict[str, float] = field(default_factory=dict, init=False, repr=False)
    _shares: dict[str, float] = field(default_factory=dict, init=False, repr=False)

    # Written out (dataclass keeps it) so that ``path`` may be a str as well as a Path.
    def __init__(self, path: PathArg, subject: str) -> None:
        self.path = check.as_path(path, "path")
        if not isinstance(subject, str) or not subject:
            raise CatError(f"subject must be a subject id (a non-empty str), got {subject!r}")
        self.subject = subject
        self._answers = {}
        self._shares = {}

    @property
    def label(self) -> str:
        return f"replay:{self.path}#{self.subject}"

    def start(self, pool: LoadedPool, seed: int) -> None:
        params = calibrated_params(pool)
        matrix: ResponseMatrix | PolytomousResponses | MixedResponses
        # The response file's layout follows the pool's parameter files.
        if params.family == "mixed":
            matrix = read_mixed_responses(
                self.path, continuous=params.continuous_ids, n_categories=_categories(params)
            )
        elif params.family == "polytomous":
            tops = dict(zip(params.item_ids, params.n_categories.tolist(), strict=True))
            matrix = read_scored_responses(self.path, n_categories=tops)
        else:
            matrix = read_responses(self.path)
        if self.subject not in matrix.subject_ids:
            known = ", ".join(matrix.subject_ids[:5])
            raise CatError(f"{self.path.name}: no subject {self.subject!r} (e.g. {known})")
        row = matrix.subject_ids.index(self.subject)
        column = {item: j for j, item in enumerate(matrix.item_ids)}
        values = matrix.as_float() if isinstance(matrix, MixedResponses) else matrix.values
        top = params.max_scores
        continuous = {i for i, c in zip(params.item_ids, params.is_continuous, strict=True) if c}
        self._answers = {}
        self._shares = {}
        for k, item in enumerate(params.item_ids):
            j = column.get(item)
            if j is not None and matrix.observed[row, j]:
                value = float(values[row, j])
                self._answers[item] = value if item in continuous else int(value)
                self._shares[item] = value / float(top[k])
        if not self._answers:
            raise CatError(f"{self.path.name}: subject {self.subject!r} answered no pool item")

    def answer(self, item_ids: Sequence[str]) -> list[float | None]:
        return [self._answers.get(i) for i in item_ids]

    def truth(self) -> float:
        """Accuracy (on scored items, mean share of the top score) on every pool item the
        subject answered."""
        return float(np.mean(list(self._shares.values())))


def parse_model_spec(spec: str, **endpoint: Any) -> Examinee:
    """The examinee ``cat assess --model`` names: ``sim:THETA``, ``replay:FILE#SUBJECT``,
    or a model name at an endpoint (``endpoint`` holds ``EndpointExaminee``'s settings)."""
    if spec.startswith(("sim:", "replay:")):
        _refuse_live_settings(spec, endpoint)
    if spec.startswith("sim:"):
        try:
            theta = float(spec[4:])
        except ValueError as exc:
            raise CatError(f"sim:THETA needs a number, got {spec!r}") from exc
        if not math.isfinite(theta):  # float() reads "nan" and "inf" too
            raise CatError(f"sim:THETA needs a finite number, got {spec!r}")
        return SimulatedExaminee(theta)
    if spec.startswith("replay:"):
        path, sep, subject = spec[7:].rpartition("#")
        if not sep or not path or not subject:
            raise CatError(f"replay:FILE#SUBJECT needs a file and a subject, got {spec!r}")
        return ReplayExaminee(Path(path), subject)
    if not spec.strip():
        raise CatError("give a model")
    return EndpointExaminee(spec.strip(), **endpoint)


def _refuse_live_settings(spec: str, endpoint: dict[str, Any]) -> None:
    """A judge grades a live model's replies: refuse it for sim: and replay:."""
    if endpoint.get("judge_model") is not None:
        raise CatError(f"--judge-model grades a live model's replies, not {spec.split(':')[0]}:")


def refuse_unused_live_settings(specs: Sequence[str], endpoint: dict[str, Any]) -> None:
    """Refuse the settings of how a live model is asked (generation settings, ``style``,
    ``protocol_form``) where every model of the run is ``sim:`` or ``replay:``: none
    would follow them (beside a live model they are that model's)."""
    if any(not spec.startswith(("sim:", "replay:")) for spec in specs):
        return
    generation = endpoint.get("generation")
    given = [
        option
        for field, option in FIELD_OPTIONS.items()
        if generation is not None and field in generation.model_fields_set
    ]
    given += [
        f"--{name.replace('_', '-')}" for name in ("style", "protocol_form") if name in endpoint
    ]
    if given:
        kinds = " and ".join(sorted({spec.split(":")[0] + ":" for spec in specs}))
        raise CatError(
            f"{', '.join(given)} set how a live model is asked; {kinds} makes no call "
            "(leave them out, or name a model at --base-url)"
        )


def _categories(params: MixedParams) -> dict[str, int]:
    """Each discrete item's number of scores."""
    if params.discrete is None:
        return {}
    counts = params.discrete.n_categories.tolist()
    return dict(zip(params.discrete.item_ids, counts, strict=True))
