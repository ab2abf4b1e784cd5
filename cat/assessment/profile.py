"""A multidimensional pool's profile of the assessed model: its score on each factor of
the pool's bifactor model (the general factor first), and its rank among the
references on the general factor and on the predicted total.

The scores are MAP under the model's own prior, N(0, R), with the Laplace posterior SD,
from the answers given, whichever design chose the items; the references are scored the
same way from all their recorded answers, so the general-factor rank compares like with
like. The per-scenario accuracies with their intervals are the summary's ``scenarios``.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from cat.designs.low_rank import LowRankModel, scored_test
from irt.mirt_model import MirtParams, Structure
from irt.responses import ResponseMatrix
from irt.types import FloatArray, IntArray


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FactorScore(_Part):
    """One factor's score (MAP, standard units of the references' model) and its SD."""

    factor: str
    score: float
    sd: float


class ProfileRank(_Part):
    """1-based position among the references and the model (``of`` = references + 1)."""

    position: int
    of: int


class Profile(_Part):
    """The factor scores (a bifactor model's general factor first), and the ranks."""

    model: str = Field(description='"bifactor" or "mirt" (cat calibrate --model).')
    factors: list[FactorScore]
    general_rank: ProfileRank | None = None
    total_rank: ProfileRank | None = None


def _position(value: float, others: FloatArray) -> ProfileRank:
    others = np.asarray(others, dtype=np.float64)
    others = others[np.isfinite(others)]
    return ProfileRank(position=int(np.sum(others > value)) + 1, of=int(others.size) + 1)


def factor_scores(
    params: MirtParams, positions: IntArray, responses: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """(MAP factor scores, their SDs) of one examinee from the answers ``responses`` to
    the items at ``positions``."""
    n = params.n_items
    given = np.zeros((1, n), dtype=bool)
    given[0, positions] = True
    right = np.zeros((1, n))
    right[0, positions] = responses
    test = scored_test(LowRankModel.from_mirt(params), np.ones((1, n), dtype=bool), given, right)
    return test.u[0], np.sqrt(np.diagonal(test.cov[0]))


def reference_general_scores(params: MirtParams, answers: ResponseMatrix) -> FloatArray:
    """Each reference's MAP score on the general factor (column 0) from every answer it
    recorded."""
    right = (answers.values == 1).astype(np.float64)
    test = scored_test(LowRankModel.from_mirt(params), answers.observed, answers.observed, right)
    return np.asarray(test.u[:, 0], dtype=np.float64)


def bifactor_profile(
    params: MirtParams,
    positions: IntArray,
    responses: FloatArray,
    predicted_accuracy: float,
    reference_accuracy: FloatArray | None = None,
    reference_answers: ResponseMatrix | None = None,
) -> Profile:
    """The profile of one examinee: factor scores from its answers, the general-factor
    rank (bifactor models) against ``reference_answers``' scores and the predicted-total
    rank against the references' observed ``reference_accuracy``, each when given."""
    scores, sds = factor_scores(params, positions, responses)
    factors = [
        FactorScore(factor=name, score=float(u), sd=float(s))
        for name, u, s in zip(params.factors, scores, sds, strict=True)
    ]
    general = None
    bifactor = params.structure is Structure.BIFACTOR
    if bifactor and reference_answers is not None and reference_answers.n_subjects:
        general = _position(float(scores[0]), reference_general_scores(params, reference_answers))
    total = None
    if reference_accuracy is not None and len(reference_accuracy):
        total = _position(predicted_accuracy, reference_accuracy)
    return Profile(
        model="bifactor" if bifactor else "mirt",
        factors=factors,
        general_rank=general,
        total_rank=total,
    )
