"""The 2PL, mirt's ``2PL``: P(X = 1) = σ(η + d), a binary item (d = −a b in
``irt.models``' terms). It is the graded model with one threshold, and is computed as
one, so that a pool of binary and graded items is calibrated on one θ."""

from __future__ import annotations

from typing import ClassVar

from irt.families.graded import Graded

__all__ = ["TwoPL"]


class TwoPL(Graded):
    """mirt's ``2PL``: a graded item with two categories."""

    name: ClassVar[str] = "2PL"
    title: ClassVar[str] = "2PL"
    binary: ClassVar[bool] = True
    ordered_thresholds: ClassVar[bool] = False
