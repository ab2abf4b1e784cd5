"""Latent structures: how per-node log-likelihoods become marginal likelihoods and
posteriors, independent of the item family (``irt.structures.base``). ``Grid``: one θ
or correlated factors on a product grid; ``TieredGrid``: the Gibbons–Hedeker
reduction of the bifactor and two-tier models."""

from __future__ import annotations

from irt.structures.base import LatentStructure, StructurePosterior, normalised
from irt.structures.grid import Grid, normal_log_weights
from irt.structures.tiers import TieredGrid

__all__ = [
    "Grid",
    "LatentStructure",
    "StructurePosterior",
    "TieredGrid",
    "normal_log_weights",
    "normalised",
]
