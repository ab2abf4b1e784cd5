"""What the audit items cost: the default design with and without them, paired.

    python benchmarks/bench_audits.py                       # ARC, holdout draws 0..4
    python benchmarks/bench_audits.py --data mmlu-pro --seeds 0 --leave-one-out

Replays held-out models of a shared real matrix through ``cat validate``'s default (what
``cat assess`` runs) twice per holdout draw: as shipped, with an audit item among the
questions after the 30th (``cat.engine.audit``), and with the audits switched off (the
schedule patched to ask none, here only). τ and MAE at 30, 100 and 250 items per draw,
then their means. Issue 41's target: the default's τ and MAE no worse than without.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

import cat.designs.audited as designs_audit
import cat.engine.audit as engine_audit
from cat.engine.registry import DEFAULT
from cat.validation.report import validate
from itempool.formats.responses import read_responses

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
LENGTHS = (30, 100, 250)


def _no_audits(n_given: npt.ArrayLike, every: int | None) -> npt.NDArray[np.float64]:
    return np.full(np.shape(n_given), np.nan)


def _run(
    data: Any, seed: int, audits: bool, split: dict[str, Any]
) -> dict[int, tuple[float, float]]:
    """τ and MAE of the default per length, with or without the audit items."""
    # Both modules that look the schedule up, patched and put back (here only).
    modules = (vars(engine_audit), vars(designs_audit))
    shipped = [module["audit_targets"] for module in modules]
    for module in modules:
        module["audit_targets"] = module["audit_targets"] if audits else _no_audits
    try:
        report = validate(data, lengths=LENGTHS, policies=[DEFAULT], seed=seed, repeats=1, **split)
    finally:
        for module, original in zip(modules, shipped, strict=True):
            module["audit_targets"] = original
    return {
        row.length: (float(row.kendall_tau or np.nan), row.mae)
        for row in report.results
        if row.policy == DEFAULT
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="oll-arc", help="a folder of ../shared/data")
    parser.add_argument("--seeds", default="0,1,2,3,4", help="holdout draws")
    parser.add_argument("--leave-one-out", action="store_true")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    data = read_responses(SHARED / args.data / "responses.csv.gz")
    split: dict[str, Any] = {"leave_one_out": True} if args.leave_one_out else {"holdout": 0.3}
    totals: dict[tuple[bool, int], list[tuple[float, float]]] = {}
    print("| draw | audits | " + " | ".join(f"{n} items τ / MAE" for n in LENGTHS) + " |")
    print("|---|---|" + "---|" * len(LENGTHS))
    for seed in (int(s) for s in args.seeds.split(",")):
        for audits in (False, True):
            rows = _run(data, seed, audits, split)
            cells = []
            for n in LENGTHS:
                totals.setdefault((audits, n), []).append(rows[n])
                cells.append(f"{rows[n][0]:.3f} / {rows[n][1]:.4f}")
            print(
                f"| {seed} | {'yes' if audits else 'no'} | " + " | ".join(cells) + " |", flush=True
            )
    for audits in (False, True):
        means = [np.mean(totals[(audits, n)], axis=0) for n in LENGTHS]
        mean = " | ".join(f"{t:.3f} / {m:.4f}" for t, m in means)
        print(f"| mean | {'yes' if audits else 'no'} | {mean} |")


if __name__ == "__main__":
    main()
