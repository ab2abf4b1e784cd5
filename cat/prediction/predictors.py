"""Predicting a subject's accuracy on the items it was not given, from reference subjects.

With many references (hundreds of calibration models), a ridge regression across them —
from their answers on exactly the items this subject was given to their accuracy on the
rest — captures what a one-dimensional IRT model misses (the DESIGN.md prototype found it
far ahead of every IRT predictor there; with ~30 references it lost to the plug-in).
The penalty is chosen by exact leave-one-out error (closed form from the SVD).

The IRT plug-in itself is calibrated against the references too: Bayes-modal item
priors (above all the one on ``c``) and the one-dimensional fit make the model-expected
score at a subject's ML θ drift from its observed score by the same amount for nearly
every subject (on MMLU-Pro, 32 LLMs: +1.1 points for every reference, in sample and out).
``reference_offset`` measures that drift on the references and the plug-in subtracts it
from the model-expected part; on MMLU-Pro leave-one-out at 250 items it cut the MAE of
the plug-in from 2.1 to 1.5 points (benchmarks/bench_validate.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cat.engine.selection import PoolParams
from cat.errors import CatError
from cat.prediction.shares import expected_share
from irt.types import BoolArray, FloatArray, IntArray

PENALTIES = np.logspace(-2, 4, 25)


def ridge_loo(x: FloatArray, y: FloatArray, x_new: FloatArray) -> tuple[float, float]:
    """Ridge prediction at ``x_new`` and its leave-one-out RMSE, the penalty chosen among
    ``PENALTIES`` by that LOO error. ``x`` (n, k), ``y`` (n,); an intercept is fitted."""
    n = len(y)
    if n < 3:
        raise CatError("ridge prediction needs at least 3 reference subjects")
    mx, my = x.mean(axis=0), float(y.mean())
    xc, yc = x - mx, y - my
    s2, v, w = _spectrum(xc)
    wy = w.T @ yc
    # Every penalty at once: column p holds 1 / (s² + λ_p).
    inverse = 1.0 / (s2[:, None] + PENALTIES[None, :])
    fitted = w @ (inverse * wy[:, None])
    leverage = (w * w) @ inverse + 1.0 / n
    with np.errstate(divide="ignore", invalid="ignore"):
        loo = np.sqrt(np.mean(((yc[:, None] - fitted) / (1 - leverage)) ** 2, axis=0))
    # A NaN or infinite LOO error (a reference of leverage 1) never wins.
    ranked = np.where(np.isfinite(loo), loo, np.inf)
    if not np.isfinite(ranked).any():
        return my, 0.0
    pick = int(np.argmin(ranked))
    beta = v @ (inverse[:, pick] * wy)
    return my + float((x_new - mx) @ beta), float(loo[pick])


def _spectrum(xc: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(s², V, X·V) of the centred ``xc`` = U·S·Vᵀ: X·V is U·S, all the LOO error needs.

    With more references than items the k × k cross-product's eigenvectors give them
    at about a third of the cost of the SVD (k = 250 of 1,068 references: 15 against
    44 ms); the ridge's smallest penalty (0.01) keeps the squared condition harmless.
    """
    n, k = xc.shape
    if n >= k:
        s2, v = np.linalg.eigh(xc.T @ xc)
        return np.maximum(s2, 0.0), v, xc @ v
    u, s, vt = np.linalg.svd(xc, full_matrices=False)
    return s**2, vt.T, u * s


@dataclass(frozen=True)
class RidgeReferences:
    """The reference subjects as the ridge reads them, prepared once for every subject
    it predicts: ``filled`` (J, n) their answers item by item (a subject's given items are
    then contiguous rows to gather), a missing one filled with the item's
    mean among the references (0.5 where none answered it); ``right`` (n, J) 1 where
    right; ``observed`` (n, J) 1 where answered."""

    filled: FloatArray
    right: FloatArray
    observed: FloatArray

    @classmethod
    def of(cls, ref_values: FloatArray, ref_observed: BoolArray) -> RidgeReferences:
        """From the references' answers (n, J) (1/0, read where ``ref_observed``)."""
        observed = np.asarray(ref_observed, dtype=bool)
        right = np.where(observed, np.asarray(ref_values, dtype=np.float64), 0.0)
        counts = observed.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            item_mean = np.where(counts > 0, right.sum(axis=0) / counts, 0.5)
        filled = np.ascontiguousarray(np.where(observed, right, item_mean).T)
        return cls(filled, right, observed.astype(np.float64))

    def accuracies(
        self, given: list[IntArray], answers: list[FloatArray], answered: BoolArray
    ) -> FloatArray:
        """``ridge_accuracy`` of E subjects: subject e was ``given`` the items
        ``given[e]`` with ``answers[e]`` and ``answered`` (E, J) the items it answered.
        The references' accuracy on each subject's other items comes from two matrix
        products for all E at once."""
        answered = np.asarray(answered, dtype=bool)
        rest = answered.copy()
        for e, items in enumerate(given):
            rest[e, items] = False
        rest_f = rest.T.astype(np.float64)
        n_right, n_rest = self.right @ rest_f, self.observed @ rest_f  # (n, E)
        sizes = np.stack([answered.sum(axis=1), rest.sum(axis=1)], axis=1)
        out = np.empty(len(given))
        for e, (items, ans) in enumerate(zip(given, answers, strict=True)):
            n_answered, n_left = (int(v) for v in sizes[e])
            out[e] = self._one(items, ans, n_answered, n_left, n_right[:, e], n_rest[:, e])
        return out

    def _one(
        self,
        given: IntArray,
        answers: FloatArray,
        n_answered: int,
        rest: int,
        n_right: FloatArray,
        n_rest: FloatArray,
    ) -> float:
        """One subject: ``rest`` of its ``n_answered`` items not given; ``n_right`` and
        ``n_rest`` (n,) each reference's right answers and answers on those items."""
        if rest == 0:
            return float(answers.mean()) if answers.size else float("nan")
        usable = n_rest > 0
        x = (self.filled[given] if usable.all() else self.filled[np.ix_(given, usable)]).T
        pred, _ = ridge_loo(x, n_right[usable] / n_rest[usable], answers)
        rest_acc = float(np.clip(pred, 0.0, 1.0))
        return float((answers.sum() + rest_acc * rest) / n_answered)


def ridge_accuracy(
    ref_values: FloatArray,
    ref_observed: BoolArray,
    given: IntArray,
    answers: FloatArray,
    answered: IntArray,
) -> float:
    """A subject's accuracy on all the items it ``answered``: its own ``answers`` on the
    ``given`` items plus the ridge prediction of its accuracy on the rest.

    ``ref_values``/``ref_observed`` are the references' answers (n, J) (1/0) and which
    they gave; a reference's missing answer to a given item is filled with the item's
    mean among the references. Many subjects against the same references:
    ``RidgeReferences.accuracies``.
    """
    given = np.asarray(given, dtype=np.int_)
    mask = np.zeros((1, np.shape(ref_values)[1]), dtype=bool)
    mask[0, answered] = True
    refs = RidgeReferences.of(ref_values, ref_observed)
    return float(refs.accuracies([given], [np.asarray(answers, dtype=np.float64)], mask)[0])


def reference_offset(
    params: PoolParams,
    theta: FloatArray,
    accuracy: FloatArray,
    observed: BoolArray | None = None,
) -> float:
    """Mean over reference subjects of (model-expected accuracy at their θ − observed
    accuracy), per item: what the plug-in over-predicts by. On a pool of scored items,
    accuracy is the mean share of the top score (``cat.prediction.shares``).

    ``theta``/``accuracy`` (n,) are the references' abilities and observed accuracies;
    ``observed`` (n, J) marks the items each answered (all items when ``None``).
    """
    theta = np.asarray(theta, dtype=np.float64)
    accuracy = np.asarray(accuracy, dtype=np.float64)
    if theta.shape != accuracy.shape or theta.ndim != 1:
        raise CatError("reference abilities and accuracies must be two vectors of one length")
    usable = np.isfinite(theta) & np.isfinite(accuracy)
    if not usable.any():
        return 0.0
    prob = expected_share(params, theta[usable])
    if observed is None:
        expected = prob.mean(axis=1)
    else:
        mask = np.asarray(observed, dtype=bool)[usable]
        expected = (prob * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1)
    return float(np.mean(expected - accuracy[usable]))
