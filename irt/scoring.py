"""Ability scoring of subjects with known item parameters: EAP, MAP, ML and WLE.

The estimators are the shared ones of ``irt.estimation.scoring``; this module gives them
the binary items' log-likelihood of each subject. Every estimate stays inside
``bounds`` and is finite. ML (and WLE where it has no root) does not exist for a subject
whose answers all agree; such subjects get the MAP estimate instead and are flagged in
``Abilities.fallback``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from irt.design_blocks import DesignBlock, DesignMatrices
from irt.errors import IRTError
from irt.estep import NodeTerms
from irt.estimation.scoring import (
    NormalPrior,
    eap_around_mode,
    grid_mode,
    mode_sd,
    posterior_mode,
    weighted_likelihood,
)
from irt.models import ItemParams, log_probabilities, theta_derivatives
from irt.names import AbilityMethod as AbilityMethod
from irt.response_table import row_blocks
from irt.responses import ResponseMatrix
from irt.types import BoolArray, FloatArray, IntArray


@dataclass(frozen=True)
class Abilities:
    """θ and its standard error for each subject, with the method that produced it."""

    subject_ids: tuple[str, ...]
    theta: FloatArray
    se: FloatArray
    method: AbilityMethod
    n_answered: FloatArray
    fallback: BoolArray  # True where ML/WLE did not exist and MAP was used instead


@dataclass(frozen=True)
class _Data:
    """Each subject's binary log-likelihood as a function of its own θ (the
    ``SubjectLikelihood`` the shared estimators of ``irt.estimation.scoring`` need), for
    the subjects of one block of the response matrix."""

    right: FloatArray
    observed: FloatArray
    params: ItemParams
    #: No answer missing: the products over the nodes then need ``right`` only.
    complete: bool

    @classmethod
    def of(cls, responses: ResponseMatrix, params: ItemParams) -> _Data:
        """Every subject of ``responses`` at once."""
        design = DesignMatrices.from_responses(responses)
        return cls.of_block(design.block(slice(0, design.n_subjects)), params)

    @classmethod
    def of_block(cls, block: DesignBlock, params: ItemParams) -> _Data:
        return cls(block.right, block.observed_or_ones(), params, block.observed is None)

    def rows(self, index: IntArray) -> _Data:
        return replace(self, right=self.right[index], observed=self.observed[index])

    def at_nodes(self, nodes: FloatArray) -> FloatArray:
        log_p, log_q = log_probabilities(nodes, self.params)
        block = DesignBlock(
            slice(0, len(self.right)), self.right, None if self.complete else self.observed
        )
        return NodeTerms.of(log_p, log_q).log_likelihood(block)

    def at(self, theta: FloatArray) -> FloatArray:
        log_p, log_q = log_probabilities(theta, self.params)
        wrong = self.observed - self.right
        return np.asarray((self.right * log_p + wrong * log_q).sum(axis=1), dtype=np.float64)

    def score_information(self, theta: FloatArray) -> tuple[FloatArray, FloatArray]:
        score, info, _ = self.warm_terms(theta)
        return score, info

    def warm_terms(self, theta: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        p, dp, d2p = theta_derivatives(theta, self.params)
        pq = p * (1 - p)
        score = ((self.right - self.observed * p) * dp / pq).sum(axis=1)
        info = (self.observed * dp * dp / pq).sum(axis=1)
        bias = (self.observed * dp * d2p / pq).sum(axis=1)
        return score, info, bias


def score_abilities(
    responses: ResponseMatrix,
    params: ItemParams,
    method: AbilityMethod | str = AbilityMethod.EAP,
    *,
    bounds: tuple[float, float] = (-6.0, 6.0),
    prior_mean: float = 0.0,
    prior_sd: float = 1.0,
) -> Abilities:
    """Estimate θ for every subject of ``responses`` (items must match ``params``)."""
    kind = AbilityMethod(method.lower() if isinstance(method, str) else method)
    if tuple(responses.item_ids) != tuple(params.item_ids):
        raise IRTError("responses and item parameters must list the same items in order")
    lo, hi = bounds
    if not lo < hi:
        raise IRTError(f"bounds must be increasing, got {bounds}")
    if not prior_sd > 0:
        raise IRTError(f"prior_sd must be positive, got {prior_sd}")
    prior = NormalPrior(prior_mean, prior_sd)
    # Every estimator works subject by subject: scoring a block of subjects at a time
    # gives the same estimates and holds a few float blocks, not float copies of the
    # whole matrix.
    design = DesignMatrices.from_responses(responses, SCORING_BLOCK_BYTES)
    parts = [
        _score_block(_Data.of_block(design.block(rows), params), kind, bounds, prior)
        for rows in row_blocks(design.n_subjects, design.block_rows)
    ]
    theta, se, n_answered, fallback = (np.concatenate(part) for part in zip(*parts, strict=True))
    return Abilities(
        subject_ids=responses.subject_ids,
        theta=np.clip(theta, lo, hi),
        se=np.asarray(se, dtype=np.float64),
        method=kind,
        n_answered=n_answered,
        fallback=fallback,
    )


#: Bytes of one float block when scoring: the estimators hold about ten arrays of its
#: size (probabilities, their derivatives, products) at once.
SCORING_BLOCK_BYTES = 32 * 2**20


def _score_block(
    data: _Data, kind: AbilityMethod, bounds: tuple[float, float], prior: NormalPrior
) -> tuple[FloatArray, FloatArray, FloatArray, BoolArray]:
    """θ, its SE, the answers counted and the fallback flags of one block's subjects."""
    theta_map = posterior_mode(data, grid_mode(data, bounds, prior), bounds, prior)
    n_answered = data.observed.sum(axis=1)
    fallback = np.zeros(len(theta_map), dtype=bool)
    if kind is AbilityMethod.EAP:
        theta, se = eap_around_mode(data, theta_map, bounds, prior)
    elif kind is AbilityMethod.MAP:
        theta, se = theta_map, mode_sd(data, theta_map, prior)
    else:
        if kind is AbilityMethod.ML:
            n_right = data.right.sum(axis=1)
            exists = (n_right > 0) & (n_right < n_answered)
            ml = posterior_mode(data, grid_mode(data, bounds, None), bounds, None)
        else:
            ml, exists = weighted_likelihood(data, theta_map, bounds)
        theta = np.where(exists, ml, theta_map)
        fallback = ~exists
        info = data.score_information(theta)[1]
        se = np.where(
            fallback,
            1.0 / np.sqrt(info + prior.precision),
            1.0 / np.sqrt(np.maximum(info, 1e-12)),
        )
    return theta, np.asarray(se, dtype=np.float64), n_answered, fallback
