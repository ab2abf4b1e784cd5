"""One Bock–Aitkin EM (Bock & Aitkin 1981) over one or more families of items on one
θ ~ N(0, 1): the problem that ``irt.estimation.em_loop.run_em`` iterates for
``PolytomousCalibrator`` (one discrete family), ``ContinuousCalibrator`` (one continuous
family) and ``MixedCalibrator`` (either or both).

Given θ the items are independent, so a subject's log-likelihood at node θ_q is the sum
of its families' (``Family.node_loglik``). The E-step adds them on the shared grid and
normalises once into the posterior p_nq (``joint_e_step``); each family then runs its
own M-step under that one posterior (``Family.m_step``), which never lowers its items'
objective, so every cycle is a generalised EM step and the joint log posterior never
falls. The flat vector EM moves is the families' vectors one after another; a cycle's
move is measured on each family's reported scale (``Family.reported``), the largest
counting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from irt.errors import IRTError
from irt.estimation.em_loop import Evaluated
from irt.structures import normalised
from irt.types import FloatArray

__all__ = ["Family", "JointEM", "JointEStep", "NodeLoglik", "joint_e_step"]


class NodeLoglik(Protocol):
    """What the joint E-step needs of one family of items (also of ``irt.mixed_se``'s and
    ``irt.mixed_scoring``'s parts, in their own coordinates)."""

    def node_loglik(self, x: FloatArray) -> tuple[FloatArray, float]:
        """Each row's log-likelihood at each node up to a constant (rows × Q; a new
        array, which the E-step may change), and the constant summed over the rows."""
        ...


class Family(NodeLoglik, Protocol):
    """What the joint EM needs of one family of items; its state is a flat vector of
    the family's internal coordinates."""

    @property
    def n_parameters(self) -> int: ...

    @property
    def row_weights(self) -> FloatArray | None:
        """How many subjects each row of ``node_loglik`` stands for (None: one each;
        only a family alone may collapse subjects into rows)."""
        ...

    def m_step(
        self, x: FloatArray, post: FloatArray, max_newton: int, inner_tol: float
    ) -> FloatArray:
        """The next vector from the rows' posteriors over the nodes (rows sum to 1), by
        at most ``max_newton`` Newton steps per item to ``inner_tol``."""
        ...

    def log_prior(self, x: FloatArray) -> float: ...

    def reported(self, x: FloatArray) -> FloatArray:
        """The coordinates a cycle's move is measured on (the stopping rule's scale)."""
        ...

    def clip(self, x: FloatArray) -> FloatArray: ...


@dataclass(frozen=True)
class JointEStep:
    """The joint marginal log-likelihood and each row's posterior over the nodes."""

    loglik: float
    posterior: FloatArray  # (rows, Q), rows sum to 1


def joint_e_step(
    families: Sequence[NodeLoglik],
    xs: Sequence[FloatArray],
    log_w: FloatArray,
    weights: FloatArray | None = None,
) -> JointEStep:
    """The posterior of every row over the nodes given all its answers, and the joint
    marginal log-likelihood Σ_n w_n log Σ_q w_q Π_families L_n(θ_q) (``weights`` w_n:
    subjects per row, one each if None)."""
    joint: FloatArray | None = None
    const = 0.0
    for fam, x in zip(families, xs, strict=True):
        table, c = fam.node_loglik(x)
        if joint is None:
            joint = table
        else:
            joint += table
        const += c
    assert joint is not None
    joint += log_w
    per_row, post = normalised(joint)
    loglik = float(per_row.sum() if weights is None else weights @ per_row)
    return JointEStep(loglik + const, post)


#: An E-step of the joint EM and the log posterior at its vector.
JointEvaluation = Evaluated[JointEStep]


class JointEM:
    """The EM cycle of ``families`` on one grid (log weights ``log_w``), on the flat
    vector of their coordinates (``irt.estimation.em_loop.EMProblem``); each M-step
    runs at most ``max_newton`` Newton steps per item to ``inner_tol``."""

    def __init__(
        self, families: Sequence[Family], log_w: FloatArray, max_newton: int, inner_tol: float
    ) -> None:
        self.families = tuple(families)
        self.log_w = log_w
        self.max_newton, self.inner_tol = max_newton, inner_tol
        weights = [f.row_weights for f in self.families]
        if len(weights) > 1 and any(w is not None for w in weights):
            raise IRTError("families beside others must have one row per subject")
        self.weights = weights[0] if len(weights) == 1 else None
        self._cuts = np.cumsum([f.n_parameters for f in self.families])[:-1]

    def split(self, x: FloatArray) -> list[FloatArray]:
        """Each family's vector."""
        return [x] if len(self.families) == 1 else np.split(x, self._cuts)

    def log_prior(self, x: FloatArray) -> float:
        return sum(f.log_prior(p) for f, p in zip(self.families, self.split(x), strict=True))

    def evaluate(self, x: FloatArray) -> JointEvaluation:
        step = joint_e_step(self.families, self.split(x), self.log_w, self.weights)
        return JointEvaluation(step, step.loglik + self.log_prior(x))

    def update(self, x: FloatArray, evaluation: JointEvaluation) -> FloatArray:
        post = evaluation.step.posterior
        xs = self.split(x)
        return np.concatenate(
            [
                f.m_step(p, post, self.max_newton, self.inner_tol)
                for f, p in zip(self.families, xs, strict=True)
            ]
        )

    def clip(self, x: FloatArray) -> FloatArray:
        xs = self.split(x)
        return np.concatenate([f.clip(p) for f, p in zip(self.families, xs, strict=True)])

    def change(self, new: FloatArray, old: FloatArray) -> float:
        return max(
            float(np.abs(f.reported(a) - f.reported(b)).max(initial=0.0))
            for f, a, b in zip(self.families, self.split(new), self.split(old), strict=True)
        )
