"""Adaptive-testing benchmark: precision and speed of simulated CATs, and the cost of
one selection step, against the Python package ``mirt``'s CAT engine in the same run.

    python benchmarks/bench_cat.py            # with the peer (pip install -e ".[bench]")
    python benchmarks/bench_cat.py --no-peer

Pool: 3PL with a ~ LogNormal(0, 0.3), b ~ N(0, 1), c ~ U(0, 0.25), true parameters;
examinees θ ~ N(0, 1); MFI selection, ML estimation, 250 items; all seeded.

Batch selection (k items chosen per round at one estimate, so k API calls run at once)
is measured on the same pool and examinees at 50 and 250 items: RMSE and τ against
k = 1, averaged over 5 seeds of the answers.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from scipy.stats import kendalltau

from cat.engine.estimators import MLEstimator
from cat.engine.selection import MaxInfo, PoolInfo, SelectionState
from cat.engine.simulation import CATDesign, simulate_cat
from cat.engine.stopping import StoppingRule
from irt.simulate import random_params

SEED = 20261122


def _row(name: str, seconds: float, rmse: float, tau: float, ratio: str, target: str) -> str:
    per_examinee = seconds / 200 * 1e3
    return (
        f"{name:<22}{seconds:>9.2f}{per_examinee:>10.1f}{rmse:>8.4f}{tau:>8.4f}"
        f"  {ratio:>7}  {target}"
    )


def _peer(params: object, theta: np.ndarray) -> tuple[float, np.ndarray]:
    import mirt

    model = mirt.ThreeParameterLogistic(n_items=params.n_items)  # type: ignore[attr-defined]
    model.set_parameters(discrimination=params.a, difficulty=params.b, guessing=params.c)  # type: ignore[attr-defined]
    model._is_fitted = True  # true parameters, given rather than fitted
    engine = mirt.CATEngine(
        model,
        item_selection="MFI",
        stopping_rule="SE",
        se_threshold=1e-9,
        scoring_method="ML",
        max_items=250,
        seed=SEED,
    )
    t0 = time.perf_counter()
    results = engine.run_batch_simulation(theta)
    return time.perf_counter() - t0, np.array([r.theta for r in results])


def _selection_step(n_items: int, repeats: int = 2000) -> tuple[float, float]:
    """Build time of the information table, median time of one selection (one examinee)."""
    rng = np.random.default_rng(SEED)
    params = random_params(n_items, rng)
    t0 = time.perf_counter()
    pool = PoolInfo.build(params)
    build = time.perf_counter() - t0
    policy = MaxInfo()
    available = rng.random((1, n_items)) > 0.05  # a test well under way
    times = []
    for k in range(repeats):
        theta = np.array([rng.normal()])
        t0 = time.perf_counter()
        policy.select(pool, SelectionState.fresh(theta, available), rng)
        times.append(time.perf_counter() - t0)
        del k
    return build, statistics.median(times)


def _batch_cost(params: object, theta: np.ndarray, pool: PoolInfo) -> None:
    print("\nBatch selection: k items per round at one estimate (mean of 5 answer seeds)")
    print(f"{'length':>7}{'k':>5}{'rounds':>8}{'RMSE':>8}{'tau':>8}{'RMSE vs k=1':>13}")
    for length in (50, 250):
        base = None
        for k in (1, 5, 10, 25, 50):
            rmses, taus = [], []
            for rep in range(5):
                design = CATDesign(MaxInfo(), MLEstimator(), StoppingRule(length), batch_size=k)
                res = simulate_cat(params, theta, design, np.random.default_rng(SEED + rep), pool)  # type: ignore[arg-type]
                rmses.append(float(np.sqrt(np.mean((res.theta_hat - theta) ** 2))))
                taus.append(float(kendalltau(theta, res.theta_hat)[0]))
            rmse = float(np.mean(rmses))
            base = base or rmse
            rounds = -(-length // k)
            print(
                f"{length:>7}{k:>5}{rounds:>8}{rmse:>8.4f}{np.mean(taus):>8.4f}"
                f"{rmse / base:>12.3f}x"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-peer", action="store_true", help="do not run Python mirt")
    args = parser.parse_args()

    rng = np.random.default_rng(SEED)
    params = random_params(5000, rng)
    theta = rng.normal(size=200)
    print(f"5,000-item 3PL pool, 200 examinees, 250 items, MFI + ML (seed {SEED})")
    print(f"{'tool':<22}{'seconds':>9}{'ms/exam':>10}{'RMSE':>8}{'tau':>8}  {'ratio':>7}  target")
    pool = PoolInfo.build(params)
    design = CATDesign(MaxInfo(), MLEstimator(), StoppingRule(250))
    res = simulate_cat(params, theta, design, np.random.default_rng(SEED), pool)
    rmse = float(np.sqrt(np.mean((res.theta_hat - theta) ** 2)))
    tau = float(kendalltau(theta, res.theta_hat)[0])
    ratio = ""
    peer_line = ""
    if not args.no_peer:
        seconds, est = _peer(params, theta)
        ratio = f"{res.seconds / seconds:.3f}x"
        peer_line = _row(
            "Python mirt 1.2.0",
            seconds,
            float(np.sqrt(np.mean((est - theta) ** 2))),
            float(kendalltau(theta, est)[0]),
            "",
            "",
        )
    print(_row("ours", res.seconds, rmse, tau, ratio, "RMSE<=0.09 tau>=0.945 <5s"))
    if peer_line:
        print(peer_line)

    _batch_cost(params, theta, pool)

    print("\nOne selection step (MFI, one examinee, median of 2,000)")
    for n_items, target in ((5000, "< 0.2 ms"), (34000, "< 1 ms median")):
        build, step = _selection_step(n_items)
        print(
            f"  {n_items:>6,} items: {step * 1e3:.3f} ms  (target {target}; "
            f"information table built once per pool in {build:.2f} s)"
        )


if __name__ == "__main__":
    main()
