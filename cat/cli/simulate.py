"""``cat simulate``: adaptive tests of simulated examinees on a calibrated pool."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import Any

import numpy as np
import typer
from rich.table import Table
from scipy.stats import kendalltau

from cat.cli.common import check_writable, fail, handle_errors, progress_bar, stdout
from cat.constraints import MaxExposure
from cat.exposure import SympsonHetter, sympson_hetter_parameters
from cat.selection import PoolInfo
from cat.simulation import CATDesign, CATResult, simulate_cat
from cat.stopping import StoppingRule
from cat.strategies import make_estimator, make_policy
from irt.models import ItemParams
from irt.params_io import read_params
from irt.types import FloatArray, IntArray

#: Simulated examinees per round and rounds when setting Sympson-Hetter parameters.
SH_EXAMINEES, SH_ROUNDS = 1000, 30


class PolicyName(StrEnum):
    MFI = "mfi"
    KL = "kl"
    RANDOM = "random"
    RANDOMESQUE = "randomesque"
    ASTRAT = "astrat"


class EstimatorName(StrEnum):
    MLE = "mle"
    MAP = "map"
    EAP = "eap"
    WLE = "wle"


@handle_errors
def simulate(
    params: Path = typer.Option(..., "--params", help="Item parameters (params.csv)."),
    examinees: int = typer.Option(..., "--examinees", min=1, help="Simulated examinees."),
    length: int = typer.Option(250, "--length", min=1, help="Maximum test length."),
    out: Path = typer.Option(..., "--out", help="Write the results here (JSON)."),
    policy: PolicyName = typer.Option(
        PolicyName.MFI,
        "--policy",
        help="Item selection: maximum Fisher information, Kullback-Leibler, random, "
        "randomesque (random among the top k), a-stratified with b-blocking.",
    ),
    estimator: EstimatorName = typer.Option(
        EstimatorName.MLE,
        "--estimator",
        help="Ability estimator (ML falls back to MAP while all answers agree).",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of abilities and answers; recorded."),
    se_target: float | None = typer.Option(
        None, "--se-target", min=0.0, help="Also stop once SE reaches this."
    ),
    min_length: int = typer.Option(0, "--min-length", min=0, help="Never stop before this."),
    randomesque_k: int = typer.Option(5, "--randomesque-k", min=1, help="k for randomesque."),
    max_exposure: float | None = typer.Option(
        None, "--max-exposure", min=0.0, max=1.0, help="Cap each item's exposure rate."
    ),
    sympson_hetter: float | None = typer.Option(
        None,
        "--sympson-hetter",
        min=0.0,
        max=1.0,
        help="Sympson-Hetter exposure control at this rate; its parameters are first "
        "set by simulating 1,000 other examinees per round (up to 30 rounds: minutes "
        "on a large pool).",
    ),
    batch_size: int = typer.Option(
        1, "--batch-size", min=1, help="Items chosen per round at one estimate (parallel calls)."
    ),
) -> None:
    """Give N simulated examinees (θ ~ N(0, 1)) an adaptive test and score the result.

    Example:

      cat simulate --params params.csv --examinees 200 --length 250 --out sim.json
    """
    check_writable(out)
    pool_params = read_params(params)
    rng = np.random.default_rng(seed)
    theta_true = rng.normal(size=examinees)
    chosen_policy = make_policy(policy.value, length, randomesque_k)
    chosen_estimator = make_estimator(estimator.value)
    if max_exposure is not None and sympson_hetter is not None:
        raise fail("choose one of --max-exposure and --sympson-hetter")
    if max_exposure is not None:
        chosen_policy = MaxExposure(chosen_policy, max_exposure)
    stopping = StoppingRule(
        max_items=length, se_target=se_target, min_items=min(min_length, length)
    )
    design = CATDesign(chosen_policy, chosen_estimator, stopping, batch_size)
    pool = PoolInfo.build(pool_params)
    exposure_control: dict[str, Any] | None = None
    if sympson_hetter is not None:
        with progress_bar("setting Sympson-Hetter parameters", total=SH_ROUNDS) as update:

            def report_round(n: int, largest: float) -> None:
                update(
                    completed=n, description=f"Sympson-Hetter round {n + 1}: max rate {largest:.3f}"
                )

            k, rates = _sympson_hetter(
                pool_params, pool, design, sympson_hetter, seed, report_round
            )
        design = replace(design, exposure=SympsonHetter(tuple(k)))
        exposure_control = {
            "method": "sympson-hetter",
            "max_rate": sympson_hetter,
            "n_controlled": int((k < 1).sum()),
            "min_k": float(k.min()),
            "calibration_max_rate": float(rates.max()),
            "calibration_examinees_per_round": SH_EXAMINEES,
        }
    with progress_bar(f"simulating {examinees} examinees", total=None):
        result = simulate_cat(pool_params, theta_true, design, rng, pool)
    settings = {
        "params": str(params),
        "n_pool": pool_params.n_items,
        "examinees": examinees,
        "length": length,
        "policy": policy.value,
        "estimator": estimator.value,
        "seed": seed,
        "se_target": se_target,
        "batch_size": batch_size,
        "max_exposure": max_exposure,
        "exposure_control": exposure_control,
        "min_length": min_length,
        "randomesque_k": randomesque_k if policy is PolicyName.RANDOMESQUE else None,
    }
    report = _report(result, theta_true, pool_params.item_ids, settings)
    out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    _print(report["summary"], settings, out)


def _sympson_hetter(
    params: ItemParams,
    pool: PoolInfo,
    design: CATDesign,
    max_rate: float,
    seed: int,
    progress: Callable[[int, float], None],
) -> tuple[FloatArray, FloatArray]:
    """K for the pool under this design, from new N(0, 1) examinees each round (their
    seed is derived from ``seed`` so that the examinees reported are not the ones K was
    fitted to)."""
    rng = np.random.default_rng([seed, 1])

    def run(screen: SympsonHetter) -> IntArray:
        test = replace(design, exposure=screen)
        return simulate_cat(params, rng.normal(size=SH_EXAMINEES), test, rng, pool).items

    return sympson_hetter_parameters(params.n_items, run, max_rate, SH_ROUNDS, progress)


def _summary(result: CATResult, theta_true: FloatArray, n_pool: int) -> dict[str, float]:
    err = result.theta_hat - theta_true
    n = len(err)
    tau = float(kendalltau(theta_true, result.theta_hat)[0]) if n > 1 else float("nan")
    return {
        "bias": float(err.mean()),
        "rmse": float(np.sqrt(np.mean(err**2))),
        "kendall_tau": tau,
        "seconds": result.seconds,
        "seconds_per_examinee": result.seconds / n,
        "max_exposure": float(result.exposure(n_pool).max()),
        "mean_length": float(result.n_items.mean()),
        "mean_se": float(result.se.mean()),
    }


def _report(
    result: CATResult,
    theta_true: FloatArray,
    item_ids: tuple[str, ...],
    settings: dict[str, Any],
) -> dict[str, Any]:
    examinees = [
        {
            "theta_true": float(theta_true[k]),
            "theta_hat": float(result.theta_hat[k]),
            "se": float(result.se[k]),
            "items": [item_ids[j] for j in result.items[k] if j >= 0],
            "n_items": int(result.n_items[k]),
            "stop_reason": result.stop_reason[k],
        }
        for k in range(len(theta_true))
    ]
    return {
        "summary": _summary(result, theta_true, len(item_ids)),
        "settings": settings,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "examinees": examinees,
    }


def _print(summary: dict[str, float], settings: dict[str, Any], out: Path) -> None:
    table = Table(
        title=f"CAT simulation: {settings['policy']} + {settings['estimator']}, "
        f"{settings['examinees']} examinees, pool of {settings['n_pool']:,}",
        show_header=False,
    )
    table.add_column(style="bold")
    table.add_column()
    table.add_row("mean length", f"{summary['mean_length']:.1f} items")
    table.add_row("bias", f"{summary['bias']:+.4f}")
    table.add_row("RMSE", f"{summary['rmse']:.4f}")
    table.add_row("mean SE", f"{summary['mean_se']:.4f}")
    table.add_row("Kendall τ", f"{summary['kendall_tau']:.4f}")
    table.add_row("max exposure", f"{summary['max_exposure']:.3f}")
    table.add_row(
        "time", f"{summary['seconds']:.2f} s ({summary['seconds_per_examinee'] * 1e3:.1f} ms each)"
    )
    stdout.print(table)
    stdout.print(f"results written to {out}")
