"""The report's profile plot: the predicted accuracy in each scenario with its 90%
interval beside the overall prediction, and, for a multidimensional pool, each specific
factor's score with its 90% band (``cat.assessment.profile``)."""

from __future__ import annotations

from matplotlib.figure import Figure

from cat.assessment.result import AssessmentResult

_Z90 = 1.645
_COLOUR = "#d95f02"
_OVERALL = "#4c6a92"


def profile_figure(result: AssessmentResult) -> Figure | None:
    """The figure, or None when the result has no per-scenario predictions."""
    scenarios = result.scenarios or {}
    if not scenarios:
        return None
    names = list(scenarios)
    factors = {} if result.profile is None else {f.factor: f for f in result.profile.factors}
    with_factors = any(name in factors for name in names)
    height = 1.2 + 0.32 * len(names)
    fig = Figure(figsize=(7.5, height))
    axes = fig.subplots(1, 2 if with_factors else 1, sharey=True, squeeze=False)[0]
    rows = list(range(len(names)))[::-1]  # the first scenario at the top
    acc = axes[0]
    values = [scenarios[n].value for n in names]
    lows = [scenarios[n].value - scenarios[n].low for n in names]
    highs = [scenarios[n].high - scenarios[n].value for n in names]
    acc.errorbar(values, rows, xerr=[lows, highs], fmt="o", color=_COLOUR, capsize=3)
    overall = result.predicted_accuracy.value
    acc.axvline(overall, color=_OVERALL, linestyle="--", linewidth=1)
    acc.set_yticks(rows, labels=names)
    what = "score" if result.pool.scored else "accuracy"
    acc.set_xlabel(f"predicted {what} (dashed: overall {overall:.3f})")
    acc.set_xlim(0.0, 1.0)
    if with_factors:
        spec = axes[1]
        shown = [(r, factors[n]) for r, n in zip(rows, names, strict=True) if n in factors]
        spec.errorbar(
            [f.score for _, f in shown],
            [r for r, _ in shown],
            xerr=[_Z90 * f.sd for _, f in shown],
            fmt="s",
            color=_OVERALL,
            capsize=3,
        )
        spec.axvline(0.0, color="0.6", linewidth=1)
        kind = (
            "specific factor" if result.profile and result.profile.model == "bifactor" else "factor"
        )
        spec.set_xlabel(f"{kind} score (90% band; 0: the references' mean)")
    fig.tight_layout()
    return fig
