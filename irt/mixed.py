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

import numpy as np

from irt.continuous import ContinuousParams
from irt.continuous_responses import ContinuousResponses
from irt.errors import IRTError, ParamsError, ResponseDataError
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


@dataclass(frozen=True)
class MixedParams:
    """Parameters of a mixed pool: ``discrete`` (``PolytomousParams``) and
    ``continuous`` (``ContinuousParams``), either None but not both. ``item_ids`` lists
    the discrete items, then the continuous ones."""

    discrete: PolytomousParams | None = None
    continuous: ContinuousParams | None = None

    def __post_init__(self) -> None:
        if self.discrete is None and self.continuous is None:
            raise ParamsError("a mixed pool needs a discrete part, a continuous part or both")
        _check_disjoint(self.discrete_ids, self.continuous_ids, ParamsError)

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

    def expected_score(self, theta: object) -> FloatArray:
        """E[X_j | θ] on each item's own scale, (T, J)."""
        return np.hstack(
            [
                part.expected_score(theta)
                if isinstance(part, PolytomousParams)
                else part.expected(theta)
                for part in self._parts
            ]
        )

    def information(self, theta: object) -> FloatArray:
        """Item Fisher information, (T, J)."""
        return np.hstack([part.information(theta) for part in self._parts])

    def test_information(self, theta: object) -> FloatArray:
        """Σ_j I_j(θ), (T,)."""
        return np.asarray(self.information(theta).sum(axis=1))

    @property
    def _parts(self) -> list[PolytomousParams | ContinuousParams]:
        return [p for p in (self.discrete, self.continuous) if p is not None]

    def subset(self, items: str | Sequence[str]) -> MixedParams:
        """The items with the given ids; each part keeps the requested order of its own
        items and a part with none of them is dropped (discrete items still come first)."""
        wanted = [items] if isinstance(items, str) else list(items)
        known = set(self.item_ids)
        unknown = [x for x in wanted if x not in known]
        if unknown:
            raise ParamsError(f"unknown item id {unknown[0]!r}")
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
class MixedResponses:
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
        return len(self.item_ids)

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
