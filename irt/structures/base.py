"""What a latent structure is: how the item responses' likelihood at the quadrature
nodes becomes each examinee's marginal likelihood and posterior, whatever the items.

A fit splits its items into the blocks its structure names and gives, for every row
(a subject or a distinct response pattern), the log-likelihood of each block's answers
at each of that block's nodes; the structure integrates over its latent traits and
returns the rows' log marginal likelihoods and each block's posterior over its nodes.
From those posteriors each item family forms its own expected counts. So the same
structure serves binary, graded, nominal or continuous items, and the same family
serves one θ, correlated factors or a bifactor.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from irt.types import FloatArray

__all__ = ["LatentStructure", "StructurePosterior", "normalised"]


@dataclass(frozen=True)
class StructurePosterior:
    """Each row's log marginal likelihood (R,) and, per block of the structure, the
    rows' posterior over that block's nodes (R, Q_b), rows summing to 1."""

    log_marginal: FloatArray
    blocks: tuple[FloatArray, ...]

    def loglik(self, weights: FloatArray | None = None) -> float:
        """Σ_rows (weight ×) log marginal: the marginal log-likelihood (``weights``: how
        many subjects each row stands for; one each if None)."""
        lm = self.log_marginal
        return float(lm.sum() if weights is None else weights @ lm)


class LatentStructure(ABC):
    """The latent traits of a model and their quadrature: ``n_blocks`` blocks of items,
    each evaluated at its own nodes, and ``posterior`` from the blocks'
    log-likelihoods."""

    @property
    @abstractmethod
    def n_blocks(self) -> int:
        """How many blocks of items the structure integrates separately."""

    @abstractmethod
    def posterior(self, logliks: Sequence[FloatArray]) -> StructurePosterior:
        """From each block's (R, Q_b) log-likelihood of every row's answers at the
        block's nodes (the arrays may be overwritten), the rows' log marginals and each
        block's posterior."""


def normalised(joint: FloatArray) -> tuple[FloatArray, FloatArray]:
    """From log(likelihood × weight) (R, Q), overwritten: each row's log of the sum over
    the nodes (R,) and the posterior (R, Q), the same array, rows summing to 1. The
    largest entry of a row is taken out first, so that no row underflows."""
    top = joint.max(axis=1, keepdims=True)
    joint -= top
    np.exp(joint, out=joint)
    total = joint.sum(axis=1, keepdims=True)
    joint /= total
    return (top + np.log(total))[:, 0], joint
