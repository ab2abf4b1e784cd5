"""Held-out subjects' predictions of one ``cat validate`` row and their figures."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from irt.types import FloatArray, IntArray


def holds(low: Any, high: Any, truth: Any) -> Any:
    """Whether [low, high] holds ``truth`` (broadcast), with a hair of slack: a bound
    equal to the truth up to rounding holds it."""
    return (np.asarray(low) - 1e-12 <= truth) & (truth <= np.asarray(high) + 1e-12)


@dataclass(frozen=True)
class Predictions:
    """Held-out subjects' predicted and true full-pool accuracy for one policy, length
    and predictor, with 90% intervals; (R, E) arrays, R the repeats of a random row."""

    policy: str
    length: int
    predictor: str  # "plug-in", "ridge", "chosen" or "raw"
    subject: IntArray  # rows of the response matrix
    predicted: FloatArray  # (R, E)
    truth: FloatArray  # (E,)
    half_width: FloatArray  # (R, E): training-only conformal (random-raw: sampling)
    low: FloatArray  # (R, E), of the 90% interval (the default's: θ-only widened)
    high: FloatArray  # (R, E)
    theta_low: FloatArray | None = None  # (R, E), the θ-only interval of a plug-in row
    theta_high: FloatArray | None = None
    # Rows that predict per scenario (the designs and the default), (E, S): predicted and
    # true accuracy per scenario and the training-only half-width (nan: not defined).
    scenario_predicted: FloatArray | None = None
    scenario_truth: FloatArray | None = None
    scenario_half_width: FloatArray | None = None

    @classmethod
    def joined(cls, pieces: list[Predictions]) -> Predictions:
        """One row from the held-out subjects of every split."""
        first = pieces[0]

        def cat(name: str, axis: int = -1) -> FloatArray | None:
            """The pieces' optional field ``name`` joined along the subject ``axis``: the
            last of (R, E) arrays, the first of (E, S) per-scenario ones."""
            arrays = [getattr(p, name) for p in pieces]
            if any(a is None for a in arrays):
                return None
            return np.concatenate(arrays, axis=axis)

        return cls(
            first.policy,
            first.length,
            first.predictor,
            np.concatenate([p.subject for p in pieces]),
            np.concatenate([p.predicted for p in pieces], axis=1),
            np.concatenate([p.truth for p in pieces]),
            np.concatenate([p.half_width for p in pieces], axis=1),
            np.concatenate([p.low for p in pieces], axis=1),
            np.concatenate([p.high for p in pieces], axis=1),
            cat("theta_low"),
            cat("theta_high"),
            cat("scenario_predicted", axis=0),
            cat("scenario_truth", axis=0),
            cat("scenario_half_width", axis=0),
        )

    def _covered(self, low: FloatArray, high: FloatArray) -> FloatArray:
        return np.asarray(holds(low, high, self.truth).mean(axis=1), dtype=np.float64)

    def metrics(self) -> dict[str, Any]:
        """Each figure averaged over the repeats, with its sd over them (None with one).

        A rank correlation that no repeat defines (fewer than 3 subjects, or truths or
        predictions all equal) is None, with why in ``null_reasons``; never NaN."""
        # Here, not at the top: scipy.stats takes a second to import, which cat assess
        # (importing this module through the cross-fit) would pay at every start.
        from scipy.stats import kendalltau, spearmanr

        rows = []
        for pred in self.predicted:
            err = pred - self.truth
            # Only where an order exists: scipy would return NaN, with a warning.
            ranked = _rankable(self.truth, pred)
            rows.append(
                (
                    kendalltau(self.truth, pred)[0] if ranked else np.nan,
                    spearmanr(self.truth, pred)[0] if ranked else np.nan,
                    np.mean(np.abs(err)),
                    np.sqrt(np.mean(err**2)),
                )
            )
        table = np.array(rows, dtype=float)
        tau, rho = _mean(table[:, 0]), _mean(table[:, 1])
        # Always defined: a NaN here is kept, for the report to refuse (refuse_nan).
        mae, rmse = float(np.mean(table[:, 2])), float(np.mean(table[:, 3]))
        coverage = self._covered(self.low, self.high)
        repeats = len(self.predicted)

        def sd(values: FloatArray) -> float | None:
            finite = values[np.isfinite(values)]
            return float(np.std(finite, ddof=1)) if repeats > 1 and finite.size > 1 else None

        undefined = [k for k, value in (("kendall_tau", tau), ("spearman", rho)) if value is None]
        why = _unranked(self.truth, self.predicted) if undefined else ""
        return {
            "policy": self.policy,
            "length": self.length,
            "predictor": self.predictor,
            "n_subjects": len(self.truth),
            "repeats": repeats,
            "kendall_tau": tau,
            "kendall_tau_sd": sd(table[:, 0]),
            "spearman": rho,
            "mae": mae,
            "mae_sd": sd(table[:, 2]),
            "rmse": rmse,
            "coverage": float(coverage.mean()),
            "coverage_sd": sd(coverage),
            "null_reasons": dict.fromkeys(undefined, why) or None,
            "mean_interval_width": float(np.mean(self.high - self.low)),
            "coverage_theta_only": (
                float(self._covered(self.theta_low, self.theta_high).mean())
                if self.theta_low is not None and self.theta_high is not None
                else None
            ),
            "mean_interval_width_theta_only": (
                float(np.mean(self.theta_high - self.theta_low))
                if self.theta_low is not None and self.theta_high is not None
                else None
            ),
            **self._scenario_metrics(),
        }

    def _scenario_metrics(self) -> dict[str, Any]:
        """Per scenario: the coverage of prediction ± training-only half-width and the
        MAE over the subjects where both are defined; their means over scenarios."""
        pred, truth, half = self.scenario_predicted, self.scenario_truth, self.scenario_half_width
        if pred is None or truth is None or half is None:
            return {}
        err = np.abs(pred - truth)
        defined = np.isfinite(err) & np.isfinite(half)
        n = defined.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            coverage = np.where(n > 0, ((err <= half + 1e-12) & defined).sum(axis=0) / n, np.nan)
            mae = np.where(n > 0, np.where(defined, err, 0.0).sum(axis=0) / n, np.nan)
        return {
            "scenario_coverage": [None if np.isnan(c) else float(c) for c in coverage],
            "scenario_coverage_mean": _nanmean(coverage),
            "scenario_coverage_min": None
            if np.isnan(coverage).all()
            else float(np.nanmin(coverage)),
            "scenario_mae": [None if np.isnan(m) else float(m) for m in mae],
            "scenario_mae_mean": _nanmean(mae),
        }


def _nanmean(values: FloatArray) -> float | None:
    return None if np.isnan(values).all() else float(np.nanmean(values))


def _mean(values: FloatArray) -> float | None:
    """The mean over the repeats that define the figure; None when none does."""
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if defined.size else None


def _rankable(truth: FloatArray, predicted: FloatArray) -> bool:
    """Whether a rank correlation of ``predicted`` with ``truth`` is defined: 3 or more
    subjects, and neither all equal (nor any NaN)."""
    return (
        len(truth) > 2
        and bool(np.isfinite(truth).all() and np.isfinite(predicted).all())
        and float(np.ptp(truth)) > 0
        and float(np.ptp(predicted)) > 0
    )


def _unranked(truth: FloatArray, predicted: FloatArray) -> str:
    """Why no repeat's rank correlation is defined (``_rankable``)."""
    if len(truth) <= 2:
        return f"{len(truth)} held-out subject(s): a rank correlation needs at least 3"
    if not np.isfinite(truth).all() or not np.isfinite(predicted).all():
        return "a prediction or a subject's accuracy is not a number"
    if float(np.ptp(truth)) == 0:
        return "every held-out subject has the same accuracy: there is no order to match"
    return "the predictions are all equal: they give no order"
