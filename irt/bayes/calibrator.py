"""Bayesian calibration with pyro (SVI or NUTS), behind the interface of ``EMCalibrator``.

torch and pyro are the optional 'bayes' extra: they are imported when ``fit`` runs, never
when this module is imported.
"""

from __future__ import annotations

import importlib
import logging
import math
import warnings
from collections.abc import Callable
from dataclasses import asdict, replace
from types import ModuleType
from typing import Literal

import numpy as np
from scipy.special import betaln

from irt.errors import ConvergenceWarning, DataWarning, IRTError
from irt.estep import marginal_log_likelihood
from irt.estimation.calibrator import Calibrator
from irt.models import ItemParams, ModelKind
from irt.priors import ItemPriors, beta_log_kernel
from irt.responses import ResponseMatrix
from irt.types import FloatArray

logger = logging.getLogger(__name__)

#: Called after every SVI step with (step, ELBO); after every NUTS iteration with
#: (iteration, NaN).
BayesProgress = Callable[[int, float], None]

#: NUTS refuses problems with more observed answers than this; SVI scales further.
NUTS_MAX_OBSERVED = 200_000

_INSTALL_HINT = (
    "Bayesian calibration needs the 'bayes' extra: pip install torch==2.13.0 'cat-llm[bayes]'"
)
# Guide draws behind the SVI standard errors (MC error of an SD ≈ 1/sqrt(2 n) = 5%).
_SVI_DRAWS = 200
# SVI converges when the mean ELBO of the last 10% of steps is within this relative
# distance of the mean over the 10% before.
_SVI_RTOL = 1e-3
_R_HAT_MAX = 1.1


class BayesCalibrator(Calibrator):
    """Fit 1PL–4PL item parameters and abilities by Bayesian inference with pyro.

    Model: θ_n ~ N(0, 1); a_j ~ LogNormal (one shared a for the 1PL); b_j ~ Normal;
    c_j ~ Beta (3PL, 4PL); d_j ~ Beta (4PL); answers ~ Bernoulli(c + (d − c) σ(a(θ − b)))
    on the observed cells only. Bayesian calibration needs proper priors, so a prior
    switched off in ``priors`` takes its value from ``ItemPriors()``; ``priors_`` records
    what was used. The c prior's shape parameters are at least 1 (checked by
    ``ItemPriors``), which keeps c from drifting to 1 on easy items.

    Parameters
    ----------
    model : "1pl" | "2pl" | "3pl" | "4pl"
    priors : item priors; ``None`` uses ``ItemPriors()``.
    method : "svi" (mean-field normal guide, Adam on Trace_ELBO; point estimates are
        posterior medians) or "nuts" (one chain; posterior means; small problems only).
    seed : seeds torch, numpy and random for the fit; the caller's RNG state is restored.
    n_steps, learning_rate : SVI steps and Adam step size. SVI has converged when the
        mean ELBO of the last 10% of steps differs from that of the 10% before by less
        than 1e-3 relatively; otherwise ``fit`` warns with ``ConvergenceWarning``.
    num_samples, warmup_steps : NUTS draws kept and warm-up iterations. NUTS has
        converged when every item parameter's split R-hat is below 1.1.
    progress : called as ``progress(step, elbo)`` (NUTS: ``(iteration, nan)``).

    Results: ``params_`` (posterior SDs as ``se_a``, ``se_b``, ``se_c``); ``theta_`` and
    ``theta_se_`` (posterior means and SDs, in subject order); ``loglik_`` (marginal, by
    quadrature); ``logpost_`` (``loglik_`` + log prior density of the point estimates);
    ``elbo_`` (SVI, one value a step); ``r_hat_`` (NUTS, largest split R-hat);
    ``n_iter_``, ``converged_``, ``trace_`` (the ELBO; empty for NUTS), ``priors_``,
    ``method_``, ``seed_``, ``seconds_`` and the other attributes of every
    ``irt.estimation.Calibrator``.
    The mean-field SVI guide ignores posterior correlations, so its SDs run smaller
    than EM's standard errors or NUTS's posterior SDs.
    """

    def __init__(
        self,
        model: ModelKind | str = ModelKind.THREE_PL,
        *,
        priors: ItemPriors | None = None,
        method: Literal["svi", "nuts"] = "svi",
        seed: int = 0,
        n_steps: int = 3000,
        learning_rate: float = 0.02,
        num_samples: int = 500,
        warmup_steps: int = 300,
        progress: BayesProgress | None = None,
    ) -> None:
        try:
            self.model = ModelKind(model)
        except ValueError as exc:
            raise IRTError(f"unknown model {model!r}; use 1pl, 2pl, 3pl or 4pl") from exc
        if priors is not None and not isinstance(priors, ItemPriors):
            raise IRTError(f"priors must be an ItemPriors or None, got {type(priors).__name__}")
        if method not in ("svi", "nuts"):
            raise IRTError(f"method must be 'svi' or 'nuts', got {method!r}")
        if not _is_int(seed) or not 0 <= seed < 2**32:
            raise IRTError(f"seed must be an integer in [0, 2**32), got {seed!r}")
        if not _is_int(n_steps) or n_steps < 20:
            raise IRTError(f"n_steps must be an integer of at least 20, got {n_steps!r}")
        if not (isinstance(learning_rate, int | float) and 0 < learning_rate < math.inf):
            raise IRTError(f"learning_rate must be a positive number, got {learning_rate!r}")
        if not _is_int(num_samples) or num_samples < 4:
            raise IRTError(f"num_samples must be an integer of at least 4, got {num_samples!r}")
        if not _is_int(warmup_steps) or warmup_steps < 0:
            raise IRTError(f"warmup_steps must be a non-negative integer, got {warmup_steps!r}")
        if progress is not None and not callable(progress):
            raise IRTError("progress must be callable or None")
        self.priors = priors
        self.method = method
        self.seed = seed
        self.n_steps = n_steps
        self.learning_rate = float(learning_rate)
        self.num_samples = num_samples
        self.warmup_steps = warmup_steps
        self.progress = progress

    def fit(self, responses: ResponseMatrix) -> BayesCalibrator:
        """Sample or approximate the posterior given ``responses`` (missing cells masked)."""
        self._started()
        n_obs = int(responses.observed.sum())
        if self.method == "nuts" and n_obs > NUTS_MAX_OBSERVED:
            raise IRTError(
                f"NUTS is too slow for {n_obs:,} observed answers (limit "
                f"{NUTS_MAX_OBSERVED:,}); use method='svi'"
            )
        bm = _backend()
        priors = proper_priors(self.priors, self.model)
        sites = bm.item_sites(self.model)
        target = bm.FitTarget(
            bm.IRTModel(responses, self.model, priors),
            bm.start_values(responses, self.model, priors),
            self.progress,
        )
        self.elbo_: list[float] = []
        self.r_hat_ = float("nan")
        with bm.fit_session(self.seed):
            if self.method == "svi":
                guide, self.elbo_ = bm.run_svi(target, self.n_steps, self.learning_rate)
                centre, sd = bm.guide_summary(guide, ("theta", *sites), _SVI_DRAWS)
                converged = svi_converged(self.elbo_)
                n_iter = self.n_steps
            else:
                samples = bm.run_nuts(target, self.warmup_steps, self.num_samples)
                centre, sd = bm.sample_summary(samples, ("theta", *sites))
                self.r_hat_ = bm.max_r_hat(samples, sites)
                converged = not self.r_hat_ >= _R_HAT_MAX  # NaN: not computable
                n_iter = self.warmup_steps + self.num_samples
        if not all(np.all(np.isfinite(v)) for v in (*centre.values(), *sd.values())):
            raise IRTError(
                f"{self.method.upper()} produced non-finite estimates; "
                "try a smaller learning_rate or more informative priors"
            )
        if not converged:
            what = (
                f"the ELBO was still moving after {self.n_steps} steps"
                if self.method == "svi"
                else f"the largest split R-hat is {self.r_hat_:.3f} (>= {_R_HAT_MAX})"
            )
            warnings.warn(
                f"Bayesian calibration did not converge: {what}", ConvergenceWarning, stacklevel=2
            )
        params = self._params(responses, centre, sd)
        loglik = marginal_log_likelihood(responses, params)
        self._record(
            params=params,
            loglik=loglik,
            logpost=loglik + log_prior_density(params, priors),
            n_parameters=len(sites) * responses.n_items,
            n_categories=[2] * responses.n_items,
            n_iter=n_iter,
            converged=converged,
            trace=self.elbo_,
        )
        self.theta_ = centre["theta"]
        self.theta_se_ = sd["theta"]
        self.priors_ = priors
        self.method_ = self.method
        self.seed_ = self.seed
        logger.info(
            "Bayes %s (%s): %d iterations, loglik %.3f, converged=%s, %.2fs",
            self.model,
            self.method,
            n_iter,
            self.loglik_,
            converged,
            self.seconds_,
        )
        return self

    def _params(
        self, responses: ResponseMatrix, centre: dict[str, FloatArray], sd: dict[str, FloatArray]
    ) -> ItemParams:
        n = responses.n_items

        def per_item(values: FloatArray) -> FloatArray:
            return np.broadcast_to(values, (n,)).copy()  # the 1PL's a is a scalar

        c = np.zeros(n)
        d = np.ones(n)
        if self.model.has_guessing:
            c = np.clip(centre["c"], 1e-6, 1 - 1e-6)
        if self.model.has_slipping:
            d = np.clip(centre["d"], 1e-6, 1 - 1e-6)
            crossed = c >= d
            if crossed.any():
                # The likelihood is symmetric in (c, d) with a reversed item; the priors make
                # this rare, and ItemParams needs c < d.
                warnings.warn(
                    f"{int(crossed.sum())} items have a posterior lower asymptote above the "
                    "upper one; c was set just below d",
                    DataWarning,
                    stacklevel=3,
                )
                c = np.where(crossed, d - 1e-3, c)
        return ItemParams(
            item_ids=responses.item_ids,
            a=per_item(centre["a"]),
            b=centre["b"],
            c=c,
            d=d,
            model=self.model,
            se_a=per_item(sd["a"]),
            se_b=sd["b"],
            se_c=sd["c"] if self.model.has_guessing else None,
        )


def proper_priors(priors: ItemPriors | None, model: ModelKind) -> ItemPriors:
    """Priors for a Bayesian fit: switched-off priors take ``ItemPriors()`` values, and
    priors on parameters the model lacks are dropped (the 1PL keeps the one on its a)."""
    given = asdict(priors if priors is not None else ItemPriors())
    default = asdict(ItemPriors())
    used = ItemPriors(**{k: default[k] if v is None else v for k, v in given.items()})
    if not model.has_guessing:
        used = replace(used, c_alpha=None, c_beta=None)
    if not model.has_slipping:
        used = replace(used, d_alpha=None, d_beta=None)
    return used


def svi_converged(elbo: list[float]) -> bool:
    """Mean ELBO over the last 10% of steps vs the 10% before: relative change < 1e-3."""
    k = max(len(elbo) // 10, 1)
    if len(elbo) < 2 * k or not np.all(np.isfinite(elbo[-2 * k :])):
        return False
    last = float(np.mean(elbo[-k:]))
    previous = float(np.mean(elbo[-2 * k : -k]))
    return abs(last - previous) < _SVI_RTOL * max(abs(previous), 1e-12)


def log_prior_density(params: ItemParams, priors: ItemPriors) -> float:
    """Σ log prior density of the item parameters (the 1PL's shared a counted once)."""
    total = 0.0
    if priors.a_meanlog is not None and priors.a_sdlog is not None:
        a = params.a[:1] if params.model is ModelKind.ONE_PL else params.a
        log_a = np.log(a)
        total += float(np.sum(_normal_logpdf(log_a, priors.a_meanlog, priors.a_sdlog) - log_a))
    if priors.b_mean is not None and priors.b_sd is not None:
        total += float(np.sum(_normal_logpdf(params.b, priors.b_mean, priors.b_sd)))
    for x, alpha, beta in (
        (params.c, priors.c_alpha, priors.c_beta),
        (params.d, priors.d_alpha, priors.d_beta),
    ):
        if alpha is not None and beta is not None:
            log_dens = beta_log_kernel(x, alpha, beta) - betaln(alpha, beta)
            total += float(np.sum(log_dens))
    return total


def _normal_logpdf(x: FloatArray, mean: float, sd: float) -> FloatArray:
    return np.asarray(-0.5 * ((x - mean) / sd) ** 2 - math.log(sd * math.sqrt(2 * math.pi)))


def _is_int(x: object) -> bool:
    return isinstance(x, int | np.integer) and not isinstance(x, bool)


def _backend() -> ModuleType:
    try:
        return importlib.import_module("irt.bayes.model")
    except ImportError as exc:
        raise IRTError(_INSTALL_HINT) from exc
