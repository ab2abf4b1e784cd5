"""Give the demo pools item parameters, calibrated from simulated participants.

    python item_pools/calibrate_demo_pools.py

No real model has answered the demo questions, so their parameters come from a
simulation, and the pools say so in ``pool.json`` ("calibration"): true parameters are
derived from each item's difficulty level (``catdemo.run.true_item_params``), 40 simulated
participants with θ ~ N(0, 1) answer every item, and a 3PL is fitted to those answers by
EM exactly as ``cat calibrate`` would. The participants become the pools' reference
subjects. Seeded: the output is the same on every run.
"""

from __future__ import annotations

import datetime as dt
import warnings
from pathlib import Path

import numpy as np

from cat.pools.calibration import record_calibration, reference_rows
from catdemo.run import true_item_params
from irt.em import EMCalibrator
from irt.errors import ConvergenceWarning
from irt.models import ItemParams, ModelKind
from irt.priors import ItemPriors
from irt.responses import ResponseMatrix
from irt.scoring import AbilityMethod, score_abilities
from irt.simulate import simulate_responses
from itempool import read_questions

HERE = Path(__file__).resolve().parent
SEED = 20261122
N_PARTICIPANTS = 40


def calibrate(pool_dir: Path, seed: int = SEED) -> None:
    pool = read_questions(pool_dir)
    truth = true_item_params(pool.items, seed)
    ids = tuple(item.id for item in pool.items)
    true = ItemParams(
        item_ids=ids,
        a=np.array([truth[i][0] for i in ids]),
        b=np.array([truth[i][1] for i in ids]),
        c=np.array([truth[i][2] for i in ids]),
        d=np.ones(len(ids)),
        model=ModelKind.THREE_PL,
    )
    rng = np.random.default_rng(seed)
    theta = np.sort(rng.normal(size=N_PARTICIPANTS))[::-1]
    simulated = simulate_responses(true, theta, rng)
    names = tuple(f"sim-{k + 1:02d}" for k in range(N_PARTICIPANTS))
    responses = ResponseMatrix(subject_ids=names, item_ids=ids, values=simulated.values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = EMCalibrator("3pl").fit(responses)
    abilities = score_abilities(responses, fit.params_, AbilityMethod.EAP)
    provenance = {
        "method": "em",
        "model": "3pl",
        "priors": ItemPriors.default_for("3pl").describe(),
        "seed": seed,
        "n_subjects": N_PARTICIPANTS,
        "n_iter": fit.n_iter_,
        "converged": bool(fit.converged_),
        "simulated": True,
        "note": "no real model answered these questions: the reference subjects are "
        f"{N_PARTICIPANTS} simulated participants (theta ~ N(0, 1)) answering by true "
        "parameters derived from each item's difficulty level (catdemo.run.true_item_params); "
        "written by item_pools/calibrate_demo_pools.py",
        "date": dt.date(2026, 11, 22).isoformat(),
    }
    record_calibration(pool_dir, fit.params_, reference_rows(responses, abilities), provenance)
    print(
        f"{pool_dir.name}: {len(ids)} items calibrated on {N_PARTICIPANTS} simulated participants"
    )


def main() -> None:
    for name in ("demo", "demo-en"):
        calibrate(HERE / name)


if __name__ == "__main__":
    main()
