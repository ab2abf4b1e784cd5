"""Start values of the continuous EM, and the checks that a pool can be calibrated.

Every score is put on the logit scale, y = logit(x) clipped at ε; each item's y is
standardised, and a subject's provisional θ is the standardised mean of its items'
standardised y. The least-squares line of y on that θ, item by item, gives a, d and σ
(the CRM's ML estimates were θ known); for a Beta item τ comes from the moment identity
Var(x | θ) = μ(1 − μ)/(1 + m + n) with m + n = 2 e^{τ/2} cosh(η/2), at η = d.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
from scipy.special import expit, logit

from irt.continuous import ContinuousParams, ContinuousType
from irt.continuous_estep import clip_internal, params_internal
from irt.continuous_kernels import clip_scores
from irt.continuous_priors import ContinuousPriors
from irt.continuous_responses import ContinuousResponses
from irt.errors import DataWarning, IRTError, ParamsError, ResponseDataError
from irt.types import BoolArray, FloatArray

__all__ = [
    "ItemTypes",
    "check_item_types",
    "check_items",
    "classical_start",
    "resolve_item_types",
    "start_from",
]

ItemTypes = ContinuousType | str | Sequence[ContinuousType | str] | Mapping[str, Any]
# Fewest answers an item needs without priors on all three of its parameters.
_MIN_ANSWERS = 3


def check_item_types(item_types: ItemTypes) -> None:
    """Raise if a type given as a name (or a sequence of names) is unknown."""
    raw = [item_types] if isinstance(item_types, str | ContinuousType) else list(item_types)
    for value in raw:
        _is_crm(value, None)


def _is_crm(value: object, item: str | None) -> bool:
    try:
        return ContinuousType(cast(Any, value)) is ContinuousType.CRM
    except ValueError:
        names = ", ".join(t.value for t in ContinuousType)
        where = "" if item is None else f" for item {item!r}"
        raise IRTError(f"unknown item type {value!r}{where}; use one of {names}") from None


def resolve_item_types(item_types: ItemTypes, responses: ContinuousResponses) -> BoolArray:
    """Whether each item of ``responses`` is a CRM item, from one type for all items, one
    per item, or a mapping from every item id to its type."""
    ids = responses.item_ids
    if isinstance(item_types, str | ContinuousType):
        raw: list[Any] = [item_types] * len(ids)
    elif isinstance(item_types, Mapping):
        missing = [i for i in ids if i not in item_types]
        if missing:
            raise IRTError(f"no item type for item {missing[0]!r}")
        raw = [item_types[i] for i in ids]
    else:
        raw = list(item_types)
        if len(raw) != len(ids):
            raise IRTError(f"{len(raw)} item types for {len(ids)} items")
    return np.array([_is_crm(v, item) for v, item in zip(raw, ids, strict=True)], dtype=bool)


def check_items(
    responses: ContinuousResponses, is_crm: BoolArray, priors: ContinuousPriors, epsilon: float
) -> None:
    """Refuse an item nobody answered, or answered by fewer than three subjects unless
    priors pin all its parameters; warn of items whose answers are all alike (their
    dispersion goes to its bound without a prior on it)."""
    counts = responses.observed.sum(axis=0)
    none = np.flatnonzero(counts == 0)
    if none.size:
        raise ResponseDataError(f"item {responses.item_ids[int(none[0])]!r} has no answers")
    full = np.where(
        is_crm,
        priors.log_sigma_sd is not None,
        priors.tau_sd is not None,
    ) & (priors.a_sdlog is not None and priors.d_sd is not None)
    few = np.flatnonzero((counts < _MIN_ANSWERS) & ~full)
    if few.size:
        j = int(few[0])
        raise ResponseDataError(
            f"item {responses.item_ids[j]!r} has {int(counts[j])} answers; calibration needs "
            f"at least {_MIN_ANSWERS} per item (or priors on a, d and its dispersion)"
        )
    x = clip_scores(responses.values, epsilon)
    spread = np.nanmax(x, axis=0) - np.nanmin(x, axis=0)
    alike = np.flatnonzero((spread == 0) & ~full)
    if alike.size:
        warnings.warn(
            f"{alike.size} item(s) (first {responses.item_ids[int(alike[0])]!r}) have all "
            "their answers alike: their dispersion goes to its bound",
            DataWarning,
            stacklevel=3,
        )


def classical_start(
    responses: ContinuousResponses, is_crm: BoolArray, epsilon: float
) -> FloatArray:
    """ψ (J, 3) from a provisional θ (module docstring)."""
    observed = responses.observed
    y = np.where(
        observed, logit(clip_scores(np.where(observed, responses.values, 0.5), epsilon)), 0
    )
    count = np.maximum(observed.sum(axis=0), 1)
    mean = y.sum(axis=0) / count
    sd = np.sqrt(np.maximum(((y - mean) ** 2 * observed).sum(axis=0) / count, 1e-6))
    z = np.where(observed, (y - mean) / sd, 0.0)
    answered = observed.sum(axis=1)
    theta = np.where(answered > 0, z.sum(axis=1) / np.maximum(answered, 1), 0.0)
    seen = answered > 0
    theta = (theta - theta[seen].mean()) / max(float(theta[seen].std()), 1e-6)
    w = observed.astype(np.float64)
    n = np.maximum(w.sum(axis=0), 1.0)
    t_bar = (w * theta[:, None]).sum(axis=0) / n
    dt = np.where(observed, theta[:, None] - t_bar, 0.0)
    var_t = np.maximum((dt**2).sum(axis=0) / n, 1e-6)
    slope = (dt * (y - mean)).sum(axis=0) / n / var_t
    a = np.clip(slope, 0.1, 4.0)
    d = mean - a * t_bar
    resid = np.where(observed, y - d - a * theta[:, None], 0.0)
    sigma = np.sqrt(np.maximum((resid**2).sum(axis=0) / n, 1e-4))
    # Beta items: the precision m + n from the residual variance on the x scale.
    x = np.where(observed, clip_scores(np.where(observed, responses.values, 0.5), epsilon), 0.0)
    mu = expit(d + a * theta[:, None])
    var_x = np.maximum((np.where(observed, x - mu, 0.0) ** 2).sum(axis=0) / n, 1e-6)
    bern = (np.where(observed, mu * (1 - mu), 0.0)).sum(axis=0) / n
    phi = np.clip(bern / var_x - 1.0, 0.5, 1e4)
    tau = 2 * np.log(phi / (2 * np.cosh(d / 2)))
    psi = np.column_stack([np.log(a), d, np.where(is_crm, np.log(sigma), tau)])
    return clip_internal(psi, is_crm)


def start_from(
    start: ContinuousParams, responses: ContinuousResponses, is_crm: BoolArray
) -> FloatArray:
    """ψ from a given pool covering the same items with the same types."""
    if tuple(start.item_ids) != tuple(responses.item_ids):
        raise ParamsError("the start values must list the responses' items in order")
    if not np.array_equal(start.is_crm, is_crm):
        raise ParamsError("the start values' item types differ from the calibrator's")
    return clip_internal(params_internal(start), is_crm)
