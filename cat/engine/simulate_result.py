"""The result of ``cat.engine.simulate_job.simulate``: what ``cat simulate`` writes.

``SimulationResult.model_dump(mode="json")`` is the SIM.json file, key for key; scripts
read it, so keys are only ever added, never renamed or removed.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from cat.engine.registry import EstimatorName, PolicyName


class SimulationSummary(BaseModel):
    """How well the simulated tests recovered the true abilities, and what they cost."""

    model_config = ConfigDict(extra="forbid")

    bias: float = Field(description="Mean of θ̂ − θ.")
    rmse: float = Field(description="Root mean squared error of θ̂.")
    kendall_tau: float | None = Field(
        description="Rank agreement of θ̂ with θ (None for one examinee: nothing to rank)."
    )
    seconds: float = Field(
        description="The engine's time for the reported simulation only: not reading the "
        "pool, not the Sympson-Hetter calibration rounds (see wall_seconds)."
    )
    seconds_per_examinee: float = Field(description="seconds / number of examinees.")
    max_exposure: float = Field(description="Largest share of examinees given one item.")
    mean_length: float = Field(description="Mean number of items given.")
    mean_se: float = Field(description="Mean standard error of θ̂ at the end of the test.")
    wall_seconds: float = Field(
        description="Wall time of the whole run, Sympson-Hetter calibration included."
    )
    # Defaults: files written before these keys still read back.
    effective_length: int | None = Field(
        default=None,
        description="The longest test the pool allows: settings.length, or the pool's "
        "size when that is smaller (the tests cannot go on past it).",
    )
    pool_exhausted: int = Field(
        default=0,
        description="Examinees whose test stopped because no item was left to give (the "
        "pool ran out, or exposure control held back the rest) before settings.length.",
    )


class ExposureControl(BaseModel):
    """Sympson-Hetter exposure control and how its parameters were set."""

    model_config = ConfigDict(extra="forbid")

    method: Literal["sympson-hetter"] = "sympson-hetter"
    max_rate: float = Field(description="The target largest exposure rate.")
    n_controlled: int = Field(description="Items whose control parameter K is below 1.")
    min_k: float = Field(description="The smallest K.")
    calibration_max_rate: float = Field(
        description="Largest exposure rate in the last calibration round."
    )
    calibration_examinees_per_round: int


class SimulationSettings(BaseModel):
    """Every setting of the run, the seed included, so that it can be repeated."""

    model_config = ConfigDict(extra="forbid")

    params: str | None = Field(description="The params file, or None for parameters in memory.")
    continuous_params: str | None = Field(
        default=None,
        description="A mixed pool's second params file, of its continuous items (scores "
        "in [0, 1]).",
    )
    n_pool: int
    examinees: int
    length: int
    policy: PolicyName
    estimator: EstimatorName
    seed: int
    se_target: float | None
    batch_size: int
    max_exposure: float | None
    exposure_control: ExposureControl | None
    min_length: int
    randomesque_k: int | None = Field(description="Set for the randomesque policy only.")
    item_types: dict[str, int] | None = Field(
        default=None,
        description="A pool of scored items: how many items of each type (graded, gpcm, "
        "sequential, 2PL, 3PL); None for a pool of 0/1 items.",
    )
    package_version: str


class SimulatedExaminee(BaseModel):
    """One simulated examinee's test."""

    model_config = ConfigDict(extra="forbid")

    theta_true: float
    theta_hat: float
    se: float
    items: list[str] = Field(description="Item ids in the order given.")
    n_items: int
    stop_reason: str = Field(description="max_length, se_target or pool_exhausted.")


class SimulationResult(BaseModel):
    """Simulated adaptive tests on a pool: the summary, the settings, every examinee."""

    model_config = ConfigDict(extra="forbid")

    summary: SimulationSummary
    settings: SimulationSettings
    created: str = Field(description="UTC time of the run, ISO 8601.")
    examinees: list[SimulatedExaminee]
