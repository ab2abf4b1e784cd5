"""Continuous-response models for similarity scores in [0, 1] (issue 15): Samejima's CRM
against the Beta IRT model (``irt.continuous``), by fit.

Three data sets of 2,000 subjects x 50 items (θ ~ N(0, 1), seed 15), each fitted with
both models (``irt.continuous_em``, marginal ML, scores clipped at ε = 0.001):

1. **crm**: scores drawn from the CRM (a ~ LogNormal(0, 0.3), d ~ N(0, 1),
   σ ~ U(0.5, 1.2));
2. **beta**: scores drawn from the Beta model (same a and d, τ ~ U(1, 4));
3. **similarity**: ROUGE-L F1 of synthetic answers against synthetic references, from
   neither model. Item j's reference has L_j tokens (a third of the items are short
   answers of 1–3 tokens, the rest 5–40); an answer keeps each reference token, in
   order, with probability σ(a_j θ + d_j + e) (a_j ~ LogNormal(0, 0.3),
   d_j ~ N(−0.5, 1), e ~ N(0, 0.8²) per answer), and adds Poisson(λ_j v_n) tokens of its
   own (λ_j log-uniform on [0.1, 3] for short references and on [2, 40] for long ones, a
   verbosity v_n ~ LogNormal(0, 0.5) per subject) from a vocabulary disjoint from the
   reference's.
   The longest common subsequence is then the K tokens kept, and ROUGE-L F1 =
   2K/(L_j + K + F) (``synth.text_metrics.rouge_l``, checked on a sample). The scores
   have lumps at 0 (nothing kept) and at 1 (exact answers to short references), and a
   right-skewed middle, as ROUGE-L of model answers tends to.

For every fit: log-likelihood on the x scale, AIC, BIC, fit time (median of
``--repeats``, without standard errors), EM cycles, and r(θ̂, θ) with θ̂ the EAP score.
The model with the lower AIC (and BIC: both models have 3 parameters per item, so the
two criteria agree) is the better-fitting one. The similarity data are fitted again at
ε = 0.01, since the lumps' density, and so the comparison, depends on ε; and once on the
interior scores only (lumps as missing), where no clipping is involved.

    python benchmarks/bench_continuous.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.special import expit

from irt.continuous import ContinuousParams
from irt.continuous_em import ContinuousCalibrator
from irt.continuous_responses import ContinuousResponses
from irt.continuous_scoring import continuous_scores
from synth.text_metrics import rouge_l

SEED = 15
N_SUBJECTS, N_ITEMS = 2000, 50


def _model_data(kind: str, rng: np.random.Generator) -> tuple[ContinuousResponses, np.ndarray]:
    a = rng.lognormal(0.0, 0.3, N_ITEMS)
    d = rng.normal(0.0, 1.0, N_ITEMS)
    disp = rng.uniform(0.5, 1.2, N_ITEMS) if kind == "crm" else rng.uniform(1.0, 4.0, N_ITEMS)
    truth = ContinuousParams.create(kind, a, d, disp)
    theta = rng.normal(size=N_SUBJECTS)
    return ContinuousResponses.from_array(truth.simulate(theta, rng)), theta


def _similarity_data(rng: np.random.Generator) -> tuple[ContinuousResponses, np.ndarray]:
    """ROUGE-L F1 of synthetic answers (module docstring)."""
    short = rng.random(N_ITEMS) < 1 / 3
    length = np.where(short, rng.integers(1, 4, N_ITEMS), rng.integers(5, 41, N_ITEMS))
    a = rng.lognormal(0.0, 0.3, N_ITEMS)
    d = rng.normal(-0.5, 1.0, N_ITEMS)
    lo, hi = np.where(short, 0.1, 2.0), np.where(short, 3.0, 40.0)
    extra = np.exp(rng.uniform(np.log(lo), np.log(hi)))
    theta = rng.normal(size=N_SUBJECTS)
    verbosity = rng.lognormal(0.0, 0.5, N_SUBJECTS)
    keep = expit(a * theta[:, None] + d + rng.normal(0.0, 0.8, (N_SUBJECTS, N_ITEMS)))
    kept = rng.binomial(length, keep)
    own = rng.poisson(extra * verbosity[:, None])
    scores = 2 * kept / (length + kept + own)
    _check_rouge(rng, length, kept, own, scores)
    return ContinuousResponses.from_array(scores), theta


def _check_rouge(
    rng: np.random.Generator,
    length: np.ndarray,
    kept: np.ndarray,
    own: np.ndarray,
    scores: np.ndarray,
) -> None:
    """Build the token sequences of 300 answers and score them with the project's
    ROUGE-L: the closed form 2K/(L + K + F) must agree."""
    for _ in range(300):
        n, j = int(rng.integers(N_SUBJECTS)), int(rng.integers(N_ITEMS))
        reference = [f"r{k}" for k in range(length[j])]
        chosen = sorted(rng.choice(length[j], size=kept[n, j], replace=False))
        answer = [reference[k] for k in chosen]
        for f in range(own[n, j]):
            answer.insert(int(rng.integers(len(answer) + 1)), f"w{f}")
        assert abs(rouge_l(answer, reference) - scores[n, j]) < 1e-12


def _describe(data: ContinuousResponses) -> str:
    x = data.values[data.observed]
    mid = x[(x > 0) & (x < 1)]
    skew = float(((mid - mid.mean()) ** 3).mean() / mid.std() ** 3)
    return (
        f"{100 * np.mean(x == 0):.1f}% zeros, {100 * np.mean(x == 1):.1f}% ones, "
        f"interior mean {mid.mean():.3f}, median {np.median(mid):.3f}, skewness {skew:.2f}"
    )


def _fit_both(
    label: str, data: ContinuousResponses, theta: np.ndarray, repeats: int, epsilon: float
) -> None:
    print(f"\n{label}: {_describe(data)}")
    print(
        f"  {'model':<6} {'loglik':>12} {'AIC':>12} {'BIC':>12} {'seconds':>8} "
        f"{'cycles':>6} {'r(θ̂,θ)':>8}"
    )
    aic = {}
    for kind in ("crm", "beta"):
        times, fit = [], None
        for _ in range(repeats):
            fit = ContinuousCalibrator(kind, epsilon=epsilon, standard_errors=None).fit(data)
            times.append(fit.seconds_)
        assert fit is not None
        scores = continuous_scores(data, fit.params_)
        seen = data.observed.any(axis=1)
        r = float(np.corrcoef(scores.theta[seen], theta[seen])[0, 1])
        aic[kind] = fit.aic_
        print(
            f"  {kind:<6} {fit.loglik_:12.1f} {fit.aic_:12.1f} {fit.bic_:12.1f} "
            f"{np.median(times):8.2f} {fit.n_iter_:6d} {r:8.4f}"
        )
    best = min(aic, key=aic.__getitem__)
    other = "beta" if best == "crm" else "crm"
    print(f"  better fit: {best} (AIC lower by {aic[other] - aic[best]:.1f})")


def _standard_error_cost(data: ContinuousResponses) -> None:
    for kind in ("crm", "beta"):
        t0 = time.perf_counter()
        fit = ContinuousCalibrator(kind).fit(data)
        assert fit.params_.se_a is not None
        print(
            f"  {kind:<6} fit with observed-information SEs: {time.perf_counter() - t0:.2f} s, "
            f"median SE(a) {np.median(fit.params_.se_a):.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(SEED)
    print(f"{N_SUBJECTS:,} subjects x {N_ITEMS} items, seed {SEED}, ε = 0.001 unless told")
    crm, crm_theta = _model_data("crm", rng)
    beta, beta_theta = _model_data("beta", rng)
    similarity, sim_theta = _similarity_data(rng)
    _fit_both("crm data", crm, crm_theta, args.repeats, 1e-3)
    _fit_both("beta data", beta, beta_theta, args.repeats, 1e-3)
    _fit_both("similarity data (ROUGE-L)", similarity, sim_theta, args.repeats, 1e-3)
    _fit_both("similarity data, ε = 0.01", similarity, sim_theta, args.repeats, 1e-2)
    values = np.array(similarity.values)
    values[(values == 0) | (values == 1)] = np.nan
    interior = ContinuousResponses.from_array(values)
    _fit_both("similarity data, interior scores only", interior, sim_theta, args.repeats, 1e-3)
    print("\nstandard errors (similarity data, one fit each)")
    _standard_error_cost(similarity)


if __name__ == "__main__":
    main()
