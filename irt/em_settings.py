"""What the EM calibrators of scored items on one θ grid share (``PolytomousCalibrator``,
``ContinuousCalibrator``, ``MixedCalibrator``): their settings, checked the same way
(tolerance, cycle caps, the standard-error method and the quadrature grid), the run of
their joint EM problem (``irt.mixed_joint``) through the one EM loop, and the fit
statistics they report beyond the ``Calibrator`` base's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from irt.errors import IRTError
from irt.estimation.calibrator import Calibrator
from irt.estimation.em_loop import EMRun, ProgressCallback, run_em
from irt.mixed_joint import Family, JointEM, JointEvaluation
from irt.quadrature import QuadratureGrid, normal_grid
from irt.types import FloatArray

__all__ = ["AloneFamily", "GridEMCalibrator", "check_em_settings"]


class AloneFamily(Family, Protocol):
    """A family that can be fitted alone: its standard errors and parameters at ``x``."""

    @property
    def priors(self) -> Any: ...

    def standard_errors(self, x: FloatArray, log_w: FloatArray, method: str) -> Any: ...

    def params(self, x: FloatArray, se: Any = None) -> Any: ...


def check_em_settings(
    *,
    tol: float,
    max_iter: int,
    max_newton: int,
    standard_errors: str | None,
    se_methods: Sequence[str],
    n_quad: int,
    bound: float,
) -> None:
    """Raise ``IRTError`` with one line for the first setting out of range."""
    if not tol > 0:
        raise IRTError(f"tol must be positive, got {tol}")
    if max_iter < 1 or max_newton < 1:
        raise IRTError("max_iter and max_newton must be at least 1")
    if standard_errors is not None and standard_errors not in se_methods:
        raise IRTError(
            f"standard_errors must be one of {', '.join(se_methods)} or None, "
            f"got {standard_errors!r}"
        )
    normal_grid(n_quad, bound)  # checks them


class GridEMCalibrator(Calibrator):
    """A calibrator whose fit is one EM over families of items on ``n_quad`` points of
    [−``bound``, ``bound``]: EM stops when no reported parameter moves more than
    ``tol`` in a cycle, or after ``max_iter`` cycles; each family's M-step runs at most
    ``max_newton`` Newton steps. Besides the base's attributes, a fit sets ``aic_`` and
    ``bic_`` (n = subjects with an answer), and ``trace_`` ends with ``logpost_``.
    ``progress``, when set, hears of every cycle (``irt.estimation.em_loop``'s
    ``ProgressCallback``)."""

    progress: ProgressCallback | None = None
    n_quad: int
    bound: float
    tol: float
    max_iter: int
    max_newton: int
    standard_errors: str | None
    aic_: float
    bic_: float

    def _settings(
        self,
        n_quad: int,
        bound: float,
        tol: float,
        max_iter: int,
        max_newton: int,
        standard_errors: str | None,
        se_methods: Sequence[str],
    ) -> None:
        check_em_settings(
            tol=tol,
            max_iter=max_iter,
            max_newton=max_newton,
            standard_errors=standard_errors,
            se_methods=se_methods,
            n_quad=n_quad,
            bound=bound,
        )
        self.n_quad = n_quad
        self.bound = bound
        self.tol = tol
        self.max_iter = max_iter
        self.max_newton = max_newton
        self.standard_errors = standard_errors

    def _describe_settings(self) -> dict[str, Any]:
        """The grid and stopping settings, JSON-ready, in ``describe()``'s order."""
        return {
            "n_quad": self.n_quad,
            "bound": self.bound,
            "tol": self.tol,
            "max_iter": self.max_iter,
            "standard_errors": self.standard_errors,
        }

    def _type_counts(self, *params: Any) -> dict[str, int]:
        """How many items of each type the fitted parameter sets hold (None skipped)."""
        kinds = [t.value for p in params if p is not None for t in p.item_types]
        return {k: kinds.count(k) for k in sorted(set(kinds))}

    def _grid(self) -> QuadratureGrid:
        return normal_grid(self.n_quad, self.bound)

    def _run(
        self,
        families: Sequence[Family],
        starts: Sequence[FloatArray],
        grid: QuadratureGrid,
        *,
        accelerate: bool = True,
    ) -> tuple[JointEM, EMRun[JointEvaluation]]:
        """The joint EM of ``families`` from their ``starts``, by the one EM loop."""
        # The M-step needs to be an order of magnitude tighter than EM itself; much below
        # 1e-6 its Newton steps sit at the rounding noise of the gradient.
        inner_tol = min(self.tol / 10, 1e-6)
        problem = JointEM(families, grid.log_weights, self.max_newton, inner_tol)
        run = run_em(
            problem,
            np.concatenate(starts),
            tol=self.tol,
            max_iter=self.max_iter,
            accelerate=accelerate,
            progress=self.progress,
        )
        return problem, run

    def _fit_alone(
        self,
        family: AloneFamily,
        start: FloatArray,
        grid: QuadratureGrid,
        n_categories: Sequence[int],
        n_subjects: int,
        *,
        accelerate: bool = True,
    ) -> None:
        """Fit one family of items alone and record it all: the run, its standard errors
        by ``standard_errors`` (``se_``), the priors used (``priors_``) and the criteria
        (``n_subjects``: those with an answer)."""
        _, run = self._run([family], [start], grid, accelerate=accelerate)
        se = None
        if self.standard_errors is not None:
            se = family.standard_errors(run.x, grid.log_weights, self.standard_errors)
        self._record(
            params=family.params(run.x, se),
            loglik=run.evaluation.loglik,
            logpost=run.evaluation.logpost,
            run=run,
            n_parameters=family.n_parameters,
            n_categories=n_categories,
            stacklevel=4,
        )
        self._finish(n_subjects)
        self.se_ = se
        self.priors_ = family.priors

    def _finish(self, n_subjects: int) -> None:
        """After ``_record``: the information criteria."""
        self.aic_ = -2.0 * self.loglik_ + 2.0 * self.n_parameters_
        self.bic_ = -2.0 * self.loglik_ + self.n_parameters_ * float(np.log(n_subjects))
