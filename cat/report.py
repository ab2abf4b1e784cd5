"""The end of an assessment: θ with its interval, predicted full-pool accuracy, rank.

The accuracy interval here propagates θ's uncertainty only; the prototype in DESIGN.md
measured that such intervals cover less and less as tests grow (model misfit dominates),
and ``cat validate`` measures their real coverage. Calibrated (conformal) intervals are
the next step of issue 3.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import norm

from cat.session import AssessmentSession
from irt.models import probability

_Z90 = float(norm.ppf(0.95))


@dataclass(frozen=True)
class Reference:
    """A calibration subject new models are ranked against."""

    subject_id: str
    theta: float
    se: float
    accuracy: float | None = None


def _expected_accuracy(session: AssessmentSession, theta: float, items: np.ndarray) -> float:
    """(right answers on the given items + Σ P_j(θ) over the others) / |items|."""
    index = {item: j for j, item in enumerate(session.params.item_ids)}
    given = {index[i]: r for i, r in zip(session.given, session.responses, strict=True)}
    prob = probability([theta], session.params)[0]
    total = sum(given[j] if j in given else prob[j] for j in items)
    return float(total / max(len(items), 1))


def summarize(
    session: AssessmentSession,
    references: list[Reference] | None = None,
    scenario_names: list[str] | None = None,
) -> dict[str, Any]:
    """θ, SE and its 90% interval, predicted accuracy (overall and per scenario) with the
    interval that θ's uncertainty implies, and the rank among ``references`` with the
    probability of being above each."""
    theta, se = session.theta, session.se
    lo, hi = theta - _Z90 * se, theta + _Z90 * se
    everything = np.arange(session.params.n_items)

    def accuracy(items: np.ndarray) -> dict[str, float]:
        # Expected accuracy is increasing in θ, so θ's interval maps to the accuracy's.
        return {
            "value": _expected_accuracy(session, theta, items),
            "low": _expected_accuracy(session, lo, items),
            "high": _expected_accuracy(session, hi, items),
        }

    out: dict[str, Any] = {
        "theta": theta,
        "se": se,
        "theta_interval": {"low": lo, "high": hi, "level": 0.9},
        "n_items": len(session.given),
        "n_skipped": len(session.skipped),
        "stop_reason": session.stop_reason,
        "predicted_accuracy": accuracy(everything),
    }
    if session.scenario is not None:
        codes = np.asarray(session.scenario)
        names = scenario_names or [str(k) for k in range(int(codes.max()) + 1)]
        out["scenarios"] = {
            names[k]: {
                **accuracy(np.flatnonzero(codes == k)),
                "n_given": sum(
                    1 for i in session.given if codes[session.params.item_ids.index(i)] == k
                ),
            }
            for k in range(len(names))
            if (codes == k).any()
        }
    if references:
        out["rank"] = _rank(theta, se, references)
    return out


def _rank(theta: float, se: float, references: list[Reference]) -> dict[str, Any]:
    thetas = np.array([r.theta for r in references])
    spread = np.sqrt(se**2 + np.array([r.se for r in references]) ** 2)
    p_above = norm.cdf((theta - thetas) / np.maximum(spread, 1e-12))
    return {
        "position": int((thetas > theta).sum()) + 1,
        "of": len(references) + 1,
        "above": [
            {"subject_id": r.subject_id, "theta": r.theta, "p_above": float(p)}
            for r, p in sorted(zip(references, p_above, strict=True), key=lambda x: -x[0].theta)
        ],
    }
