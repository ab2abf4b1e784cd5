"""Rows of ``cat validate`` and the verdict per length: does the default beat the best
random row (random items scored by any predictor, or random-raw) on τ and on MAE?"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from cat.engine.registry import DEFAULT
from cat.prediction.replay import CHOSEN, RANDOM_RAW, is_random

Outcome = Literal["better", "tied", "worse", "n/a"]


class ValidationRow(BaseModel):
    """The figures of one policy, predictor and test length over the held-out subjects,
    each averaged over the repeats (``Predictions.metrics``)."""

    model_config = ConfigDict(extra="forbid")

    policy: str = Field(description='A policy name, or "random-raw" (the baseline).')
    length: int
    predictor: str = Field(
        description='"plug-in", "ridge", "mixture", "low-rank", "chosen" (the one of '
        'smallest cross-fitted error; for the default, the design), or "raw".'
    )
    n_subjects: int
    repeats: int = Field(1, description="Draws of a random row (--repeats), else 1.")
    splits: int = Field(
        1,
        description="Random draws of the training subjects behind the row (--splits): "
        "with more than one, each figure is the mean over the draws and each _sd key "
        "the sd over them.",
    )
    kendall_tau: float | None = Field(
        description="None where no repeat defines it (null_reasons says why)."
    )
    kendall_tau_sd: float | None = Field(
        None, description="Its sd over the repeats (over the draws, with splits > 1)."
    )
    spearman: float | None = Field(description="None where no repeat defines it.")
    mae: float
    mae_sd: float | None = Field(
        None, description="Its sd over the repeats (over the draws, with splits > 1)."
    )
    rmse: float
    coverage: float = Field(
        description="Share of subjects whose 90% interval (training subjects' errors "
        "only) holds the truth."
    )
    coverage_sd: float | None = Field(
        None, description="Its sd over the repeats (over the draws, with splits > 1)."
    )
    mean_interval_width: float
    coverage_theta_only: float | None = Field(
        None, description="Plug-in rows: the coverage of the theta-only interval."
    )
    mean_interval_width_theta_only: float | None = None
    scenario_coverage: list[float | None] | None = Field(
        None,
        description="Rows that predict per scenario (the designs and the default), in "
        "the order of settings.scenarios: the share of held-out subjects whose scenario "
        "accuracy lies within prediction ± the half-width of the training subjects' "
        "cross-fitted errors on that scenario (cat assess's interval is at least as wide).",
    )
    scenario_coverage_mean: float | None = None
    scenario_coverage_min: float | None = None
    scenario_mae: list[float | None] | None = Field(
        None, description="Per scenario, the MAE of the predicted scenario accuracy."
    )
    scenario_mae_mean: float | None = None
    null_reasons: dict[str, str] | None = Field(
        None,
        description="Why a figure is null, by its key (kendall_tau, spearman): e.g. fewer "
        "than 3 held-out subjects, or all of them equally accurate.",
    )


class Verdict(BaseModel):
    """At one length: the default's τ and MAE against the best random row's."""

    model_config = ConfigDict(extra="forbid")

    length: int
    policy: str = Field(
        DEFAULT,
        description='The row compared, whose figures are the default_* keys: "default" '
        "(what cat assess runs), or another policy a caller asked about.",
    )
    default_kendall_tau: float | None = Field(description="None where not defined.")
    best_random_kendall_tau: float | None
    best_random_kendall_tau_row: str = Field(description='"policy/predictor" or "random-raw".')
    kendall_tau: Outcome = Field(description="The default's τ against the best random τ.")
    default_mae: float
    best_random_mae: float
    best_random_mae_row: str
    mae: Outcome = Field(description="The default's MAE against the best random MAE.")
    beats_random: bool = Field(description="Better on both τ and MAE.")

    def line(self) -> str:
        """One line, e.g. "250 items: default τ .935 vs best random .923 (random/plug-in):
        better; MAE .0153 vs .0148 (random/plug-in): worse"."""
        return (
            f"{self.length} items: {self.policy} τ {_short(self.default_kendall_tau, 3)} vs best "
            f"random {_short(self.best_random_kendall_tau, 3)} "
            f"({self.best_random_kendall_tau_row}): {self.kendall_tau}; "
            f"MAE {_short(self.default_mae, 4)} vs {_short(self.best_random_mae, 4)} "
            f"({self.best_random_mae_row}): {self.mae}"
        )


def _short(x: float | None, digits: int) -> str:
    """``x`` without the leading zero (".935", "-.120"); "n/a" for None."""
    if x is None:
        return "n/a"
    text = f"{x:.{digits}f}"
    return text.replace("0.", ".", 1) if abs(x) < 1 else text


def _name(row: ValidationRow) -> str:
    return RANDOM_RAW if row.policy == RANDOM_RAW else f"{row.policy}/{row.predictor}"


def _outcome(ours: float | None, theirs: float | None, higher_is_better: bool) -> Outcome:
    if ours is None or theirs is None or math.isnan(ours) or math.isnan(theirs):
        return "n/a"
    if ours == theirs:
        return "tied"
    return "better" if (ours > theirs) == higher_is_better else "worse"


def verdicts(
    rows: list[ValidationRow], policy: str = DEFAULT, predictor: str = CHOSEN
) -> list[Verdict]:
    """Per length with a ``policy``/``predictor`` row (by default the default's: what
    ``cat assess`` runs): it against the best random row on τ (highest mean) and on MAE
    (lowest mean), over random items with every predictor and random-raw."""
    out = []
    for length in sorted({r.length for r in rows}):
        here = [r for r in rows if r.length == length]
        random = [r for r in here if r.policy == RANDOM_RAW or is_random(r.policy)]
        ours = [r for r in here if r.policy == policy and r.predictor == predictor]
        if ours and random:
            out.append(_verdict(length, ours[0], random))
    return out


def _verdict(length: int, ours: ValidationRow, random: list[ValidationRow]) -> Verdict:
    with_tau = [r for r in random if r.kendall_tau is not None] or random
    by_tau = max(with_tau, key=lambda r: -math.inf if r.kendall_tau is None else r.kendall_tau)
    by_mae = min(random, key=lambda r: r.mae)
    tau = _outcome(ours.kendall_tau, by_tau.kendall_tau, higher_is_better=True)
    mae = _outcome(ours.mae, by_mae.mae, higher_is_better=False)
    return Verdict(
        length=length,
        policy=ours.policy,
        default_kendall_tau=ours.kendall_tau,
        best_random_kendall_tau=by_tau.kendall_tau,
        best_random_kendall_tau_row=_name(by_tau),
        kendall_tau=tau,
        default_mae=ours.mae,
        best_random_mae=by_mae.mae,
        best_random_mae_row=_name(by_mae),
        mae=mae,
        beats_random=tau == "better" and mae == "better",
    )
