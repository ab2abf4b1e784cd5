"""One entry point for calibration by either method, with a common result record."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from irt.em import EMCalibrator
from irt.errors import IRTError
from irt.estimation.devices import resolve_device
from irt.estimation.em_loop import ProgressCallback
from irt.models import ItemParams, ModelKind
from irt.names import CalibrationMethod as CalibrationMethod
from irt.priors import ItemPriors
from irt.responses import ResponseMatrix

#: Called with (share of the work done in [0, 1], a short status text).
FitProgress = Callable[[float, str], None]


@dataclass(frozen=True)
class CalibrationResult:
    """What any calibrator produced, plus the settings that produced it."""

    params: ItemParams
    model: ModelKind
    method: CalibrationMethod
    loglik: float
    logpost: float
    n_iter: int
    converged: bool
    seconds: float
    priors: ItemPriors
    seed: int
    settings: dict[str, Any]


def cycle_progress(progress: FitProgress, tol: float) -> ProgressCallback:
    """EM's per-cycle report (cycle, log-likelihood, largest change) as ``progress``'s
    (fraction done, what): one line per cycle with the log-likelihood and its change."""
    first: list[float] = []

    def report(cycle: int, loglik: float, change: float) -> None:
        # EM's steps shrink geometrically: progress is how far the largest change has
        # come, on a log scale, from the first cycle's to the tolerance.
        if not first:
            first.append(max(change, tol * 10))
        span = np.log(first[0] / tol)
        done = float(np.clip(np.log(first[0] / max(change, 1e-300)) / span, 0.0, 1.0))
        progress(done, f"cycle {cycle}  loglik {loglik:,.2f}  Δ {change:.1e}")

    return report


def calibrate(
    responses: ResponseMatrix,
    model: ModelKind | str = ModelKind.THREE_PL,
    method: CalibrationMethod | str = CalibrationMethod.EM,
    *,
    priors: ItemPriors | None = None,
    seed: int = 0,
    tol: float = 1e-4,
    max_iter: int = 500,
    n_quad: int = 61,
    progress: FitProgress | None = None,
    device: str = "cpu",
) -> CalibrationResult:
    """Fit item parameters by EM (default) or Bayesian inference (SVI via pyro).
    ``device``: where EM's cycles run (``irt.estimation.devices``; EM only)."""
    kind = ModelKind(model)
    how = CalibrationMethod(method.lower() if isinstance(method, str) else method)
    t0 = time.perf_counter()
    if how is CalibrationMethod.EM:
        em_progress = None if progress is None else cycle_progress(progress, tol)
        em = EMCalibrator(
            kind,
            priors=priors,
            tol=tol,
            max_iter=max_iter,
            n_quad=n_quad,
            progress=em_progress,
            device=device,
        ).fit(responses)
        return CalibrationResult(
            params=em.params_,
            model=kind,
            method=how,
            loglik=em.loglik_,
            logpost=em.logpost_,
            n_iter=em.n_iter_,
            converged=em.converged_,
            seconds=time.perf_counter() - t0,
            priors=em.priors_,
            seed=seed,
            settings={
                "tol": tol,
                "max_iter": max_iter,
                "quadrature": {"points": n_quad, "bound": em.bound, "latent": "N(0,1)"},
                "device": em.device_,
            },
        )
    if str(device).strip().lower() not in ("cpu", "auto"):  # auto: the cpu, for SVI
        resolve_device(device)  # an unknown name is refused as such
        raise IRTError(f"device {device!r} runs EM; Bayesian calibration runs on the cpu")
    try:
        from irt.bayes.calibrator import BayesCalibrator
    except ImportError as exc:  # pragma: no cover - the module itself imports lazily
        raise IRTError("Bayesian calibration is not available in this installation") from exc
    calibrator = BayesCalibrator(kind, priors=priors, seed=seed)
    if progress is not None:
        report_b = progress

        def bayes_progress(step: int, elbo: float) -> None:
            report_b(step / calibrator.n_steps, f"step {step}  ELBO {elbo:,.1f}")

        calibrator.progress = bayes_progress
    fitted = calibrator.fit(responses)
    return CalibrationResult(
        params=fitted.params_,
        model=kind,
        method=how,
        loglik=float(fitted.loglik_),
        logpost=float(fitted.logpost_),
        n_iter=int(fitted.n_iter_),
        converged=bool(fitted.converged_),
        seconds=time.perf_counter() - t0,
        priors=fitted.priors_,
        seed=seed,
        settings={"inference": getattr(fitted, "method_", "svi")},
    )


def parameter_summary(params: ItemParams) -> dict[str, dict[str, float]]:
    """Mean, SD, min and max of each item parameter (for reports)."""
    out: dict[str, dict[str, float]] = {}
    for name in ("a", "b", "c", "d"):
        v = getattr(params, name)
        out[name] = {
            "mean": float(np.mean(v)),
            "sd": float(np.std(v)),
            "min": float(np.min(v)),
            "max": float(np.max(v)),
        }
    return out
