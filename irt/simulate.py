"""Simulated examinees and response matrices (for tests, benchmarks and demos)."""

from __future__ import annotations

import numpy as np

from irt.models import ItemParams, ModelKind, probability
from irt.responses import MISSING, ResponseMatrix
from irt.types import FloatArray


def random_params(
    n_items: int, rng: np.random.Generator, model: ModelKind | str = ModelKind.THREE_PL
) -> ItemParams:
    """Item parameters as in the project's benchmarks: a ~ LogNormal(0, 0.3),
    b ~ N(0, 1), c ~ U(0, 0.25) (3PL/4PL), d ~ U(0.9, 1) (4PL)."""
    kind = ModelKind(model)
    a = rng.lognormal(0.0, 0.3, n_items)
    if kind is ModelKind.ONE_PL:
        a = np.full(n_items, float(np.exp(rng.normal(0.0, 0.3))))
    b = rng.normal(0.0, 1.0, n_items)
    c = rng.uniform(0.0, 0.25, n_items) if kind.has_guessing else np.zeros(n_items)
    d = rng.uniform(0.9, 1.0, n_items) if kind.has_slipping else np.ones(n_items)
    return ItemParams.create(a, b, c, d, model=kind)


def simulate_responses(
    params: ItemParams,
    theta: FloatArray,
    rng: np.random.Generator,
    missing_rate: float = 0.0,
) -> ResponseMatrix:
    """Draw 0/1 answers of examinees with abilities ``theta``; drop a share at random."""
    p = probability(theta, params)
    values = (rng.random(p.shape) < p).astype(np.int8)
    if missing_rate > 0:
        values[rng.random(p.shape) < missing_rate] = MISSING
    return ResponseMatrix(
        subject_ids=tuple(f"s{k:05d}" for k in range(len(theta))),
        item_ids=params.item_ids,
        values=values,
    )
