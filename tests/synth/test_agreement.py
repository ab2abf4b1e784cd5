"""Judge against metric: exact agreement, quadratic-weighted kappa, Spearman's rho."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

from synth.agreement import agreement
from synth.errors import SynthError


def _textbook_qwk(a: list[int], b: list[int], top: int) -> float:
    """Cohen's quadratic-weighted kappa from the confusion matrix, as textbooks write it."""
    k = top + 1
    observed = np.zeros((k, k))
    for x, y in zip(a, b, strict=True):
        observed[x, y] += 1
    expected = np.outer(observed.sum(1), observed.sum(0)) / len(a)
    weights = np.array([[(i - j) ** 2 / (k - 1) ** 2 for j in range(k)] for i in range(k)])
    return float(1 - (weights * observed).sum() / (weights * expected).sum())


def test_a_known_case() -> None:
    judge = [0, 1, 2, 3, 4, 4, 2, 0]
    metric = [0, 2, 2, 3, 3, 4, 1, 1]
    found = agreement(judge, metric, [4] * 8)
    assert found.n == 8 and found.exact == pytest.approx(4 / 8)
    assert found.kappa == pytest.approx(_textbook_qwk(judge, metric, 4))
    # by hand: Σ(x − y)² = 4; Σ over all pairs (x_k − y_l)² / n = (8·50 + 8·44 − 2·16·16) / 8
    # = 30 (the chance disagreement); kappa = 1 − 4/30
    assert found.kappa == pytest.approx(1 - 4 / 30)
    assert found.spearman == pytest.approx(spearmanr(judge, metric).statistic)


def test_perfect_and_constant_cases() -> None:
    same = agreement([0, 2, 4], [0, 2, 4], [4, 4, 4])
    assert (same.exact, same.kappa, same.spearman) == (1.0, pytest.approx(1.0), pytest.approx(1.0))
    flat = agreement([2, 2], [2, 2], [4, 4])
    assert (flat.exact, flat.kappa, flat.spearman) == (1.0, None, None)
    one_flat = agreement([2, 2, 2], [0, 2, 4], [4, 4, 4])
    assert one_flat.kappa == 0.0 and one_flat.spearman is None
    assert agreement([], [], []) == agreement([], [], [])
    assert agreement([], [], []).n == 0 and agreement([], [], []).kappa is None


def test_mixed_scales_pool_as_shares() -> None:
    # 1 of 2 and 2 of 4 are the same share: the pooled kappa sees full agreement.
    found = agreement([1, 2, 0, 4], [1, 2, 0, 4], [2, 4, 2, 4])
    assert found.kappa == pytest.approx(1.0)
    shifted = agreement([2, 4], [1, 2], [2, 4])
    assert shifted.exact == 0.0 and shifted.kappa is not None and shifted.kappa < 1


def test_bad_input_is_refused() -> None:
    with pytest.raises(SynthError, match="one length"):
        agreement([1], [1, 2], [4, 4])
    with pytest.raises(SynthError, match=r"0\.\.max_score"):
        agreement([5], [1], [4])
