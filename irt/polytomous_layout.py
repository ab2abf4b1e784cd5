"""How the polytomous EM sees a pool: items grouped by type and number of categories,
distinct response patterns as 0/1 indicator rows, and the maps between an item group's
natural parameters (a, d, c) and the coordinates that the M-step and the standard errors
work in.

Items of one type and one number of categories share the shape of every array, so each
computation is vectorised over such a group (``Group``); ``Layout`` lists the groups
and where each item's (item, score) pairs sit among the columns of the pattern
indicators (``Patterns``).

The internal coordinates ψ of the M-step hold the models' constraints by construction:
the slope, a = e^α under a log-normal slope prior, then the item family's own
coordinates (``irt.families.base.ItemFamily.to_internal``: graded thresholds as
log-gaps, so they stay ordered; c = σ(γ) in the 3PL; a nominal item's free scoring
values). Each coordinate is also clipped to a wide box so that an unidentified item
cannot run off to infinity. The reported coordinates ρ = (a, d_1..d_m, logit c,
ak_free), flattened over the groups in layout order, are those in which EM's
convergence is judged and standard errors are given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from irt.errors import IRTError
from irt.estimation.arrays import clip, concat, copy, namespace, zeros
from irt.families.base import ItemValues
from irt.families.coordinates import LOG_SLOPE_BOUNDS, RAW_SLOPE_BOUND, sigmoid
from irt.item_groups import GroupLayout, ItemGroup
from irt.polytomous import ItemType, PolytomousParams, curves
from irt.polytomous_responses import MISSING, PolytomousResponses
from irt.types import FloatArray, IntArray

__all__ = [
    "Group",
    "Layout",
    "Natural",
    "Patterns",
    "check_match",
    "clip_internal",
    "from_reported",
    "natural_derivatives",
    "natural_jacobian",
    "naturals_of",
    "to_internal",
    "to_natural",
    "to_reported",
]

#: An item group's (a (J_g,), d (J_g, m), c (J_g,), ak (J_g, m) or None): the
#: scoring values ak_1..ak_m of gpcm and nominal items.
Natural = tuple[FloatArray, FloatArray, FloatArray, FloatArray | None]


@dataclass(frozen=True)
class Group(ItemGroup[ItemType]):
    """Items of one type with ``n_cat`` categories: their positions in the pool and the
    columns (J_g, K) of their (item, score) pairs in the pattern indicators."""

    @property
    def width(self) -> int:
        """Coordinates per item: the slope, then the family's (thresholds, logit c for
        the 3PL, free scoring values of a nominal item)."""
        return 1 + self.kind.family.width(self.m)


class Layout(GroupLayout[Group]):
    """The groups (``Group``) of a pool on one θ."""

    group_type = Group


@dataclass(frozen=True)
class Patterns:
    """Distinct response patterns: their scores ``rows`` (P, J) (``MISSING`` where not
    answered), how many subjects gave each (``counts``, P), each subject's pattern
    (``inverse``, N), and where each item's (item, score) pairs start among the
    ``n_columns`` pairs (``offsets``, J)."""

    rows: IntArray
    counts: FloatArray
    inverse: IntArray
    offsets: IntArray
    n_columns: int

    @classmethod
    def of(cls, values: np.ndarray, layout: GroupLayout[Any]) -> Patterns:
        """From subjects' scores (MISSING = −1) and the layout (one θ or factors) whose
        offsets place each (item, score) pair."""
        rows, inverse, counts = np.unique(values, axis=0, return_inverse=True, return_counts=True)
        return cls(
            rows,
            np.asarray(counts, dtype=np.float64),
            np.asarray(inverse).ravel(),
            np.asarray(layout.offsets),
            int(layout.n_columns),
        )

    @cached_property
    def onehot(self) -> FloatArray:
        """The patterns as 0/1 indicators over (item, score) pairs, (P, C); built on
        first use, since a large pool's would not fit in memory
        (``irt.polytomous_products`` works through it in blocks instead)."""
        onehot = np.zeros((self.rows.shape[0], self.n_columns))
        r, j = np.nonzero(self.rows != MISSING)
        onehot[r, self.offsets[j] + self.rows[r, j]] = 1.0
        return onehot


def check_match(responses: PolytomousResponses, params: PolytomousParams) -> None:
    """Raise unless ``params`` covers the items of ``responses`` in order, each with room
    for every score observed."""
    if tuple(responses.item_ids) != tuple(params.item_ids):
        raise IRTError("the responses and the parameters must list the same items in order")
    top = responses.values.max(axis=0)
    over = np.flatnonzero(top > params.max_scores)
    if over.size:
        j = int(over[0])
        raise IRTError(
            f"item {params.item_ids[j]!r} has a score of {int(top[j])} in the responses but "
            f"its parameters allow 0..{int(params.max_scores[j])}"
        )


def free_scores(g: Group, ak: FloatArray | None) -> FloatArray | None:
    """The free scoring values (J_g, f) among a group's ak (None without scoring values)."""
    return None if ak is None else ak[:, : g.kind.family.free_scores(g.m)]


def naturals_of(params: PolytomousParams, layout: Layout) -> list[Natural]:
    """(a, d, c, ak) of each group of ``layout``, taken from ``params``."""
    return [params.group_values(g.kind, g.items, g.m) for g in layout.groups]


# --- internal coordinates ψ --------------------------------------------------------------


def to_natural(g: Group, psi: FloatArray, log_slope: bool) -> Natural:
    """(a, d (J_g, m), c, ak) from the internal coordinates ψ (J_g, width) (numpy or
    torch, like ``psi``)."""
    a = namespace(psi).exp(psi[:, 0]) if log_slope else copy(psi[:, 0])
    values = g.kind.family.to_natural(psi[:, 1:], g.m)
    return a, values.d, values.c, values.ak


def to_internal(
    g: Group,
    a: FloatArray,
    d: FloatArray,
    c: FloatArray,
    ak: FloatArray | None,
    log_slope: bool,
) -> FloatArray:
    """The internal coordinates ψ (J_g, width) of (a, d, c, ak), within their box."""
    psi = np.zeros((len(a), g.width))
    psi[:, 0] = np.log(np.maximum(a, 1e-6)) if log_slope else a
    psi[:, 1:] = g.kind.family.to_internal(ItemValues(d, c, ak))
    return clip_internal(g, psi, log_slope)


def clip_internal(g: Group, psi: FloatArray, log_slope: bool) -> FloatArray:
    """A copy of ψ (J_g, width) with every coordinate clipped to its box."""
    out = copy(psi)
    lo, hi = LOG_SLOPE_BOUNDS if log_slope else (-RAW_SLOPE_BOUND, RAW_SLOPE_BOUND)
    out[:, 0] = clip(out[:, 0], lo, hi)
    out[:, 1:] = g.kind.family.clip(psi[:, 1:], g.m)
    return out  # type: ignore[no-any-return]


def natural_jacobian(g: Group, psi: FloatArray, log_slope: bool) -> FloatArray:
    """∂(a, d_1..d_m, c, ak_free)/∂ψ per item, (J_g, width, width)."""
    jac = zeros((psi.shape[0], g.width, g.width), psi)
    jac[:, 0, 0] = namespace(psi).exp(psi[:, 0]) if log_slope else 1.0
    jac[:, 1:, 1:] = g.kind.family.jacobian(psi[:, 1:], g.m)
    return jac  # type: ignore[no-any-return]


def natural_derivatives(
    g: Group,
    theta: FloatArray,
    a: FloatArray,
    d: FloatArray,
    c: FloatArray,
    ak: FloatArray | None,
) -> tuple[FloatArray, FloatArray]:
    """log P (Q, J_g, K) and ∂ log P/∂(a, d_1..d_m, c, ak_free) (Q, J_g, K, width)."""
    cv = curves(g.kind, theta, a, d, c, ak=ak, derivatives=True)
    assert cv.slope is not None
    slope = theta[:, None, None, None] * cv.slope[..., None]
    return cv.log_p, concat([slope, g.kind.family.derivatives(cv)], axis=-1)


# --- reported coordinates ρ --------------------------------------------------------------


def to_reported(layout: Layout, naturals: Sequence[Natural]) -> FloatArray:
    """ρ = (a, d_1..d_m, logit c, ak_free) of every item, flattened group by group."""
    parts = []
    for g, (a, d, c, ak) in zip(layout.groups, naturals, strict=True):
        cols = [a[:, None], d]
        if g.kind.has_guessing:
            cc = np.clip(c, 1e-12, 1 - 1e-12)
            cols.append(np.log(cc / (1 - cc))[:, None])
        free = g.kind.family.free_scores(g.m)
        if free:
            assert ak is not None
            cols.append(ak[:, :free])
        parts.append(np.hstack(cols).ravel())
    return np.concatenate(parts)


def from_reported(layout: Layout, rho: FloatArray) -> list[Natural]:
    """(a, d, c, ak) of each group from ρ as ``to_reported`` flattens it."""
    out, at = [], 0
    for g in layout.groups:
        block = rho[at : at + len(g.items) * g.width].reshape(len(g.items), g.width)
        at += block.size
        family, m = g.kind.family, g.m
        c = sigmoid(block[:, m + 1]) if family.has_guessing else np.zeros(len(block))
        ak = family.scoring_values(block[:, 1 + m + int(family.has_guessing) :], m)
        out.append((block[:, 0].copy(), block[:, 1 : m + 1].copy(), c, ak))
    return out
