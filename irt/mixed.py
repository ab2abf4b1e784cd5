"""Mixed pools on one θ: discrete items (binary 2PL/3PL, graded, gpcm, sequential;
``irt.polytomous``) and continuous items (CRM, Beta; ``irt.continuous``) side by side.

A mixed pool is a discrete part and a continuous part, either of which may be absent.
Its items are always listed discrete part first, then continuous part, each part in its
own order (``item_ids``); an item id may not appear in both parts. The responses of a
mixed pool are the two parts' matrices over the same subjects, in the same order. The
calibrator is ``irt.mixed_em.MixedCalibrator``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal, Protocol

import numpy as np

from irt.continuous import ContinuousParams
from irt.continuous_responses import ContinuousResponses
from irt.errors import IRTError, ParamsError, ResponseDataError
from irt.parameter_set import item_positions
from irt.polytomous import PolytomousParams
from irt.polytomous_responses import PolytomousResponses
from irt.types import BoolArray, FloatArray

__all__ = ["MixedParams", "MixedResponses"]


def _check_disjoint(
    discrete: Sequence[str], continuous: Sequence[str], error: type[IRTError]
) -> None:
    both = set(discrete) & set(continuous)
    if both:
        first = next(i for i in continuous if i in both)
        raise error(
            f"item {first!r} is in both the discrete and the continuous part"
            + (f" (and {len(both) - 1} more)" if len(both) > 1 else "")
        )


class _Listed(Protocol):
    @property
    def item_ids(self) -> Sequence[str]: ...


class TwoParts:
    """The items of a mixed pool's two parts, each possibly None: the discrete ids, then
    the continuous ones (shared by ``MixedParams`` and ``MixedResponses``)."""

    discrete: _Listed | None
    continuous: _Listed | None

    @property
    def discrete_ids(self) -> tuple[str, ...]:
        return () if self.discrete is None else tuple(self.discrete.item_ids)

    @property
    def continuous_ids(self) -> tuple[str, ...]:
        return () if self.continuous is None else tuple(self.continuous.item_ids)

    @property
    def item_ids(self) -> tuple[str, ...]:
        """The discrete items, then the continuous ones."""
        return self.discrete_ids + self.continuous_ids

    @property
    def n_items(self) -> int:
        return len(self.discrete_ids) + len(self.continuous_ids)


@dataclass(frozen=True)
class MixedParams(TwoParts):
    """Parameters of a mixed pool: ``discrete`` (``PolytomousParams``) and
    ``continuous`` (``ContinuousParams``), either None but not both. ``item_ids`` lists
    the discrete items, then the continuous ones. A ``irt.ParameterSet``: each question
    is asked of both parts, and their answers are put side by side."""

    family: ClassVar[Literal["mixed"]] = "mixed"
    scored: ClassVar[Literal[True]] = True
    n_dimensions: ClassVar[int] = 1

    discrete: PolytomousParams | None = None
    continuous: ContinuousParams | None = None

    def __post_init__(self) -> None:
        if self.discrete is None and self.continuous is None:
            raise ParamsError("a mixed pool needs a discrete part, a continuous part or both")
        _check_disjoint(self.discrete_ids, self.continuous_ids, ParamsError)

    @classmethod
    def of(cls, params: PolytomousParams | ContinuousParams | MixedParams) -> MixedParams:
        """Any scored set on one θ as its discrete and continuous parts: ``params``
        itself if mixed, else a mixed set with ``params`` as its only part."""
        if params.family == "mixed":
            return params
        if params.family == "continuous":
            return cls(continuous=params)
        return cls(discrete=params)

    @property
    def is_continuous(self) -> BoolArray:
        """Whether each item (in ``item_ids`` order) is in the continuous part."""
        return np.array(
            [False] * len(self.discrete_ids) + [True] * len(self.continuous_ids), dtype=bool
        )

    @property
    def n_discrete(self) -> int:
        return len(self.discrete_ids)

    @property
    def max_scores(self) -> FloatArray:
        """Each item's top score, (J,): m_j for a discrete item, 1 for a continuous one."""
        top = [] if self.discrete is None else [self.discrete.max_scores.astype(np.float64)]
        return np.concatenate([*top, np.ones(len(self.continuous_ids))])

    @property
    def a(self) -> FloatArray:
        """Each item's slope, (J,)."""
        return np.concatenate([part.a for part in self._parts])

    @property
    def item_types(self) -> tuple[str, ...]:
        """Each item's model (``graded``, ``3pl``, ``crm``, ``beta``…), (J,)."""
        return tuple(str(t.value) for part in self._parts for t in part.item_types)

    def probabilities(self, theta: object) -> FloatArray:
        """Category probabilities, (T, J, max K), 0 beyond an item's categories; a
        continuous item's are (1 − E[x | θ], E[x | θ]) (``ContinuousParams``)."""
        parts = [part.probabilities(theta) for part in self._parts]
        width = max(p.shape[2] for p in parts)
        return np.concatenate(
            [np.pad(p, ((0, 0), (0, 0), (0, width - p.shape[2]))) for p in parts], axis=1
        )

    def expected_score(self, theta: object) -> FloatArray:
        """E[X_j | θ] on each item's own scale, (T, J)."""
        return np.hstack([part.expected_score(theta) for part in self._parts])

    def variance(self, theta: object) -> FloatArray:
        """Var[X_j | θ] on each item's own scale, (T, J)."""
        return np.hstack([part.variance(theta) for part in self._parts])

    def information(self, theta: object) -> FloatArray:
        """Item Fisher information, (T, J)."""
        return np.hstack([part.information(theta) for part in self._parts])

    def test_information(self, theta: object) -> FloatArray:
        """Σ_j I_j(θ), (T,)."""
        return np.asarray(self.information(theta).sum(axis=1))

    def log_likelihood(self, theta: object, responses: object) -> FloatArray:
        """Log-likelihood of each row of ``responses`` (T, J in ``item_ids`` order; NaN =
        missing) at its own θ, (T,): the discrete part's plus the continuous part's."""
        x = np.atleast_2d(np.asarray(responses, dtype=np.float64))
        if x.shape[1] != self.n_items:
            raise ParamsError(f"{x.shape[1]} response columns for {self.n_items} items")
        n = self.n_discrete
        total = np.zeros(x.shape[0])
        if self.discrete is not None:
            total = total + self.discrete.log_likelihood(theta, x[:, :n])
        if self.continuous is not None:
            total = total + self.continuous.log_likelihood(theta, x[:, n:])
        return total

    def draw(self, theta: object, items: object, rng: np.random.Generator) -> FloatArray:
        """One score per (θ_n, item_n) pair, (N,): the discrete items' first (from their
        categories), then the continuous items' (from their densities)."""
        th = np.asarray(theta, dtype=np.float64).reshape(-1)
        pos = np.asarray(items, dtype=np.int_).reshape(-1)
        out = np.empty(len(pos))
        n_disc = self.n_discrete
        discrete = pos < n_disc
        if discrete.any():
            assert self.discrete is not None
            out[discrete] = self.discrete.draw(th[discrete], pos[discrete], rng)
        if not discrete.all():
            assert self.continuous is not None
            out[~discrete] = self.continuous.draw(th[~discrete], pos[~discrete] - n_disc, rng)
        return out

    def person_fit(self, theta: object, items: object, responses: object) -> float:
        """The discrete part's lz on the answers to its items (lz is for discrete
        scores); NaN when none of ``items`` is discrete."""
        pos = np.asarray(items, dtype=np.int_)
        discrete = pos < self.n_discrete
        if self.discrete is None or not discrete.any():
            return float("nan")
        answers = np.asarray(responses, dtype=np.float64)[discrete]
        return self.discrete.person_fit(theta, pos[discrete], answers)

    @property
    def _parts(self) -> list[PolytomousParams | ContinuousParams]:
        return [p for p in (self.discrete, self.continuous) if p is not None]

    def subset(self, items: object) -> MixedParams:
        """The items with the given ids (or at the given positions: a numpy index); each
        part keeps the requested order of its own items and a part with none of them is
        dropped (discrete items still come first)."""
        wanted = [self.item_ids[j] for j in item_positions(self.item_ids, items)]
        if not wanted:
            raise ParamsError("a subset of a mixed pool needs at least one item")
        disc_ids, cont_ids = set(self.discrete_ids), set(self.continuous_ids)
        disc = [x for x in wanted if x in disc_ids]
        cont = [x for x in wanted if x in cont_ids]
        return MixedParams(
            discrete=self.discrete.subset(disc) if disc and self.discrete is not None else None,
            continuous=(
                self.continuous.subset(cont) if cont and self.continuous is not None else None
            ),
        )


@dataclass(frozen=True)
class MixedResponses(TwoParts):
    """The answers of the same subjects (same ids, same order) to a mixed pool's
    discrete items (``PolytomousResponses``) and continuous items
    (``ContinuousResponses``); either part may be None but not both."""

    discrete: PolytomousResponses | None = None
    continuous: ContinuousResponses | None = None

    def __post_init__(self) -> None:
        if self.discrete is None and self.continuous is None:
            raise ResponseDataError(
                "mixed responses need a discrete part, a continuous part or both"
            )
        if self.discrete is not None and self.continuous is not None:
            ds, cs = tuple(self.discrete.subject_ids), tuple(self.continuous.subject_ids)
            if ds != cs:
                if len(ds) != len(cs):
                    why = f"{len(ds)} discrete vs {len(cs)} continuous subjects"
                else:
                    k = next(i for i, (x, y) in enumerate(zip(ds, cs, strict=True)) if x != y)
                    why = f"row {k} is {ds[k]!r} in the discrete part, {cs[k]!r} in the continuous"
                raise ResponseDataError(
                    f"the discrete and continuous responses must list the same subjects in "
                    f"the same order ({why})"
                )
        _check_disjoint(self.discrete_ids, self.continuous_ids, ResponseDataError)

    @property
    def subject_ids(self) -> tuple[str, ...]:
        part = self.discrete if self.discrete is not None else self.continuous
        assert part is not None
        return tuple(part.subject_ids)

    @property
    def n_subjects(self) -> int:
        return len(self.subject_ids)

    def subset(self, subjects: object = None) -> MixedResponses:
        """The subjects selected by a numpy index (mask or positions); both parts keep
        all their items."""
        return MixedResponses(
            None if self.discrete is None else self.discrete.subset(subjects=subjects),
            None if self.continuous is None else self.continuous.subset(subjects=subjects),
        )

    def as_float(self) -> FloatArray:
        """(N, J) scores, NaN where missing, columns in ``item_ids`` order."""
        parts = [
            self.discrete.as_float() if self.discrete is not None else None,
            self.continuous.values if self.continuous is not None else None,
        ]
        return np.asarray(np.hstack([p for p in parts if p is not None]), dtype=np.float64)

    @property
    def observed(self) -> BoolArray:
        """(N, J) answered cells, columns in ``item_ids`` order."""
        parts = [p.observed for p in (self.discrete, self.continuous) if p is not None]
        return np.asarray(np.hstack(parts), dtype=bool)
