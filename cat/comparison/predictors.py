"""Which prediction of each model's full-pool accuracy a comparison uses: the IRT plug-in
of ``cat assess``'s IRT design, or the reference mixture (``cat.designs.mixture``).

The interval of Δ̂ is mostly the misfit of the prediction, which the pool's cross-fitted
errors measure per design (``cat calibrate --pool --cross-fit``). On MMLU-Pro (31
references) the IRT plug-in's pair half-width is the narrower, on ARC (256 Mixtral-family
references) the mixture's, by half. "auto" takes the predictor whose 95% conformal
half-width of reference pairs at the test's maximum length is smaller, from the pool's
own references, as ``cat assess --design auto`` picks its design. The low-rank design is
left out: its errors were measured on the items its own criterion picks, and on items
picked for the difference they did not hold (in a replay of 80 held-out ARC pairs under
``benchmarks/bench_compare.py``'s protocol, 2 folds: its 95% interval held 0.875 of the
pairs at 250 items, the mixture's 0.975).

The mixture predicts from the answers alone, whatever chose the items; items are still
chosen by the IRT criterion of ``cat.comparison.criterion``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from cat.comparison.interval import LEVEL, pair_half_width
from cat.comparison.plugin import Terms
from cat.designs.mixture import MixtureTest
from cat.designs.references import reference_answers
from cat.errors import CatError
from irt.models import ItemParams
from irt.types import FloatArray
from itempool import LoadedPool, PoolFormatError, PredictionErrors, read_reference_answers

IRT, MIXTURE = "irt", "mixture"
#: ``cat.compare(predictor=...)``.
PredictorChoice = Literal["auto", "irt", "mixture"]
_PAIR = np.array([0, 1])


@dataclass(frozen=True)
class Predictor:
    """The prediction a comparison uses, its cross-fitted errors (None: the pool has
    none) and the references' answers (N, J) in the pool's order where the pool keeps
    them: the mixture predicts from them, and beside the IRT plug-in they make its
    companion (how unlike the references a model is, ``cat.prediction.disagreement``)."""

    name: str
    errors: PredictionErrors | None
    references: FloatArray | None = None


def choose_predictor(
    pool: LoadedPool, params: ItemParams, length: int, choice: str = "auto"
) -> Predictor:
    """The predictor ``choice`` names, or for "auto" the one of narrower pair half-width
    at ``length`` (the IRT plug-in where the pool stores no mixture errors or answers)."""
    if choice not in ("auto", IRT, MIXTURE):
        raise CatError(f"unknown predictor {choice!r}; choose from auto, {IRT}, {MIXTURE}")
    try:
        answers = read_reference_answers(pool.dir, params.item_ids)
    except PoolFormatError as exc:
        if choice == MIXTURE:
            raise CatError(str(exc)) from exc
        answers = None  # the plug-in goes without its companion
    references = None
    if answers is not None:
        references = reference_answers(answers.values, answers.observed)
    irt = Predictor(IRT, pool.manifest.prediction_errors, references)
    mixture_errors = (pool.manifest.design_errors or {}).get(MIXTURE)
    if choice == IRT or (choice == "auto" and (mixture_errors is None or irt.errors is None)):
        return irt
    if references is None:
        if choice == MIXTURE:
            raise CatError(
                f"pool {pool.dir} keeps no reference answers, which the mixture predicts "
                "from: recalibrate it with cat calibrate --pool"
            )
        return irt
    mixture = Predictor(MIXTURE, mixture_errors, references)
    if choice == MIXTURE or mixture_errors is None or irt.errors is None:
        return mixture
    narrower = pair_half_width(mixture_errors, length, length, LEVEL).half_width < (
        pair_half_width(irt.errors, length, length, LEVEL).half_width
    )
    return mixture if narrower else irt


class PairMixture:
    """The mixture's predictions of two models, A (row 0) and B (row 1), whose answers
    are recorded item by item: on the same items (``record``, ``skip``) or on their own
    (``record_one``)."""

    def __init__(self, references: FloatArray, n_items: int) -> None:
        self.test = MixtureTest(references, np.ones((2, n_items), dtype=bool))

    def record(self, position: int, answer_a: int, answer_b: int) -> None:
        self.test.record(
            _PAIR, np.array([position, position]), np.array([answer_a, answer_b], float)
        )

    def record_one(self, model: int, position: int, answer: float) -> None:
        self.test.record(np.array([model]), np.array([position]), np.array([answer]))

    def skip(self, position: int) -> None:
        """An item dropped for both: it leaves the items the prediction is over."""
        self.test.skip(_PAIR, np.array([position, position]))

    def terms(self) -> tuple[Terms, Terms]:
        """Each model's predicted accuracy and its sd under the mixture (the weighted sd
        of the references' number right on the unasked items, over the items)."""
        values = self.test.predicted_accuracy()
        sds = self.test.spread() / np.maximum(self.test.n_total, 1)
        a, b = (Terms(float(values[m]), 0.0, 0.0, float(sds[m])) for m in (0, 1))
        return a, b
