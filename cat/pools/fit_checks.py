"""The checks of ``cat pool fit`` that flag items.

Each check adds an ``ItemFlag`` (a reason from ``REASONS`` and a sentence saying why) to
the ``ItemFindings`` of every item it catches; ``cat.pools.fit`` runs them in turn and
``cat.pools.fit_report`` lays out what they found.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

import numpy as np
from pydantic import BaseModel, ConfigDict
from scipy.stats import beta as beta_dist
from scipy.stats import t as t_dist

from cat.errors import CatError
from irt.fit.items import CORRECTIONS, ItemFit, adjust_p_values
from irt.linking.drift import DEFAULT_B_PRIOR, DriftTest, drift_test
from irt.models import ItemParams
from irt.priors import ItemPriors
from irt.responses import ResponseMatrix
from irt.types import FloatArray
from itempool import ItemType, LoadedPool

Reason = Literal[
    "misfit",
    "key_suspect",
    "easier",
    "harder",
    "low_discrimination",
    "c_at_prior_edge",
    "all_right",
    "all_wrong",
]
#: Every reason an item can be flagged, the most telling first.
REASONS: tuple[Reason, ...] = get_args(Reason)
#: A slope below this hardly separates strong from weak subjects.
LOW_SLOPE = 0.2
#: The central share of the c prior inside which c is unremarkable.
PRIOR_CENTRAL = 0.99
#: Fewest subjects in the strongest third for the distractor rule.
MIN_TOP_GROUP = 3

Choices = dict[str, dict[str, str]]  # subject → item → chosen option label


@dataclass(frozen=True)
class FitSettings:
    """How ``check_pool_fit`` tests: recorded in its output."""

    alpha: float = 0.05
    correction: str = "bh"
    replicates: int = 50
    seed: int = 0
    min_responses: int = 10

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise CatError(f"alpha must lie in (0, 1), got {self.alpha}")
        if self.correction not in CORRECTIONS:
            raise CatError(f"unknown correction {self.correction!r}; use {', '.join(CORRECTIONS)}")
        if self.min_responses < 3:
            raise CatError(f"--min-responses must be at least 3, got {self.min_responses}")


class ItemFlag(BaseModel):
    """One reason an item was flagged, and the figures behind it in words."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    reason: Reason
    detail: str


@dataclass
class ItemFindings:
    """The flags the checks have raised on one item so far."""

    flags: list[ItemFlag] = field(default_factory=list)

    def flag(self, reason: Reason, detail: str) -> None:
        self.flags.append(ItemFlag(reason=reason, detail=detail))

    def has(self, reason: Reason) -> bool:
        return any(f.reason == reason for f in self.flags)


def flag_misfit(
    items: list[ItemFindings], fit: ItemFit, p_adjusted: FloatArray, alpha: float
) -> None:
    """``misfit``: the item's adjusted fit p-value below ``alpha``."""
    for j in np.flatnonzero(p_adjusted < alpha):
        items[j].flag(
            "misfit",
            f"right answers do not follow the curve across ability groups (z "
            f"{fit.z[j]:+.1f}, adjusted p {p_adjusted[j]:.2g}; outfit {fit.outfit[j]:.2f})",
        )


def flag_parameters(items: list[ItemFindings], params: ItemParams, priors: ItemPriors) -> None:
    """``low_discrimination`` and ``c_at_prior_edge``: read off the pool's parameters."""
    for j in np.flatnonzero(params.a < LOW_SLOPE):
        word = "negative" if params.a[j] < 0 else "near-zero"
        items[j].flag(
            "low_discrimination",
            f"{word} discrimination a = {params.a[j]:.2f}: it hardly separates strong "
            "from weak subjects",
        )
    if not params.model.has_guessing:
        return
    if priors.has_c and priors.c_alpha is not None and priors.c_beta is not None:
        tail = (1 - PRIOR_CENTRAL) / 2
        lo, hi = beta_dist.ppf([tail, 1 - tail], priors.c_alpha, priors.c_beta)
        source = f"its prior's central {PRIOR_CENTRAL:.0%} ({lo:.2f} … {hi:.2f})"
    else:
        lo, hi = 0.001, 0.5
        source = "its plausible range (0.001 … 0.5; no prior was used)"
    for j in np.flatnonzero((params.c < lo) | (params.c > hi)):
        items[j].flag(
            "c_at_prior_edge",
            f"c = {params.c[j]:.3f} beyond {source}: the curve's floor is not identified",
        )


def flag_extremes(items: list[ItemFindings], right: FloatArray, observed: FloatArray) -> None:
    """``all_right`` / ``all_wrong``: every subject who answered agreed."""
    n = observed.sum(axis=0)
    n_right = (right * observed).sum(axis=0)
    for j in np.flatnonzero((n > 0) & (n_right == n)):
        items[j].flag("all_right", f"all {int(n[j])} subjects who answered got it right")
    for j in np.flatnonzero((n > 0) & (n_right == 0)):
        items[j].flag("all_wrong", f"all {int(n[j])} subjects who answered got it wrong")


def item_theta_correlation(
    right: FloatArray, observed: FloatArray, theta: FloatArray, settings: FitSettings
) -> tuple[FloatArray, FloatArray]:
    """Point-biserial r of each item's answers with θ and the adjusted one-sided p of
    r < 0 (a t-test on n − 2 degrees of freedom)."""
    n = observed.sum(axis=0)
    t = theta[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_t = (observed * t).sum(axis=0) / n
        mean_x = (observed * right).sum(axis=0) / n
        dt, dx = observed * (t - mean_t), observed * (right - mean_x)
        r = (dt * dx).sum(axis=0) / np.sqrt((dt**2).sum(axis=0) * (dx**2).sum(axis=0))
        stat = r * np.sqrt((n - 2) / np.maximum(1 - r**2, 1e-12))
    p = np.where((n >= settings.min_responses) & np.isfinite(r), t_dist.cdf(stat, n - 2), np.nan)
    return r, adjust_p_values(p, settings.correction)


def flag_reversed_key(
    items: list[ItemFindings], r: FloatArray, p_adjusted: FloatArray, alpha: float
) -> None:
    """``key_suspect`` from the item–θ correlation (``item_theta_correlation``), on items
    the distractor rule has not flagged already."""
    for j in np.flatnonzero(p_adjusted < alpha):
        if not items[j].has("key_suspect"):
            items[j].flag(
                "key_suspect",
                f"weaker subjects get it right more often (r = {r[j]:+.2f} with θ, "
                f"adjusted p {p_adjusted[j]:.2g}); check the key",
            )


def flag_distractors(
    items: list[ItemFindings],
    pool: LoadedPool,
    wide: ResponseMatrix,
    theta: FloatArray,
    choices: Choices,
) -> None:
    """``key_suspect`` from the chosen options: per single-answer item, the strongest
    third of the subjects with a recorded choice, a distractor chosen by at least half of
    them and more often than the key."""
    order = np.argsort(-theta)
    for j, item in enumerate(pool.items):
        if item.type is not ItemType.SINGLE or not isinstance(item.answer, str):
            continue
        picked = [
            choices[wide.subject_ids[k]][item.id]
            for k in order
            if item.id in choices.get(wide.subject_ids[k], {})
        ]
        top = picked[: len(picked) // 3]
        if len(top) < MIN_TOP_GROUP:
            continue
        counts: dict[str, int] = {}
        for option in top:
            counts[option] = counts.get(option, 0) + 1
        key_count = counts.pop(item.answer, 0)
        if not counts:
            continue
        option, count = max(counts.items(), key=lambda kv: kv[1])
        if count > key_count and 2 * count >= len(top):
            items[j].flag(
                "key_suspect",
                f"distractor {option} chosen by {count} of the {len(top)} strongest subjects "
                f"(the key {item.answer} by {key_count})",
            )


def flag_drift(
    items: list[ItemFindings],
    priors: ItemPriors,
    params: ItemParams,
    later: ResponseMatrix,
    baseline: ResponseMatrix,
    settings: FitSettings,
) -> DriftTest:
    """``easier`` / ``harder``: b moved between ``baseline`` and ``later`` (``later`` on
    the pool's items, in its order) beyond chance; the test, for the report."""
    prior = DEFAULT_B_PRIOR
    if priors.b_mean is not None and priors.b_sd is not None:
        prior = (priors.b_mean, priors.b_sd)
    test = drift_test(
        baseline.on_items(params.item_ids),
        later,
        params,
        alpha=settings.alpha,
        correction=settings.correction,
        min_responses=settings.min_responses,
        prior=prior,
    )
    for j in np.flatnonzero(test.p_adjusted < settings.alpha):
        easier = bool(test.z[j] < 0)
        note = "; a contamination signal if the later subjects are new models" if easier else ""
        items[j].flag(
            "easier" if easier else "harder",
            f"b {test.b_earlier[j]:+.2f} → {test.b_later[j]:+.2f} (z {test.z[j]:+.1f}, "
            f"adjusted p {test.p_adjusted[j]:.2g}){note}",
        )
    return test
