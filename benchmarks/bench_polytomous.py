"""Polytomous calibration (``irt.polytomous_em``): issue 15's recovery target and the
fit against R mirt's Science figures, printed.

1. 2,000 subjects x 50 graded items with 4 categories (seed 13): r(thresholds) >= 0.95,
   r(a) >= 0.90, fit time < 5 s (median of ``--repeats`` fits, without standard errors
   and with the cross-product ones).
2. Science (392 x 4, ../shared/data/human/polytomous): each mirt fit's coefficients as
   mean relative differences (mirt's tests allow 1e-2), and our log-likelihood beside
   the one at mirt's asserted parameters.

    python benchmarks/bench_polytomous.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from irt.polytomous import PolytomousParams
from irt.polytomous_em import PolytomousCalibrator
from irt.polytomous_estep import polytomous_log_likelihood
from irt.polytomous_responses import PolytomousResponses

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "human" / "polytomous"


def _simulate(params: PolytomousParams, n: int, rng: np.random.Generator) -> PolytomousResponses:
    theta = rng.normal(size=n)
    prob = params.probabilities(theta)  # (N, J, K)
    cumulative = np.cumsum(prob, axis=2)
    draws = rng.random((n, params.n_items, 1))
    scores = (draws > cumulative).sum(axis=2)
    return PolytomousResponses.from_array(scores, n_categories=list(params.n_categories))


def recovery(repeats: int) -> None:
    rng = np.random.default_rng(13)
    a = rng.lognormal(0.2, 0.3, 50)
    d = -np.sort(rng.normal(0.0, 1.2, (50, 3)), axis=1) + np.array([0.8, 0.0, -0.8])
    truth = PolytomousParams.create("graded", a, d)
    data = _simulate(truth, 2000, rng)
    print("2,000 x 50 graded items, 4 categories (targets: r(d) >= 0.95, r(a) >= 0.90, < 5 s)")
    for se in (None, "xpd"):
        times, fit = [], None
        for _ in range(repeats):
            t0 = time.perf_counter()
            fit = PolytomousCalibrator(standard_errors=se).fit(data)
            times.append(time.perf_counter() - t0)
        assert fit is not None
        r_a = float(np.corrcoef(fit.params_.a, a)[0, 1])
        r_d = float(np.corrcoef(fit.params_.d.ravel(), d.ravel())[0, 1])
        label = "no SEs" if se is None else f"{se} SEs"
        print(
            f"  {label:<9} {np.median(times):6.2f} s median of {repeats} "
            f"({fit.n_iter_} cycles)  r(a) {r_a:.4f}  r(d) {r_d:.4f}"
        )


def _mean_relative(x: np.ndarray, y: np.ndarray) -> float:
    differ = x != y
    return float(np.mean(np.abs(x[differ] - y[differ])) / np.mean(np.abs(y[differ])))


def science() -> None:
    refs = {r["id"]: r for r in json.loads((DATA / "refs.json").read_text())}
    raw = np.loadtxt(DATA / "Science.csv", delimiter=",", skiprows=1) - 1
    data = PolytomousResponses.from_array(raw)
    print("\nScience (392 x 4) against R mirt (tolerance 1e-2, mean relative)")
    for ref_id, types in (
        ("science_graded_1f", ["graded"] * 4),
        ("science_graded3_gpcm1_SEM", ["graded"] * 3 + ["gpcm"]),
        ("science_sequential_1f", ["sequential"] * 4),
    ):
        fit = PolytomousCalibrator(item_types=types, standard_errors=None).fit(data)
        figures = refs[ref_id]["figures"]
        coef = next(f for f in figures if "coef" in f["what"] and isinstance(f["value"], list))
        values = np.asarray(coef["value"], dtype=float)
        if ref_id.endswith("SEM"):
            # (estimate, CI low, CI high) per parameter; the gpcm item's fixed scoring
            # ak0..ak3 and d0 sit between its slope and its free intercepts.
            estimates = values[0::3]
            values = np.r_[estimates[:13], estimates[18:21]]
        ours = np.concatenate([np.append(fit.params_.a[j], fit.params_.d[j, :3]) for j in range(4)])
        mirt = PolytomousParams.create(types, values[0:16:4], values[:16].reshape(4, 4)[:, 1:])
        at_mirt = polytomous_log_likelihood(data, mirt)
        print(
            f"  {ref_id:<28} mean rel. diff {_mean_relative(ours, values[:16]):.1e}  "
            f"loglik ours {fit.loglik_:.4f}  at mirt's {at_mirt:.4f}"
        )
    _science_nominal(data, refs["science_graded3_nominal1"])


def _science_nominal(data: PolytomousResponses, ref: dict[str, object]) -> None:
    """Items 1-3 graded (a1, d1..d3), item 4 nominal (a1, ak0..ak3, d0..d3; mirt fixes
    ak0 = d0 = 0 and ak3 = 3), then the latent mean and variance."""
    types = ["graded"] * 3 + ["nominal"]
    fit = PolytomousCalibrator(item_types=types, standard_errors=None).fit(data)
    figures = ref["figures"]
    assert isinstance(figures, list)
    values = np.asarray(next(f for f in figures if f["what"] == "coefficients")["value"])
    p = fit.params_
    assert p.ak is not None
    ours = np.concatenate([np.append(p.a[j], p.d[j]) for j in range(3)])
    ours = np.r_[ours, p.a[3], 0.0, p.ak[3], 0.0, p.d[3], 0.0, 1.0]
    block = values[:12].reshape(3, 4)
    mirt = PolytomousParams.create(
        types,
        np.r_[block[:, 0], values[12]],
        [*block[:, 1:].tolist(), values[18:21].tolist()],
        ak=[[], [], [], values[14:17].tolist()],
    )
    at_mirt = polytomous_log_likelihood(data, mirt)
    print(
        f"  {'science_graded3_nominal1':<28} mean rel. diff {_mean_relative(ours, values):.1e}  "
        f"loglik ours {fit.loglik_:.4f}  at mirt's {at_mirt:.4f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    recovery(args.repeats)
    if DATA.is_dir():
        science()
    else:
        print(f"\n(Science data not found at {DATA}: mirt comparison skipped)")


if __name__ == "__main__":
    main()
