"""The base of every calibrator in ``irt``: settings fixed at construction, ``fit``
estimates, and every fit reports the same result attributes (scikit-learn style,
trailing underscore), so code above ``irt`` reads any fit the same way."""

from __future__ import annotations

import functools
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from irt.errors import ConvergenceWarning
from irt.estimation.em_loop import STOPPED_LOGLIK, Drift, EMRun
from irt.estimation.threads import blas_threads_for, cells_of


class Calibrator:
    """What every fit sets, whatever the model family:

    - ``params_``: the fitted parameters (with standard errors where asked);
    - ``loglik_``: the marginal log-likelihood at them; ``logpost_``: plus the log prior
      (equal without priors);
    - ``n_iter_``: EM cycles (every evaluation of the EM map, SQUAREM's included);
      ``converged_``: whether the parameters settled before the cycle cap;
      ``stopped_``: why the fit stopped ("parameters": none moved more than ``tol``;
      "log-likelihood": it had stopped rising while ``drift_`` still moved steadily,
      along a ridge: not converged, and warned about; "cycle cap"; "" for a method
      without cycles);
    - ``seconds_``: wall time of ``fit``;
    - ``n_parameters_``: free parameters; ``df_``: the degrees of freedom of the full
      response table, Π_j K_j − 1 − ``n_parameters_`` (R mirt's ``df``; negative when
      the model has more parameters than patterns);
    - ``trace_``: the log posterior at the start of every cycle, in order.

    Subclasses call ``_started`` at the start of ``fit`` and ``_record`` at its end; a
    family adds its own attributes beside these (``aic_``, ``se_``, ``priors_`` ...).
    """

    params_: Any
    loglik_: float
    logpost_: float
    n_iter_: int
    converged_: bool
    seconds_: float
    n_parameters_: int
    df_: int
    trace_: list[float]
    stopped_: str
    drift_: Drift | None

    #: The words that open the warning when EM hits its cycle cap.
    _what: str = "EM"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Every family's ``fit`` runs with the BLAS threads its data size calls for
        # (``irt.estimation.threads``): one on human-sized data, where more are slower.
        super().__init_subclass__(**kwargs)
        fit = cls.__dict__.get("fit")
        if fit is not None and not getattr(fit, "_sized_threads", False):
            setattr(cls, "fit", _with_sized_threads(fit))  # noqa: B010 - mypy: no fit on the base

    def _started(self) -> None:
        self._t0 = time.perf_counter()

    def _record(
        self,
        *,
        params: Any,
        loglik: float,
        logpost: float,
        n_parameters: int,
        n_categories: Any,
        run: EMRun[Any] | None = None,
        n_iter: int = 0,
        converged: bool = True,
        trace: Sequence[float] = (),
        stacklevel: int = 3,
    ) -> None:
        """Set the result attributes. An EM fit passes its ``run`` (and is warned about,
        ``ConvergenceWarning``, when the run hit its cap or stopped with a parameter on
        a ridge); another method passes its own
        ``n_iter``, ``converged`` and ``trace`` and warns in its own words.
        ``n_categories``: each item's number of response categories (2 for binary items;
        a continuous item counts as 0, which leaves ``df_`` undefined: −1); ``stacklevel``
        points the warning at the user's call of ``fit`` from wherever this is called."""
        stopped, drift = "", None
        if run is not None:
            n_iter, converged, trace = run.n_iter, run.converged, run.trace
            stopped, drift = run.stopped, run.drift
            if stopped == STOPPED_LOGLIK:
                warnings.warn(
                    f"{self._what} stopped after {n_iter} cycles without converging: the "
                    f"log-likelihood had stopped rising while one parameter still moved "
                    f"({drift}); the data hardly inform it (it runs along a flat ridge, "
                    "often toward a bound), so its estimate and standard error mean little",
                    ConvergenceWarning,
                    stacklevel=stacklevel,
                )
            elif not converged:
                tol = getattr(self, "tol", None)
                within = "" if tol is None else f" (tolerance {tol:g})"
                warnings.warn(
                    f"{self._what} stopped at its cap of {n_iter} cycles without "
                    f"converging: the item parameters had not settled{within}",
                    ConvergenceWarning,
                    stacklevel=stacklevel,
                )
        self.params_ = params
        self.loglik_ = float(loglik)
        self.logpost_ = float(logpost)
        self.n_iter_ = int(n_iter)
        self.converged_ = bool(converged)
        self.trace_ = [float(v) for v in trace]
        self.stopped_, self.drift_ = stopped, drift
        self.n_parameters_ = int(n_parameters)
        self.df_ = degrees_of_freedom(n_categories, self.n_parameters_)
        self.seconds_ = time.perf_counter() - self._t0


def _with_sized_threads(fit: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fit)
    def wrapper(self: Calibrator, *args: Any, **kwargs: Any) -> Any:
        data = args[0] if args else next(iter(kwargs.values()), None)  # the responses
        with blas_threads_for(cells_of(data), torch=str(getattr(self, "device", "cpu")) != "cpu"):
            return fit(self, *args, **kwargs)

    wrapper._sized_threads = True  # type: ignore[attr-defined]
    return wrapper


def degrees_of_freedom(n_categories: Any, n_parameters: int) -> int:
    """Π_j K_j − 1 − ``n_parameters`` in exact integers (the product overflows floats for
    a few hundred items); −1 when an item has no finite number of categories."""
    counts = [int(k) for k in np.asarray(n_categories).ravel()]
    if any(k < 1 for k in counts):
        return -1
    return int(np.prod(counts, dtype=object)) - 1 - n_parameters
