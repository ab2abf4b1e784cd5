"""What the multidimensional calibrators (``irt.mirt_em``, ``irt.two_tier``,
``irt.bifactor``, ``irt.mirt_polytomous_em``) add to ``irt.estimation.Calibrator``: the
same cycle settings, checked the same way, and Akaike's and Schwarz's criteria, which
their users compare across factor structures."""

from __future__ import annotations

from typing import Any

import numpy as np

from irt.errors import IRTError
from irt.estimation.calibrator import Calibrator
from irt.estimation.em_loop import EMRun
from irt.mirt_model import MirtParams
from irt.mirt_vector import MirtVectorEM


class MultidimensionalCalibrator(Calibrator):
    """A ``Calibrator`` with ``tol`` (the stopping rule's largest parameter move),
    ``max_iter`` (the cap on EM cycles) and ``scoring_steps`` (Newton or Fisher-scoring
    steps per item and cycle), whose fits also report ``aic_`` and ``bic_``."""

    tol: float
    max_iter: int
    scoring_steps: int
    aic_: float
    bic_: float

    def _set_cycles(self, tol: float, max_iter: int, scoring_steps: int) -> None:
        """Check and keep the cycle settings (``IRTError`` for one out of range)."""
        if not tol > 0:
            raise IRTError(f"tol must be positive, got {tol}")
        if max_iter < 1 or scoring_steps < 1:
            raise IRTError("max_iter and scoring_steps must be at least 1")
        self.tol = tol
        self.max_iter = max_iter
        self.scoring_steps = scoring_steps

    def _record_binary(
        self, problem: MirtVectorEM[Any], run: EMRun[Any], n_subjects: float
    ) -> MirtParams:
        """Record a fit of binary items on factors, ``problem``'s parameters where ``run``
        ended, with its criteria; those parameters."""
        params, loglik, logpost = problem.fitted(run.x)
        self._record(
            params=params,
            loglik=loglik,
            logpost=logpost,
            run=run,
            n_parameters=problem.n_parameters(),
            n_categories=[2] * params.n_items,
            stacklevel=4,
        )
        self._set_criteria(n_subjects)
        return params

    def _set_criteria(self, n_subjects: float) -> None:
        """``aic_`` and ``bic_`` from ``loglik_`` (with priors, at the posterior mode) and
        ``n_parameters_``, the free item and latent parameters."""
        self.aic_ = -2.0 * self.loglik_ + 2.0 * self.n_parameters_
        self.bic_ = -2.0 * self.loglik_ + self.n_parameters_ * float(np.log(n_subjects))
