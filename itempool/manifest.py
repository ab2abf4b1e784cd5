"""``pool.json`` (the manifest) and the rows of ``reference.jsonl``, as pydantic models."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from irt.models import ModelKind
from itempool.languages import LanguageCode
from itempool.low_rank_file import LowRankPrior
from itempool.mirt_file import MultidimensionalEntry
from itempool.prediction_errors import PredictionErrors
from itempool.protocol import PoolProtocol


class PoolSource(BaseModel):
    """One origin of a pool's contents (``pool.json``'s ``sources``): what was taken
    (``what``: "questions", "per-question results of 32 models"), where from (``url``)
    and under which licence (``license``, an SPDX id such as "MIT")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    what: str = Field(min_length=1)
    url: str = Field(min_length=1)
    license: str = Field(min_length=1)


class PoolManifest(BaseModel):
    """``pool.json``. Unknown keys are kept (a pool may carry its own notes); the items,
    by contrast, are strict."""

    model_config = ConfigDict(extra="allow", frozen=True)

    name: str = Field(min_length=1)
    language: LanguageCode
    version: str | None = None
    description: str | None = None
    scenarios: tuple[str, ...] = ()
    model: ModelKind | None = None
    calibration: dict[str, Any] | None = None
    generator: Any = None
    seed: int | None = None
    note: str | None = None
    source: str | None = None
    imported: str | None = None
    # The pool's licence as a whole (an SPDX expression: "MIT AND Apache-2.0"), and each
    # part's origin and licence: a pool built from third-party data says both.
    license: str | None = None
    sources: tuple[PoolSource, ...] = ()
    prediction_errors: PredictionErrors | None = None
    # Per design (irt, mixture, low-rank): the references' cross-fitted errors, by which
    # cat assess chooses its design and sizes its interval.
    design_errors: dict[str, PredictionErrors] | None = None
    # The references' low-rank model's K, penalty and prior (its items: low_rank.csv).
    low_rank: LowRankPrior | None = None
    # The multidimensional model of mirt_params.csv (cat calibrate --model bifactor|mirt).
    multidimensional: MultidimensionalEntry | None = None
    # How the references were asked and graded (itempool.protocol); None: the built-in way.
    protocol: PoolProtocol | None = None

    @field_validator("language", mode="before")
    @classmethod
    def _lower_language(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, value: object) -> object:
        # "version": 1 is as clear as "version": "1".
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("scenarios", mode="before")
    @classmethod
    def _scenario_ids(cls, value: object) -> object:
        # Scenarios may be plain ids or objects describing them; only the ids matter here.
        if not isinstance(value, list | tuple):
            return value
        ids: list[object] = []
        for entry in value:
            if isinstance(entry, dict):
                if "id" not in entry:
                    raise ValueError(f"a scenario object needs an 'id': {entry}")
                ids.append(entry["id"])
            else:
                ids.append(entry)
        if len({str(i) for i in ids}) != len(ids):
            raise ValueError("scenario ids repeat")
        return ids


class ReferenceRow(BaseModel):
    """One calibration subject in ``reference.jsonl``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    subject_id: str = Field(min_length=1)
    theta: float
    se: float
    accuracy: float | None = Field(default=None, ge=0.0, le=1.0)
    n_answered: int = Field(ge=0)
