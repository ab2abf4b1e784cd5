"""Predicted and true accuracy per scenario, for the per-scenario errors of the cross-fit
and of ``cat validate``."""

from __future__ import annotations

import numpy as np

from irt.responses import ResponseMatrix
from irt.types import BoolArray, FloatArray


def scenario_masks(codes: tuple[int, ...]) -> BoolArray:
    """(S, J): which items belong to each scenario code 0..S-1."""
    array = np.asarray(codes)
    return np.asarray(array[None, :] == np.arange(int(array.max()) + 1)[:, None])


def scenario_accuracy(
    masks: BoolArray,
    can_answer: BoolArray,
    given: BoolArray,
    right: FloatArray,
    expected: FloatArray,
) -> FloatArray:
    """(E, S) each examinee's accuracy per scenario over the items it can answer: its
    answers where ``given`` (E, J), ``expected`` (E, J) chances elsewhere; with
    ``given`` all False and ``expected`` its answers, the true accuracy. nan for a
    scenario with no answerable item."""
    scores = np.where(given, np.asarray(right, dtype=np.float64), expected) * can_answer
    totals = scores @ masks.T.astype(np.float64)
    counts = can_answer.astype(np.float64) @ masks.T.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.where(counts > 0, totals / counts, np.nan))


def scenario_truth(responses: ResponseMatrix, scenario: tuple[int, ...] | None) -> FloatArray:
    """(N, S) each subject's accuracy per scenario (nan where it answered none); (N, 0)
    without scenario codes."""
    if not scenario:
        return np.empty((responses.n_subjects, 0))
    right = (responses.values == 1).astype(np.float64)
    none = np.zeros_like(responses.observed)
    return scenario_accuracy(scenario_masks(scenario), responses.observed, none, right, right)
