"""How unlike the references a model is, read from its own answers, and the interval
that widens with it.

Two predictions are made from the same answers: the design's and a companion that reads
them another way. A reference design (mixture, low-rank, bifactor, MIRT) predicts from
the references' answer patterns and cannot go far past the lowest or highest of them;
its companion is the IRT plug-in, which extrapolates along θ. The IRT design's companion
is the mixture. For a model like the references the two agree; for one beyond them or
unlike any of them they part (on the shared ARC matrix with 30 references, models below
every reference were overpredicted by the mixture by 5–15 points where the plug-in of
the same answers was within 3).

The interval is normalised split-conformal (Papadopoulos, Gammerman & Vovk 2008;
Lei et al. 2018, "Distribution-free predictive inference for regression", §5.2): each
reference's cross-fitted absolute error is divided by its own disagreement plus an
offset (the references' median disagreement), the 90% conformal quantile q of those
ratios is taken, and a model's half-width is q·(its disagreement + offset). A model
whose two predictions agree gets about the references' typical width, one whose
predictions part gets a wider one, in proportion.

A model is called unlike the references when its disagreement exceeds the 90% conformal
quantile of theirs: a model exchangeable with them is flagged at most one time in ten.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from cat.prediction.conformal import conformal_quantile, describe_widening
from irt.types import FloatArray
from itempool.prediction_errors import PredictionErrors

#: The least offset (accuracy): a pool whose references' two predictions all agree
#: exactly would otherwise divide by zero.
MIN_OFFSET = 1e-3
#: The fewest references whose disagreements can set a width and a flag.
MIN_REFERENCES = 5


@dataclass(frozen=True)
class ScaledWidth:
    """The 90% half-width as a function of a model's disagreement."""

    quantile: float  # the conformal quantile of |error| / (disagreement + offset)
    offset: float  # the references' median disagreement (at least MIN_OFFSET)
    threshold: float  # above it a model is unlike the references
    references: int

    @classmethod
    def fit(cls, abs_errors: FloatArray, disagreement: FloatArray) -> ScaledWidth | None:
        """From the references' cross-fitted absolute errors and disagreements (aligned);
        None where fewer than ``MIN_REFERENCES`` have both."""
        errors = np.abs(np.asarray(abs_errors, dtype=np.float64))
        spread = np.asarray(disagreement, dtype=np.float64)
        if errors.shape != spread.shape:
            raise ValueError("each reference needs one error and one disagreement")
        keep = np.isfinite(errors) & np.isfinite(spread)
        if keep.sum() < MIN_REFERENCES:
            return None
        errors, spread = errors[keep], spread[keep]
        offset = max(float(np.median(spread)), MIN_OFFSET)
        return cls(
            quantile=conformal_quantile(errors / (spread + offset)),
            offset=offset,
            threshold=conformal_quantile(spread),
            references=int(keep.sum()),
        )

    def half_width(self, disagreement: FloatArray | float) -> FloatArray:
        """The 90% half-width of models with these disagreements."""
        return np.asarray(self.quantile * (np.asarray(disagreement) + self.offset))

    def unlike(self, disagreement: float) -> bool:
        """Whether a model with this disagreement is unlike the references."""
        return bool(disagreement > self.threshold)


def scaled_width(errors: PredictionErrors, length: int) -> tuple[int, ScaledWidth | None]:
    """(the stored length nearest to ``length``, the width as a function of disagreement
    there); None where the pool stores no disagreements (calibrated before them) or too
    few."""
    stored = errors.nearest_length(length)
    spread = (errors.disagreement or {}).get(str(stored))
    if spread is None:
        return stored, None
    signed = np.asarray(errors.errors[str(stored)], dtype=np.float64)
    return stored, ScaledWidth.fit(np.abs(signed), np.asarray(spread, dtype=np.float64))


def describe_scaled(
    errors: PredictionErrors, length: int, scaled: ScaledWidth, disagreement: float
) -> dict[str, Any]:
    """What ``cat assess`` records about an interval scaled by the model's disagreement:
    ``describe_widening``'s record with the scaled half-width."""
    described = describe_widening(errors, length)
    described.update(
        method=(
            "widened to the references' cross-fitted errors, scaled by how far the "
            f"prediction lies from its companion's ({errors.method})"
        ),
        references=scaled.references,
        half_width=float(scaled.half_width(disagreement)),
    )
    return described
