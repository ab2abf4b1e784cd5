"""Rotation of a multidimensional 2PL/3PL's factors: varimax (orthogonal) or oblimin
(oblique; quartimin with the default γ = 0), by gradient projection (Jennrich 2001,
2002; Bernaards & Jennrich 2005).

Rules:

- The model is first written with orthogonal factors: with R = C Cᵀ (Cholesky), the
  slopes A·C on θ* = C⁻¹θ ~ N(0, I) give the same likelihood. An exploratory fit
  already has R = I.
- The criterion is applied to standardised (normal-ogive) loadings, as R mirt's
  ``summary`` does: λ_j = (a_j / 1.702) / √(1 + |a_j / 1.702|²). Each item's loadings
  are its slopes times one positive number that orthogonal rotations leave unchanged,
  so a rotation T of the loadings is the same rotation of the slopes.
- Orthogonal: Λ* = Λ T and A* = A T with T orthogonal; R* = I. Oblique: Λ* = Λ T⁻ᵀ
  and A* = A T⁻ᵀ with T's columns of unit length; θ* = Tᵀθ has R* = Tᵀ T, and
  A*·θ* = A·θ, so the likelihood is unchanged.
- Varimax uses Kaiser's row normalisation by default (as R's ``varimax``); oblimin
  does not (as GPArotation's ``oblimin``).
- The criterion has local optima: the best of ``starts`` starting rotations (the
  identity and random orthogonal matrices from ``seed``) is kept.
- Each rotated factor is turned so that its loadings sum to a positive number, and the
  factors are sorted by their sums of squared loadings, largest first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from irt.errors import IRTError
from irt.mirt_model import MirtParams, Structure
from irt.types import FloatArray

RotationMethod = Literal["oblimin", "varimax"]

# Logistic slopes are normal-ogive slopes times 1.702.
_LOGISTIC = 1.702
# One criterion and its gradient with respect to the loadings.
_Criterion = Callable[[FloatArray], tuple[float, FloatArray]]


@dataclass(frozen=True)
class Rotation:
    """A rotated solution: standardised loadings and slopes (items × factors), the
    factors' correlation (I for varimax), the rotation matrix T, and the criterion's
    value there."""

    method: str
    loadings: FloatArray
    slopes: FloatArray
    correlation: FloatArray
    rotation: FloatArray
    criterion: float
    source: MirtParams

    @property
    def params(self) -> MirtParams:
        """The rotated model, every slope free: the same likelihood as ``source``."""
        return MirtParams(
            item_ids=self.source.item_ids,
            slopes=self.slopes,
            d=self.source.d,
            factors=self.source.factors,
            correlation=self.correlation,
            pattern=np.ones_like(self.slopes, dtype=bool),
            structure=Structure.EXPLORATORY,
            c=self.source.c,
        )


def standardized_loadings(slopes: FloatArray) -> FloatArray:
    """Normal-ogive loadings of slopes on orthogonal factors."""
    scaled = np.asarray(slopes) / _LOGISTIC
    return np.asarray(scaled / np.sqrt(1.0 + np.sum(scaled**2, axis=1, keepdims=True)))


def varimax_criterion(loadings: FloatArray) -> tuple[float, FloatArray]:
    """−¼ Σ_k Σ_j (λ²_jk − mean_j λ²_jk)² (Kaiser 1958), to be minimised, and its
    gradient −λ ∘ (λ² − column means of λ²)."""
    sq = loadings**2
    centred = sq - sq.mean(axis=0, keepdims=True)
    return -0.25 * float(np.sum(centred**2)), -loadings * centred


def oblimin_criterion(gamma: float) -> _Criterion:
    """¼ Σ_j Σ_{k≠l} λ²_jk (C λ²)_jl with C = I − (γ/J)·11ᵀ (Jennrich 2002; quartimin
    at γ = 0), and its gradient λ ∘ (C λ² N), N = 11ᵀ − I."""

    def criterion(loadings: FloatArray) -> tuple[float, FloatArray]:
        sq = loadings**2
        k = sq.shape[1]
        cross = sq @ (np.ones((k, k)) - np.eye(k))
        if gamma != 0:
            cross = cross - gamma * cross.mean(axis=0, keepdims=True)
        return 0.25 * float(np.sum(sq * cross)), loadings * cross

    return criterion


def _orthogonal(
    a: FloatArray, start: FloatArray, criterion: _Criterion, tol: float, max_iter: int
) -> tuple[FloatArray, float]:
    """Gradient projection on the orthogonal matrices (Jennrich 2001): the gradient is
    projected on the tangent space, a step halved until the criterion falls enough,
    then mapped back to the nearest orthogonal matrix (polar factor by SVD)."""
    t = start
    value, grad_l = criterion(a @ t)
    grad = a.T @ grad_l
    step = 1.0
    for _ in range(max_iter):
        m = t.T @ grad
        projected = grad - t @ (0.5 * (m + m.T))
        size = float(np.linalg.norm(projected))
        if size < tol:
            break
        step *= 2.0
        for _ in range(12):
            u, _, vt = np.linalg.svd(t - step * projected)
            candidate = u @ vt
            new_value, new_grad_l = criterion(a @ candidate)
            if new_value < value - 0.5 * size**2 * step:
                break
            step /= 2.0
        else:
            break
        t, value, grad = candidate, new_value, a.T @ new_grad_l
    return t, value


def _oblique(
    a: FloatArray, start: FloatArray, criterion: _Criterion, tol: float, max_iter: int
) -> tuple[FloatArray, float]:
    """Gradient projection on the matrices with unit-length columns (Jennrich 2002):
    Λ = A T⁻ᵀ, so ∂f/∂T = −(Λᵀ G T⁻¹)ᵀ with G = ∂f/∂Λ; the step is renormalised column
    by column."""

    def evaluate(t: FloatArray) -> tuple[float, FloatArray]:
        inv = np.linalg.inv(t)
        loadings = a @ inv.T
        value, grad_l = criterion(loadings)
        return value, -(loadings.T @ grad_l @ inv).T

    t = start
    value, grad = evaluate(t)
    step = 1.0
    for _ in range(max_iter):
        projected = grad - t * np.sum(t * grad, axis=0, keepdims=True)
        size = float(np.linalg.norm(projected))
        if size < tol:
            break
        step *= 2.0
        for _ in range(12):
            moved = t - step * projected
            candidate = moved / np.linalg.norm(moved, axis=0, keepdims=True)
            if np.linalg.cond(candidate) < 1e12:
                new_value, new_grad = evaluate(candidate)
                if new_value < value - 0.5 * size**2 * step:
                    break
            step /= 2.0
        else:
            break
        t, value, grad = candidate, new_value, new_grad
    return t, value


def rotate(
    params: MirtParams,
    method: RotationMethod = "oblimin",
    *,
    gamma: float = 0.0,
    normalize: bool | None = None,
    starts: int = 10,
    seed: int = 0,
    tol: float = 1e-8,
    max_iter: int = 1000,
) -> Rotation:
    """Rotate ``params``'s factors by ``method`` (see the module's rules); ``normalize``
    (Kaiser's row normalisation) defaults to True for varimax, False for oblimin."""
    if method not in ("oblimin", "varimax"):
        raise IRTError(f"unknown rotation {method!r}; use 'oblimin' or 'varimax'")
    if starts < 1:
        raise IRTError(f"starts must be at least 1, got {starts}")
    k = params.n_factors
    # Orthogonal factors first: a·θ = (a C)·(C⁻¹θ) with C Cᵀ = R.
    slopes = params.slopes @ np.linalg.cholesky(params.correlation)
    loadings = standardized_loadings(slopes)
    if k == 1:
        t = np.ones((1, 1))
        return _finish(method, params, slopes, loadings, t, 0.0, oblique=False)
    kaiser = (method == "varimax") if normalize is None else normalize
    rows = np.linalg.norm(loadings, axis=1, keepdims=True) if kaiser else np.ones((len(slopes), 1))
    rows = np.where(rows > 0, rows, 1.0)
    a = loadings / rows
    oblique = method == "oblimin"
    criterion = oblimin_criterion(gamma) if oblique else varimax_criterion
    search = _oblique if oblique else _orthogonal
    rng = np.random.default_rng(seed)
    best: tuple[FloatArray, float] | None = None
    for i in range(starts):
        start = np.eye(k) if i == 0 else np.linalg.qr(rng.normal(size=(k, k)))[0]
        t, value = search(a, start, criterion, tol, max_iter)
        if best is None or value < best[1] - 1e-12:
            best = (t, value)
    assert best is not None
    t, value = best
    return _finish(method, params, slopes, loadings, t, value, oblique)


def _finish(
    method: str,
    params: MirtParams,
    slopes: FloatArray,
    loadings: FloatArray,
    t: FloatArray,
    value: float,
    oblique: bool,
) -> Rotation:
    """Apply T, turn each factor to a positive loading sum and sort the factors by their
    sums of squared loadings."""
    transform = np.linalg.inv(t).T if oblique else t
    rotated = loadings @ transform
    order = np.argsort(-np.sum(rotated**2, axis=0), kind="stable")
    sign = np.where(rotated[:, order].sum(axis=0) < 0, -1.0, 1.0)
    t = t[:, order] * sign
    transform = np.linalg.inv(t).T if oblique else t
    corr = t.T @ t if oblique else np.eye(t.shape[1])
    corr = 0.5 * (corr + corr.T)
    np.fill_diagonal(corr, 1.0)
    return Rotation(
        method=method,
        loadings=loadings @ transform,
        slopes=slopes @ transform,
        correlation=corr,
        rotation=t,
        criterion=value,
        source=params,
    )
