# pyro ships py.typed, but most of its API is unannotated and pyro.optim builds its
# optimisers at import time, out of mypy's sight.
# mypy: disable-error-code="no-untyped-call"
"""The pyro model, guide and samplers behind ``irt.bayes.calibrator.BayesCalibrator``.

This module imports torch and pyro at import time; only ``BayesCalibrator.fit`` imports
it, so that the rest of ``irt`` works without the optional 'bayes' extra.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyro
import pyro.distributions as dist
import torch
from pyro.infer import MCMC, NUTS, SVI, Trace_ELBO
from pyro.infer.autoguide import AutoNormal
from pyro.infer.autoguide.initialization import init_to_value
from pyro.ops.stats import split_gelman_rubin
from pyro.optim import Adam  # type: ignore[attr-defined]

from irt.design_blocks import DesignMatrices
from irt.models import ModelKind
from irt.priors import ItemPriors
from irt.responses import ResponseMatrix
from irt.start import classical_start
from irt.types import FloatArray

#: Probabilities enter logarithms clamped this far from 0 and 1 (float32 rounds to them).
_EPS = 1e-6

#: Arrays keyed by site name ("theta", "a", "b", "c", "d").
Draws = dict[str, FloatArray]


@contextmanager
def fit_session(seed: int) -> Iterator[None]:
    """Seed torch, numpy and random and run torch on one thread for a fit; restore both.

    The tensors here are vectors of at most a few million entries, where torch's worker
    threads gain little, and on a busy machine their spin-waiting made fits 10-20 times
    slower (measured: 3 s against 40-80 s for 1,000 SVI steps on two shared cores).
    """
    state = pyro.util.get_rng_state()
    threads = torch.get_num_threads()
    pyro.set_rng_seed(seed)
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
        pyro.util.set_rng_state(state)


def item_sites(kind: ModelKind) -> tuple[str, ...]:
    """Names of the item-parameter sample sites of a model."""
    return (
        ("a", "b") + (("c",) if kind.has_guessing else ()) + (("d",) if kind.has_slipping else ())
    )


class IRTModel:
    """θ_n ~ N(0, 1), item priors from ``ItemPriors``, Bernoulli answers on observed cells.

    The observed cells are held as flat index tensors, so missing answers never enter the
    likelihood and nothing loops over subjects or items. For the 1PL one slope ``a`` is
    shared by all items (a scalar site outside the item plate).
    """

    def __init__(self, responses: ResponseMatrix, kind: ModelKind, priors: ItemPriors) -> None:
        self.kind = kind
        rows, cols = np.nonzero(responses.observed)
        dtype = torch.get_default_dtype()
        self.subject = torch.as_tensor(rows, dtype=torch.long)
        self.item = torch.as_tensor(cols, dtype=torch.long)
        self.y = torch.as_tensor(responses.values[rows, cols], dtype=dtype)
        self.n_subjects = responses.n_subjects
        self.n_items = responses.n_items

        def t(value: float | None) -> Any:
            return torch.tensor(value, dtype=dtype)

        self.a_prior = dist.LogNormal(t(priors.a_meanlog), t(priors.a_sdlog))
        self.b_prior = dist.Normal(t(priors.b_mean), t(priors.b_sd))
        self.c_prior = dist.Beta(t(priors.c_alpha), t(priors.c_beta)) if kind.has_guessing else None
        self.d_prior = dist.Beta(t(priors.d_alpha), t(priors.d_beta)) if kind.has_slipping else None

    def __call__(self) -> None:
        with pyro.plate("subjects", self.n_subjects):
            theta = pyro.sample("theta", dist.Normal(0.0, 1.0))
        if self.kind is ModelKind.ONE_PL:
            a = pyro.sample("a", self.a_prior).expand((self.n_items,))
        c = d = None
        with pyro.plate("items", self.n_items):
            if self.kind is not ModelKind.ONE_PL:
                a = pyro.sample("a", self.a_prior)
            b = pyro.sample("b", self.b_prior)
            if self.c_prior is not None:
                c = pyro.sample("c", self.c_prior)
            if self.d_prior is not None:
                d = pyro.sample("d", self.d_prior)
        z = a[self.item] * (theta[self.subject] - b[self.item])
        log_p, log_q = log_p_q(
            z,
            None if c is None else c[self.item],
            None if d is None else d[self.item],
        )
        with pyro.plate("observations", self.y.shape[0]):
            pyro.sample("y", dist.Bernoulli(logits=log_p - log_q), obs=self.y)


def log_p_q(z: Any, c: Any | None, d: Any | None) -> tuple[Any, Any]:
    """(log P, log(1 − P)) of P = c + (d − c) σ(z), from log σ(±z).

    P = c σ(−z) + d σ(z) and 1 − P = (1 − c) σ(−z) + (1 − d) σ(z) are both mixtures, so
    logaddexp gives them without forming a probability that could round to 0 or 1.
    """
    log_sig, log_sig_neg = torch.nn.functional.logsigmoid(z), torch.nn.functional.logsigmoid(-z)
    log_p, log_q = log_sig, log_sig_neg
    if d is not None:
        d = d.clamp(_EPS, 1.0 - _EPS)
        log_p = log_p + torch.log(d)
    if c is not None:
        c = c.clamp(_EPS, 1.0 - _EPS)
        log_p = torch.logaddexp(log_p, torch.log(c) + log_sig_neg)
        log_q = log_q + torch.log1p(-c)
    if d is not None:
        log_q = torch.logaddexp(log_q, torch.log1p(-d) + log_sig)
    return log_p, log_q


def start_values(
    responses: ResponseMatrix, model: ModelKind, priors: ItemPriors
) -> dict[str, FloatArray]:
    """Classical item statistics and standardised logit scores: a start near the posterior
    saves SVI steps, and c starts at its prior mode rather than pyro's default 0.5."""
    design = DesignMatrices.from_responses(responses)
    guess = _beta_mode(priors.c_alpha, priors.c_beta, 0.1) if model.has_guessing else 0.0
    a, b, c = classical_start(design, guess)
    start = {"a": a, "b": np.clip(b, -4.0, 4.0)}
    if model is ModelKind.ONE_PL:
        start["a"] = np.asarray(np.median(a))
    if model.has_guessing:
        start["c"] = np.clip(c, 0.01, 0.3)
    if model.has_slipping:
        start["d"] = np.full(
            a.shape, np.clip(_beta_mode(priors.d_alpha, priors.d_beta, 0.95), 0.7, 0.99)
        )
    observed = responses.observed.sum(axis=1)
    share = ((responses.values == 1).sum(axis=1) + 0.5) / (observed + 1.0)
    score = np.log(share / (1 - share))
    spread = float(score.std())
    start["theta"] = (score - score.mean()) / spread if spread > 0 else np.zeros_like(score)
    return start


def _beta_mode(alpha: float | None, beta: float | None, fallback: float) -> float:
    if alpha is None or beta is None or alpha + beta <= 2:
        return fallback
    return (alpha - 1) / (alpha + beta - 2)


@dataclass(frozen=True)
class FitTarget:
    """What SVI and NUTS both fit: the model, the values they start from, and whom to tell
    after every step."""

    model: IRTModel
    start: dict[str, FloatArray]
    progress: Callable[[int, float], None] | None = None

    def init_strategy(self) -> Any:
        """pyro's initialisation of every site at its start value."""
        dtype = torch.get_default_dtype()
        return init_to_value(
            values={k: torch.as_tensor(v, dtype=dtype) for k, v in self.start.items()}
        )

    def report(self, step: int, value: float) -> None:
        if self.progress is not None:
            self.progress(step, value)


def run_svi(
    target: FitTarget, n_steps: int, learning_rate: float
) -> tuple[AutoNormal, list[float]]:
    """Fit a mean-field normal guide (unconstrained space) by Adam on Trace_ELBO.

    Returns the guide and the ELBO (not the loss) after every step. (JitTrace_ELBO ran
    four times faster on small problems, but torch 2.13 deprecates torch.jit.trace.)
    """
    pyro.clear_param_store()
    guide = AutoNormal(target.model, init_loc_fn=target.init_strategy())
    svi = SVI(target.model, guide, Adam({"lr": learning_rate}), loss=Trace_ELBO())
    history: list[float] = []
    for step in range(1, n_steps + 1):
        elbo = -float(svi.step())
        history.append(elbo)
        target.report(step, elbo)
    return guide, history


def guide_summary(guide: AutoNormal, sites: tuple[str, ...], n_draws: int) -> tuple[Draws, Draws]:
    """Posterior medians (exact) and standard deviations (from ``n_draws`` guide draws)."""
    with torch.no_grad():
        medians = guide.median()
        draws = [guide() for _ in range(n_draws)]
    centre = {s: _numpy(medians[s]) for s in sites}
    sd = {s: _numpy(torch.stack([d[s] for d in draws]).std(dim=0)) for s in sites}
    return centre, sd


def run_nuts(target: FitTarget, warmup_steps: int, num_samples: int) -> dict[str, Any]:
    """One NUTS chain; returns the posterior samples by site, shape (num_samples, ...)."""
    done = [0]

    def hook(_kernel: Any, _params: Any, _stage: str, _i: int) -> None:
        done[0] += 1
        # NUTS has no cheap objective to report, only its progress.
        target.report(done[0], float("nan"))

    kernel = NUTS(target.model, init_strategy=target.init_strategy())
    mcmc = MCMC(
        kernel,
        num_samples=num_samples,
        warmup_steps=warmup_steps,
        num_chains=1,
        hook_fn=hook,
        disable_progbar=True,
    )
    mcmc.run()
    return dict(mcmc.get_samples())


def sample_summary(samples: dict[str, Any], sites: tuple[str, ...]) -> tuple[Draws, Draws]:
    """Posterior means and standard deviations of MCMC samples."""
    mean = {s: _numpy(samples[s].mean(dim=0)) for s in sites}
    sd = {s: _numpy(samples[s].std(dim=0)) for s in sites}
    return mean, sd


def max_r_hat(samples: dict[str, Any], sites: tuple[str, ...]) -> float:
    """Largest finite split R-hat over the given sites (NaN when none is finite)."""
    values = [
        _numpy(split_gelman_rubin(samples[s].unsqueeze(0), chain_dim=0, sample_dim=1)).ravel()
        for s in sites
    ]
    flat = np.concatenate(values)
    flat = flat[np.isfinite(flat)]
    return float(flat.max()) if flat.size else float("nan")


def _numpy(x: Any) -> FloatArray:
    return np.asarray(x.detach().cpu().numpy(), dtype=np.float64)
