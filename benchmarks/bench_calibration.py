"""Calibration benchmark: speed, memory and accuracy against the Python package ``mirt``.

Prints one table row per data set and tool; every row is measured in this run, on this
machine, so ratios compare like with like. Each fit runs in its own process so that the
peak memory (max RSS) belongs to that fit alone.

    python benchmarks/bench_calibration.py              # everything (several minutes)
    python benchmarks/bench_calibration.py --quick      # skip the 1,000 x 10,000 case
    python benchmarks/bench_calibration.py --no-peer    # our fits only

The peer is ``pip install 'cat-llm[bench]'`` (mirt==1.2.0, numpy and scipy only).
Simulated data: 3PL with a ~ LogNormal(0, 0.3), b ~ N(0, 1), c ~ U(0, 0.25), θ ~ N(0, 1),
seeded, so both tools fit the same matrix.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"

# name -> (subjects, items, missing share, targets)
SIMULATED: dict[str, tuple[int, int, float, str]] = {
    "2000x100": (2000, 100, 0.0, "r(a)>=0.89 r(b)>=0.95 <1s"),
    "40x3000": (40, 3000, 0.1, "r(b)>=0.85 r(θ)>=0.99 <5s"),
    "1000x10000": (1000, 10000, 0.0, "r(a)>=0.90 r(b)>=0.97 <15s <4GB"),
}
HUMAN = {
    "LSAT7": "mirt_LSAT7.csv",
    "LSAT6": "mirt_LSAT6.csv",
    "SLF": "mirt_SLF.csv",
    "SAT12_binary": "mirt_SAT12_binary.csv",
    "SAT12_binary_NA": "mirt_SAT12_binary_NA.csv",
    "ability": "psychTools_ability.csv",
    "ltm_Abortion": "ltm_Abortion.csv",
}
SEED = 20261122


def _simulate(case: str) -> tuple[Any, Any, Any]:
    from irt.simulate import random_params, simulate_responses

    n, j, missing, _ = SIMULATED[case]
    rng = np.random.default_rng(SEED)
    params = random_params(j, rng, "3pl")
    theta = rng.normal(size=n)
    return params, theta, simulate_responses(params, theta, rng, missing_rate=missing)


def _corr(x: Any, y: Any) -> float:
    return float(np.corrcoef(np.asarray(x, float), np.asarray(y, float))[0, 1])


def _worker(case: str, tool: str) -> dict[str, Any]:
    """Runs in a child process: one fit, its figures as JSON."""
    warnings.simplefilter("ignore")
    if case in SIMULATED:
        truth, theta, data = _simulate(case)
    elif case == "mmlu-pro":
        from itempool.formats.responses import read_responses

        truth, theta, data = None, None, read_responses(SHARED / "mmlu-pro" / "responses.csv.gz")
    else:
        from itempool.formats.responses import read_responses

        truth, theta = None, None
        data = read_responses(SHARED / "human" / HUMAN[case.split(":")[0]], id_column=False)
    model = case.split(":")[1] if ":" in case else "3pl"
    human = case.split(":")[0] in HUMAN
    out: dict[str, Any] = {}
    # Imports before the clock starts: both tools are timed on the fit alone.
    from irt.em import EMCalibrator
    from irt.priors import ItemPriors
    from irt.scoring import score_abilities

    if tool == "mirt":
        import mirt
    t0 = time.perf_counter()
    if tool == "ours":
        # Human data: mirt's set-up (no priors). Elsewhere: our defaults.
        fit = EMCalibrator(model, priors=ItemPriors.none() if human else None).fit(data)
        out["seconds"] = time.perf_counter() - t0
        a, b, c = fit.params_.a, fit.params_.b, fit.params_.c
        out.update(loglik=fit.loglik_, n_iter=fit.n_iter_, converged=fit.converged_)
        if theta is not None:
            out["theta_hat"] = score_abilities(data, fit.params_, "eap").theta.tolist()
    elif tool == "oracle":
        a, b, c = _known_theta_fit(data, theta)
        out["seconds"] = time.perf_counter() - t0
    else:
        matrix = data.values.astype(float)
        matrix[matrix < 0] = np.nan
        res = mirt.fit_mirt(matrix, model=model.upper(), verbose=False)
        out["seconds"] = time.perf_counter() - t0
        pars = res.model.parameters
        a = np.asarray(pars["discrimination"]).ravel()
        b = np.asarray(pars["difficulty"]).ravel()
        c = np.asarray(pars.get("guessing", np.zeros_like(a))).ravel()
        out.update(
            loglik=float(res.log_likelihood),
            n_iter=int(res.n_iterations),
            converged=bool(res.converged),
        )
        if theta is not None:
            out["theta_hat"] = np.asarray(mirt.fscores(res, matrix, method="EAP").theta).tolist()
    out.update(a=np.asarray(a).tolist(), b=np.asarray(b).tolist(), c=np.asarray(c).tolist())
    if truth is not None:
        out.update(r_a=_corr(a, truth.a), r_b=_corr(b, truth.b), r_c=_corr(c, truth.c))
        if "theta_hat" in out:
            out["r_theta"] = _corr(out["theta_hat"], theta)
    out.pop("theta_hat", None)
    # Peak resident memory of this process (KiB on Linux), the fit included.
    out["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _known_theta_fit(data: Any, theta: Any) -> tuple[Any, Any, Any]:
    """The information ceiling: items fitted with every subject's true θ (same priors)."""
    from irt.models import ModelKind
    from irt.mstep import MStepSpec, from_abcd, m_step, to_abcd
    from irt.priors import ItemPriors

    grid = np.linspace(-5, 5, 1001)
    nearest = np.abs(grid[None, :] - np.asarray(theta)[:, None]).argmin(axis=1)
    right = np.zeros((data.n_items, grid.size))
    total = np.zeros_like(right)
    np.add.at(right.T, nearest, (data.values == 1).astype(float))
    np.add.at(total.T, nearest, data.observed.astype(float))
    spec = MStepSpec(model=ModelKind.THREE_PL, priors=ItemPriors(), theta=grid)
    n = data.n_items
    start = from_abcd(np.ones(n), np.zeros(n), np.full(n, 0.15), np.ones(n), spec)
    a, b, c, _ = to_abcd(m_step(start, right, total, spec, max_newton=200), spec)
    return a, b, c


def _run(case: str, tool: str) -> dict[str, Any] | None:
    """One fit in a child process, which reports its own peak memory."""
    done = subprocess.run(
        [sys.executable, __file__, "--worker", case, tool],
        capture_output=True,
        text=True,
        check=False,
        timeout=3600,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [""])[-1]
        why = "killed (out of memory)" if done.returncode == -9 else f"exit {done.returncode}"
        print(f"  {case} {tool}: failed, {why} {last}".rstrip())
        return None
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _fmt(x: Any, spec: str = ".3f") -> str:
    return "—" if x is None else format(x, spec)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", nargs=2, metavar=("CASE", "TOOL"), help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="skip the 1,000 x 10,000 case")
    parser.add_argument("--no-peer", action="store_true", help="do not run Python mirt")
    parser.add_argument("--json", type=Path, help="also write all figures here")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(_worker(*args.worker)))
        return
    tools = ["ours"] if args.no_peer else ["ours", "mirt"]  # ours always runs first
    rows: dict[str, dict[str, Any]] = {}

    print(f"Simulated 3PL (seed {SEED}); figures: seconds, max RSS, r with the truth")
    print(
        f"{'data':<12}{'tool':<8}{'sec':>8}{'RSS MB':>8}{'r(a)':>7}{'r(b)':>7}{'r(c)':>7}"
        f"{'r(θ)':>8}{'iter':>6}  vs peer  target"
    )
    for case, (_, _, _, target) in SIMULATED.items():
        if args.quick and case == "1000x10000":
            continue
        ours = _run(case, "ours")
        if ours is None:
            continue
        rows[f"{case}/ours"] = ours
        peer = _run(case, "mirt") if "mirt" in tools else None
        ratio = f"{ours['seconds'] / peer['seconds']:.2f}x" if peer else ""
        print(_row(case, "ours", ours, ratio, target))
        if peer is not None:
            rows[f"{case}/mirt"] = peer
            print(_row(case, "mirt", peer, "", ""))
        if case == "1000x10000":
            oracle = _run(case, "oracle")
            if oracle is not None:
                rows[f"{case}/oracle"] = oracle
                print(_row(case, "known θ", oracle, "", "(ceiling: same priors, θ given)"))

    if (SHARED / "mmlu-pro").is_dir():
        res = _run("mmlu-pro", "ours")
        if res is not None:
            rows["mmlu-pro/ours"] = res
            print(
                f"\nReal: 32 LLMs x 12,032 MMLU-Pro items, 3PL: {res['seconds']:.2f} s, "
                f"{res['max_rss_mb']:.0f} MB, {res['n_iter']} cycles, "
                f"converged={res['converged']} (target: under 10 s, converged)"
            )
    if (SHARED / "human").is_dir():
        _human_table(rows, tools)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


def _row(case: str, tool: str, res: dict[str, Any], ratio: str, target: str) -> str:
    return (
        f"{case:<12}{tool:<8}{res['seconds']:>8.2f}{res['max_rss_mb']:>8.0f}"
        f"{_fmt(res.get('r_a')):>7}{_fmt(res.get('r_b')):>7}{_fmt(res.get('r_c')):>7}"
        f"{_fmt(res.get('r_theta'), '.4f'):>8}{res.get('n_iter', ''):>6}  {ratio:>7}  {target}"
    )


def _human_table(rows: dict[str, dict[str, Any]], tools: list[str]) -> None:
    import csv

    with (SHARED / "human" / "ref" / "summary.csv").open() as fh:
        ref = {(r["data"], r["model"]): r for r in csv.DictReader(fh)}
    print("\nReal human data, no priors, 61 points on [-6, 6] (R mirt 1.45.1 reference fits)")
    print(
        f"{'data':<17}{'model':<6}{'loglik ours':>14}{'− R mirt':>10}{'max|Δa|':>9}{'max|Δb|':>9}"
        f"{'sec':>7}{'py mirt s':>10}{'ratio':>7}  R mirt converged"
    )
    for name in HUMAN:
        for model in ("2pl", "3pl"):
            r_ref = ref[(name, model.upper())]
            ours = _run(f"{name}:{model}", "ours")
            if ours is None:
                continue
            rows[f"{name}:{model}/ours"] = ours
            with (SHARED / "human" / "ref" / f"{name}_mirt_{model.upper()}.csv").open() as fh:
                items = list(csv.DictReader(fh))
            da = max(abs(x - float(i["a"])) for x, i in zip(ours["a"], items, strict=True))
            db = max(abs(x - float(i["b"])) for x, i in zip(ours["b"], items, strict=True))
            peer_s, ratio = "—", "—"
            if "mirt" in tools:
                peer = _run(f"{name}:{model}", "mirt")
                if peer is not None:
                    rows[f"{name}:{model}/mirt"] = peer
                    peer_s = f"{peer['seconds']:.2f}"
                    ratio = f"{ours['seconds'] / peer['seconds']:.2f}x"
            print(
                f"{name:<17}{model:<6}{ours['loglik']:>14.3f}"
                f"{ours['loglik'] - float(r_ref['logLik']):>10.4f}{da:>9.4f}{db:>9.4f}"
                f"{ours['seconds']:>7.2f}{peer_s:>10}{ratio:>7}  {r_ref['converged']}"
            )


if __name__ == "__main__":
    main()
