"""How well two graders agree on the same answers: the LLM judge's points against the
reference metric's, item scales 0..max_score.

- ``exact``: the share of answers given the same points.
- ``kappa``: quadratic-weighted Cohen's kappa. With the expected disagreement taken from
  the two graders' score distributions (as Cohen's), it reduces to
  2·cov(s, t) / (var s + var t + (mean s − mean t)²) over the scores (population
  moments; Lin's concordance correlation). Scores are divided by their item's
  max_score first, so items with different scales can be pooled; on one scale this is
  exactly the usual quadratic-weighted kappa. None when both graders give one constant
  score (0/0).
- ``spearman``: Spearman's rank correlation of the same shares (ties get their mean
  rank); None when either grader's shares are constant.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import rankdata

from synth.errors import SynthError


@dataclass(frozen=True)
class Agreement:
    """Agreement between two graders over ``n`` answers (module docstring)."""

    n: int
    exact: float | None
    kappa: float | None
    spearman: float | None


def agreement(first: Sequence[int], second: Sequence[int], max_scores: Sequence[int]) -> Agreement:
    """Agreement of the points ``first`` and ``second`` gave the same answers, each on its
    item's scale 0..``max_scores``. Raises ``SynthError`` on sequences of different
    lengths or points outside their scale."""
    a = np.asarray(first, dtype=float)
    b = np.asarray(second, dtype=float)
    top = np.asarray(max_scores, dtype=float)
    if not a.shape == b.shape == top.shape or a.ndim != 1:
        raise SynthError("agreement needs three sequences of one length")
    n = int(a.size)
    if n == 0:
        return Agreement(0, None, None, None)
    if (top < 1).any() or (a < 0).any() or (b < 0).any() or (a > top).any() or (b > top).any():
        raise SynthError("agreement: points must lie in 0..max_score, with max_score >= 1")
    s, t = a / top, b / top
    exact = float(np.mean(a == b))
    cov = float(np.mean((s - s.mean()) * (t - t.mean())))
    spread = float(s.var() + t.var() + (s.mean() - t.mean()) ** 2)
    kappa = 2.0 * cov / spread if spread > 1e-15 else None
    return Agreement(n, exact, kappa, _spearman(s, t))


def _spearman(s: np.ndarray, t: np.ndarray) -> float | None:
    if np.ptp(s) == 0 or np.ptp(t) == 0:
        return None
    rs, rt = rankdata(s), rankdata(t)
    return float(np.corrcoef(rs, rt)[0, 1])
