"""The reference designs' models of one set of references: their answers, for the
mixture, their low-rank fit and, for a multidimensional pool, their bifactor fit; each
design's predictor for any item set and its replay
(``cat validate`` and ``cat calibrate``'s cross-fit use both, ``cat assess`` the state
of one design in ``cat.designs.session_state``)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np

from cat.designs.low_rank import LowRankModel, LowRankTest, low_rank_accuracy
from cat.designs.mixture import MixtureTest, mixture_accuracy
from cat.designs.multidimensional import MultidimensionalTest
from cat.designs.references import reference_answers
from cat.designs.replay import ReferenceTest, replay_reference_test
from cat.engine.registry import DEFAULT_CRITERION, REFERENCE_DESIGNS, CriterionName, DesignName
from cat.errors import CatError
from irt.errors import ConvergenceWarning
from irt.exploratory.low_rank import LowRankCalibrator
from irt.mirt_model import GENERAL_FACTOR, MirtParams, Structure
from irt.responses import ResponseMatrix
from irt.types import BoolArray, FloatArray, IntArray

__all__ = [
    "BIFACTOR",
    "LOW_RANK",
    "MIRT",
    "MIXTURE",
    "REFERENCE_DESIGNS",
    "ReferenceModels",
    "low_rank_dims",
    "multidimensional_design",
]

#: The reference designs, each a policy scored by its own predictor of the same name.
MIXTURE, LOW_RANK = DesignName.MIXTURE.value, DesignName.LOW_RANK.value
BIFACTOR, MIRT = DesignName.BIFACTOR.value, DesignName.MIRT.value


def multidimensional_design(params: MirtParams) -> str:
    """The design a multidimensional model runs: "bifactor" for a bifactor model (cat
    calibrate --model bifactor), "mirt" for any other structure."""
    return BIFACTOR if params.structure is Structure.BIFACTOR else MIRT


def low_rank_dims(n_references: int) -> int:
    """Factors for a low-rank fit on ``n_references``: about one per 30 references, 1 to 8.

    A factor costs one parameter per reference; with ~30 references (MMLU-Pro) a second
    factor fits noise, with hundreds (ARC) eight still pay (the DESIGN.md prototype)."""
    return int(np.clip(n_references // 30, 1, 8))


#: The low-rank fit's L2 penalty (``irt.exploratory.low_rank``), recorded with a stored fit.
LOW_RANK_PENALTY = 1.0


@dataclass(frozen=True)
class ReferenceModels:
    """The training subjects' answers (N, J), their low-rank model and, when asked for,
    the bifactor model (``mirt``, in the low-rank design's form)."""

    answers: FloatArray
    low_rank: LowRankModel
    mirt: LowRankModel | None = None
    # Each item's factor, for the profile criterion (a model whose every item loads on
    # one factor).
    scenario: IntArray | None = None
    # The general factor's column, for the general criterion (a bifactor model).
    general: int | None = None
    # How the multidimensional design picks items (None: the design's default).
    criterion: CriterionName | None = None
    # Which design ``mirt`` serves ("bifactor" or "mirt"), the name of its predictor.
    multidimensional: str | None = None

    @classmethod
    def fit(cls, train: ResponseMatrix, dims: int | None = None) -> ReferenceModels:
        """The mixture's and the low-rank model from the training subjects ``train``;
        ``dims`` by default from their number (``low_rank_dims``)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            k = dims or low_rank_dims(train.n_subjects)
            fit = LowRankCalibrator(dims=k, penalty=LOW_RANK_PENALTY).fit(train)
        return cls(
            reference_answers(train.values, train.observed),
            LowRankModel.from_fit(fit.person_, fit.loadings_, fit.intercepts_),
        )

    def with_mirt(
        self,
        params: MirtParams,
        offset: float = 0.0,
        criterion: CriterionName | str | None = None,
    ) -> ReferenceModels:
        """The same models and, for the bifactor or mirt design, the multidimensional
        ``params`` (predictions less ``offset`` per unasked item), choosing items by
        ``criterion`` (the design's default when None)."""
        if params.structure is Structure.BIFACTOR:
            # Its items' specific factors are the scenarios.
            specific = params.pattern[:, 1:]
            scenario = np.argmax(specific, axis=1) if specific.any(axis=1).all() else None
        else:
            simple = params.pattern.sum(axis=1) == 1
            scenario = np.argmax(params.pattern, axis=1) if simple.all() else None
        general = params.factors.index(GENERAL_FACTOR) if GENERAL_FACTOR in params.factors else None
        return replace(
            self,
            mirt=LowRankModel.from_mirt(params, offset),
            scenario=scenario,
            general=general,
            criterion=None if criterion is None else CriterionName(criterion),
            multidimensional=multidimensional_design(params),
        )

    def test(self, design: str, can_answer: BoolArray, max_items: int) -> ReferenceTest:
        """A fresh state of the reference ``design`` for the examinees of ``can_answer``."""
        if design == MIXTURE:
            return MixtureTest(self.answers, can_answer)
        if design == LOW_RANK:
            return LowRankTest(self.low_rank, can_answer, max_items)
        if design in (BIFACTOR, MIRT):
            if self.mirt is None:
                raise CatError(f"the {design} design needs the pool's multidimensional model")
            criterion = self.criterion or DEFAULT_CRITERION
            return MultidimensionalTest(
                self.mirt, can_answer, max_items, criterion, self.scenario, self.general
            )
        raise CatError(f"unknown reference design {design!r}")

    def mixture(self, can_answer: BoolArray, given: BoolArray, right: FloatArray) -> FloatArray:
        """The mixture's predicted accuracy alone (``score``'s first), for E examinees
        given the items ``given`` (E, J) with answers ``right`` (E, J)."""
        return mixture_accuracy(self.answers, can_answer, given, right)

    def score(
        self, can_answer: BoolArray, given: BoolArray, right: FloatArray
    ) -> dict[str, FloatArray]:
        """Each reference predictor's accuracy for E examinees given the items ``given``
        (E, J) with answers ``right`` (E, J), whatever chose them: the mixture, the
        low-rank model and, when there is one, the multidimensional model."""
        out = {
            MIXTURE: self.mixture(can_answer, given, right),
            LOW_RANK: low_rank_accuracy(self.low_rank, can_answer, given, right),
        }
        if self.mirt is not None and self.multidimensional is not None:
            out[self.multidimensional] = low_rank_accuracy(self.mirt, can_answer, given, right)
        return out

    def replay(
        self,
        design: str,
        can_answer: BoolArray,
        right: FloatArray,
        lengths: list[int],
        gains: dict[int, FloatArray] | None = None,
        expectations: dict[int, tuple[BoolArray, FloatArray]] | None = None,
        slopes: dict[int, FloatArray] | None = None,
    ) -> dict[int, FloatArray]:
        """The predicted accuracy at each of ``lengths`` when the reference ``design``
        chooses the items, answered from ``right`` (E, J); ``gains`` and ``slopes``
        receive each length's difficulty gain and slope check
        (``cat.designs.replay.replay_reference_test``)."""
        test = self.test(design, can_answer, max(lengths))
        out, _ = replay_reference_test(
            test, right, lengths, gains=gains, expectations=expectations, slopes=slopes
        )
        return out
