"""The bifactor model's parameters, priors and item groups.

Every item loads on a general factor G and on at most one specific factor S_k (its
group); all factors are independent N(0, 1). With a lower asymptote ``c`` (bifactor
3PL; the 2PL without):

    P(x_ij = 1) = c_j + (1 − c_j)·σ(aG_j·G_i + aS_j·S_ik + d_j)     (slope–intercept)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

from irt.errors import IRTError
from irt.mirt_model import GENERAL_FACTOR, MirtParams, Structure
from irt.parameter_set import BinaryItems, item_positions
from irt.priors import beta_log_kernel, check_normal_beta
from irt.types import FloatArray, IntArray

#: The group code of an item that loads on the general factor only.
GENERAL_ONLY = -1


@dataclass(frozen=True)
class BifactorParams(BinaryItems):
    """Per item: the general slope, the specific slope (0 for a general-only item), the
    intercept, the group (``GENERAL_ONLY`` or 0..K-1, naming ``groups[k]``) and, in the
    3PL, the lower asymptote ``c`` (None in the 2PL).

    A ``irt.ParameterSet`` on D = 1 + K dimensions, θ (T, D) in ``to_mirt``'s factor
    order (general, then the groups); its answers are those of ``to_mirt()``."""

    family: ClassVar[Literal["bifactor"]] = "bifactor"
    scored: ClassVar[Literal[False]] = False

    item_ids: tuple[str, ...]
    a_general: FloatArray
    a_specific: FloatArray
    d: FloatArray
    group: IntArray
    groups: tuple[str, ...]
    c: FloatArray | None = None

    def __post_init__(self) -> None:
        n = len(self.item_ids)
        for name in ("a_general", "a_specific", "d", "group"):
            if np.shape(getattr(self, name)) != (n,):
                raise IRTError(f"bifactor {name} must have one value per item ({n})")
        if self.c is not None and (
            np.shape(self.c) != (n,) or np.any(self.c < 0) or np.any(self.c >= 1)
        ):
            raise IRTError(f"bifactor c must have one value in [0, 1) per item ({n})")
        if np.any(self.group < GENERAL_ONLY) or np.any(self.group >= len(self.groups)):
            raise IRTError("bifactor group codes must be -1 (general only) or name a group")

    @property
    def n_dimensions(self) -> int:
        return 1 + len(self.groups)

    @property
    def item_types(self) -> tuple[str, ...]:
        """ "3PL" for every item with a lower asymptote, "2PL" without, (J,)."""
        return ("2PL" if self.c is None else "3PL",) * self.n_items

    def probabilities(self, theta: object) -> FloatArray:
        return self.to_mirt().probabilities(theta)

    def expected_score(self, theta: object) -> FloatArray:
        return self.to_mirt().expected_score(theta)

    def variance(self, theta: object) -> FloatArray:
        return self.to_mirt().variance(theta)

    def information(self, theta: object) -> FloatArray:
        return self.to_mirt().information(theta)

    def test_information(self, theta: object) -> FloatArray:
        return self.to_mirt().test_information(theta)

    def log_likelihood(self, theta: object, responses: object) -> FloatArray:
        return self.to_mirt().log_likelihood(theta, responses)

    def draw(self, theta: object, items: object, rng: np.random.Generator) -> FloatArray:
        return self.to_mirt().draw(theta, items, rng)

    def person_fit(self, theta: object, items: object, responses: object) -> float:
        return self.to_mirt().person_fit(theta, items, responses)

    def subset(self, items: object) -> BifactorParams:
        """The items selected by ids or a numpy index; every group is kept (a group may
        be left with fewer items, or none)."""
        idx = item_positions(self.item_ids, items)
        return BifactorParams(
            item_ids=tuple(self.item_ids[k] for k in idx),
            a_general=self.a_general[idx],
            a_specific=self.a_specific[idx],
            d=self.d[idx],
            group=self.group[idx],
            groups=self.groups,
            c=None if self.c is None else self.c[idx],
        )

    def logits(self, general: FloatArray, specific: FloatArray) -> FloatArray:
        """aG·G + aS·S + d for each item at its own specific factor: ``general`` and
        ``specific`` (..., n_items) broadcast."""
        return np.asarray(self.a_general * general + self.a_specific * specific + self.d)

    def probability(self, general: FloatArray, specific: FloatArray) -> FloatArray:
        """P(right) for each item at its own specific factor (as ``logits``)."""
        sigma = 1.0 / (1.0 + np.exp(-self.logits(general, specific)))
        return sigma if self.c is None else self.c + (1.0 - self.c) * sigma

    def to_mirt(self) -> MirtParams:
        """The same model in the compensatory form: factors ("general", *groups), the
        general slope in column 0 and each item's specific slope in its group's column."""
        n, k = self.n_items, len(self.groups)
        slopes = np.zeros((n, 1 + k))
        pattern = np.zeros((n, 1 + k), dtype=bool)
        slopes[:, 0], pattern[:, 0] = self.a_general, True
        loaded = np.flatnonzero(self.group >= 0)
        slopes[loaded, 1 + self.group[loaded]] = self.a_specific[loaded]
        pattern[loaded, 1 + self.group[loaded]] = True
        return MirtParams(
            item_ids=self.item_ids,
            slopes=slopes,
            d=np.asarray(self.d, dtype=float),
            factors=(GENERAL_FACTOR, *self.groups),
            correlation=np.eye(1 + k),
            pattern=pattern,
            structure=Structure.BIFACTOR,
            c=self.c,
        )


@dataclass(frozen=True)
class BifactorPriors:
    """Normal priors on each item's general slope, specific slope and intercept, and a
    Beta prior on its lower asymptote in the 3PL: a Bayes-modal fit. With tens of
    subjects (LLM leaderboards) the slopes of items that nearly everyone answers alike
    are not identified without them; R mirt's ``bfactor`` uses none by default, and
    neither does ``BifactorCalibrator`` unless given these."""

    a_general_mean: float = 1.0
    a_general_sd: float = 1.0
    a_specific_sd: float = 0.5
    d_sd: float = 3.0
    # c ~ Beta(c_alpha, c_beta) in the 3PL: mode (α − 1)/(α + β − 2) = 0.125.
    c_alpha: float = 3.0
    c_beta: float = 15.0

    def __post_init__(self) -> None:
        check_normal_beta(self, ("a_general_sd", "a_specific_sd", "d_sd"), "the bifactor prior's")

    def center_and_precision(self, specific: bool) -> tuple[FloatArray, FloatArray]:
        """Prior means and precisions of (aG, aS, d), or (aG, d) for a general-only item."""
        if specific:
            sds = np.array([self.a_general_sd, self.a_specific_sd, self.d_sd])
            return np.array([self.a_general_mean, 0.0, 0.0]), sds**-2.0
        sds = np.array([self.a_general_sd, self.d_sd])
        return np.array([self.a_general_mean, 0.0]), sds**-2.0

    def log_density(self, params: BifactorParams) -> float:
        """The log prior of ``params`` (up to a constant)."""
        loaded = params.group >= 0
        out = -0.5 * float(
            np.sum(((params.a_general - self.a_general_mean) / self.a_general_sd) ** 2)
            + np.sum((params.a_specific[loaded] / self.a_specific_sd) ** 2)
            + np.sum((params.d / self.d_sd) ** 2)
        )
        if params.c is not None:
            out += float(np.sum(beta_log_kernel(params.c, self.c_alpha, self.c_beta)))
        return out


def group_codes(
    labels: Sequence[str | None], min_items: int = 2
) -> tuple[IntArray, tuple[str, ...]]:
    """Group codes 0..K-1 (in order of first appearance) from one label per item; an
    empty or None label is ``GENERAL_ONLY``. A group needs ``min_items`` items: a
    specific factor on one item is not identified."""
    names: dict[str, int] = {}
    codes = np.full(len(labels), GENERAL_ONLY, dtype=np.int_)
    for j, label in enumerate(labels):
        if label is None or label == "":
            continue
        codes[j] = names.setdefault(str(label), len(names))
    if GENERAL_FACTOR in names:
        raise IRTError(
            f"a specific factor cannot be named {GENERAL_FACTOR!r}: that is the general one"
        )
    counts = np.bincount(codes[codes >= 0], minlength=len(names))
    small = [name for name, k in names.items() if counts[k] < min_items]
    if small:
        raise IRTError(
            f"each specific factor needs at least {min_items} items; "
            f"{', '.join(repr(s) for s in small[:5])} {'has' if len(small) == 1 else 'have'} fewer"
        )
    return codes, tuple(names)
