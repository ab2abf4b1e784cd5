"""COMPARE.json from a finished comparison: the decision, Δ̂ with its interval and how it
was made, the smallest detectable difference, each model's side, the shared items."""

from __future__ import annotations

import numpy as np

from cat.assessment.result import ProtocolUse, Usage
from cat.comparison.context import PoolContext
from cat.comparison.interval import detectable_difference, paired_mean
from cat.comparison.plugin import A_BETTER, B_BETTER, Difference, ModelAccuracy
from cat.comparison.predictors import IRT
from cat.comparison.result import (
    CompareItem,
    CompareResult,
    CompareRunSettings,
    Decision,
    Detectable,
    DifferenceInterval,
    ModelSide,
    PredictedAccuracy,
    SharedItems,
    TruthDifference,
)
from cat.comparison.settings import CompareSettings
from cat.provenance import utc_now


def assemble(
    context: PoolContext,
    settings: CompareRunSettings,
    predictor: str,
    source: str,
    d: Difference,
    decision: str,
    stop_reason: str | None,
    sides: tuple[ModelSide, ModelSide],
    differences: list[float],
    n_skipped: int,
    items: list[CompareItem],
) -> CompareResult:
    """COMPARE.json from the final difference, the two sides and the shared answers."""
    level = settings.level
    what = "the IRT plug-in" if predictor == IRT else "the reference mixture"
    if d.stored is not None:
        lengths = sorted(set(d.stored.lengths))
        scaled = ""
        if d.disagreements is not None:
            scaled = (
                ", scaled by the two models' disagreements where one is unlike the "
                "references and that is wider"
            ) + (" (it is)" if d.stored.scaled else " (not here)")
        method = (
            "the wider of the posterior half-width and the conformal half-width of the "
            f"references' cross-fitted errors of pairs, of {what} ({d.stored.references} "
            f"references, {', '.join(map(str, lengths))} items){scaled}"
        )
    else:
        why = "nothing was answered" if d.n == 0 else "the pool stores no cross-fitted errors"
        method = (
            f"posterior only ({why}: cat calibrate --pool --cross-fit stores them); θ's "
            "uncertainty alone is too narrow for real models, whose answers one θ does not hold"
        )
    if d.paired is not None:
        method += "; joined with the shared items' paired interval (both must exclude 0)"
    mean, low, high = paired_mean(np.asarray(differences), level)
    truths = (sides[0].truth, sides[1].truth)
    truth = None
    if truths[0] is not None and truths[1] is not None:
        truth = TruthDifference(a=truths[0], b=truths[1], difference=truths[0] - truths[1])
    better = {A_BETTER: sides[0].model, B_BETTER: sides[1].model}.get(decision)
    return CompareResult(
        source="adaptive" if source == "adaptive" else "results",
        model_a=sides[0].model,
        model_b=sides[1].model,
        pool=context.reference(),
        settings=settings,
        decision=_decision(decision),
        better=better,
        stop_reason=stop_reason,
        difference=DifferenceInterval(
            value=d.value,
            low=d.low,
            high=d.high,
            predictor=predictor,
            level=level,
            look_level=settings.look_level,
            stored_level=settings.stored_level,
            looks=list(settings.look_lengths()),
            half_width=d.half_width,
            posterior_half_width=d.posterior,
            method=method,
            stored_half_width=None if d.stored is None else d.stored.half_width,
            stored_lengths=None if d.stored is None else list(d.stored.lengths),
            references=None if d.stored is None else d.stored.references,
            scale=None if d.stored is None else d.stored.scale,
            disagreement_a=None if d.disagreements is None else d.disagreements[0],
            disagreement_b=None if d.disagreements is None else d.disagreements[1],
            widened=None if d.disagreements is None or d.stored is None else d.stored.scaled,
            paired_low=None if d.paired is None else d.paired[0],
            paired_high=None if d.paired is None else d.paired[1],
        ),
        detectable_difference=_detectable(d, settings),
        n_items=d.n,
        n_skipped=n_skipped,
        a=sides[0],
        b=sides[1],
        shared=SharedItems(
            n_items=len(differences),
            difference=mean if differences else None,
            low=low if differences else None,
            high=high if differences else None,
            level=level,
        ),
        truth=truth,
        items=items,
        created=utc_now(),
    )


def _detectable(d: Difference, settings: CompareSettings) -> Detectable:
    """The smallest difference found with 80% power: of the two parts of the interval,
    the one that binds, each at its own level."""
    parts = [(d.posterior, settings.look_level)]
    if d.stored is not None:
        parts.append((d.stored.half_width, settings.stored_level))
    value, level = max((detectable_difference(h, lv), lv) for h, lv in parts)
    return Detectable(value=value, power=0.8, level=level)


def side(
    name: str,
    accuracy: ModelAccuracy,
    n_items: int,
    level: float,
    context: PoolContext,
    truth: float | None = None,
    usage: dict[str, int] | None = None,
    result: str | None = None,
    protocol: ProtocolUse | None = None,
) -> ModelSide:
    """One model's side of COMPARE.json."""
    return ModelSide(
        model=name,
        theta=accuracy.theta,
        se=accuracy.se if np.isfinite(accuracy.se) else None,
        n_items=n_items,
        predicted_accuracy=PredictedAccuracy(
            value=accuracy.value, low=accuracy.low, high=accuracy.high, level=level
        ),
        truth=truth,
        usage=None if usage is None else Usage(**usage, pool_items=context.params.n_items),
        result=result,
        protocol=protocol,
    )


def _decision(value: str) -> Decision:
    if value == "A better":
        return "A better"
    if value == "B better":
        return "B better"
    if value == "equivalent":
        return "equivalent"
    return "inconclusive"
