"""Pool health (issue 6): the item-fit test's false-positive rate and power, and
``cat pool fit`` on real LLM data.

    python benchmarks/bench_item_fit.py     # ~2.5 min; the real-data part needs ../shared/data

1. False positives: pools simulated from the 3PL (a ~ LogNormal(0, 0.3), b ~ N(0, 1),
   c ~ U(0, 0.25)), calibrated by EM with the default priors, subjects scored (EAP),
   ``cat.pools.fit.check_pool_fit`` run as the CLI runs it. Reported: the share of items
   with unadjusted p < 0.05 (target 5% ± 2 points) and items flagged as misfit after
   Benjamini–Hochberg (a false discovery each).
2. Power: 6% of the items replaced by misfitting ones, 2% of each kind — a wrong key
   (right answers fall with θ), an ambiguous question (upper asymptote 0.5), a question
   leaked to weak models (P = 0.9 below θ = 0 on a hard item) — and the share of each
   found by the misfit test and by any flag (misfit or key_suspect).
3. ``cat pool fit`` on ``../shared/data/mmlu-pro`` (32 LLMs x 12,032 items; target under
   30 s) and on ``../shared/data/oll-arc`` (320 x 735): wall time of the command and its
   flags.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from cat.pools.fit import FitSettings, PoolFitResult, check_pool_fit
from irt.em import EMCalibrator
from irt.errors import ConvergenceWarning
from irt.models import probability
from irt.priors import ItemPriors
from irt.responses import ResponseMatrix
from irt.simulate import random_params
from itempool import LoadedPool, PoolItem, PoolManifest

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
SETTINGS = FitSettings(replicates=50, seed=0)
KINDS = ("wrong key", "ambiguous", "leaked")


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-x)))


def _simulate(
    n_subjects: int, n_items: int, seed: int, planted: float
) -> tuple[LoadedPool, ResponseMatrix, np.ndarray]:
    """A calibrated in-memory pool, its responses and each item's kind (0 = fits)."""
    rng = np.random.default_rng(seed)
    true = random_params(n_items, rng)
    theta = rng.normal(size=n_subjects)
    p = probability(theta, true)
    kind = np.zeros(n_items, dtype=int)
    per_kind = round(planted * n_items / 3)
    chosen = rng.choice(n_items, 3 * per_kind, replace=False)
    for k, j in enumerate(chosen):
        kind[j] = k % 3 + 1
        b, c = true.b[j], true.c[j]
        if kind[j] == 1:
            p[:, j] = c + (0.85 - c) * _sigmoid(-1.5 * (theta - b))
        elif kind[j] == 2:
            p[:, j] = c + (0.5 - c) * _sigmoid(1.7 * (theta - b))
        else:
            p[:, j] = np.where(theta < 0, 0.9, c + (1 - c) * _sigmoid(1.7 * (theta - 1.5)))
    values = (rng.random(p.shape) < p).astype(np.int8)
    subjects = tuple(f"s{i:04d}" for i in range(n_subjects))
    responses = ResponseMatrix(subjects, true.item_ids, values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        params = EMCalibrator("3pl").fit(responses).params_
    manifest = PoolManifest(
        name="simulated",
        language="en",
        model=params.model,
        calibration={"priors": ItemPriors().describe()},
    )
    items = tuple(
        PoolItem(id=i, question=f"q {i}", options={"A": "1", "B": "2"}, answer="A")
        for i in true.item_ids
    )
    return LoadedPool(Path("simulated"), manifest, items, params, []), responses, kind


def _flags(report: PoolFitResult, reason: str) -> np.ndarray:
    return np.array([any(f.reason == reason for f in row.flags) for row in report.item_rows])


def false_positives() -> None:
    print("\n1. False positives on data simulated from the 3PL (50 bootstrap replicates)")
    print(f"{'subjects':>9}{'items':>7}{'seeds':>6}{'p<0.05':>9}{'BH misfit flags':>17}{'s':>6}")
    for n_subjects, n_items, seeds in (
        (32, 2000, 3),
        (40, 2000, 3),
        (100, 1000, 3),
        (320, 735, 3),
        (1000, 100, 3),
    ):
        shares, flags = [], 0
        t0 = time.perf_counter()
        for seed in range(seeds):
            pool, responses, _ = _simulate(n_subjects, n_items, seed, 0.0)
            report = check_pool_fit(pool, responses, SETTINGS)
            p = np.array([row.p for row in report.item_rows], dtype=float)
            shares.append(np.nanmean(p < 0.05))
            flags += int(_flags(report, "misfit").sum())
            warning = report.warning
        note = "  (θ imprecise: warned)" if warning else ""
        print(
            f"{n_subjects:>9}{n_items:>7}{seeds:>6}{np.mean(shares):>9.3f}{flags:>17}"
            f"{time.perf_counter() - t0:>6.0f}{note}"
        )


def power() -> None:
    print("\n2. Power: 6% planted misfits (2% of each kind), found after BH at 0.05")
    head = "".join(f"{k:>22}" for k in KINDS)
    print(f"{'subjects':>9}{'items':>7}{head}{'good items flagged':>20}")
    print(f"{'':>16}" + "".join(f"{'misfit / any flag':>22}" for _ in KINDS))
    for n_subjects, n_items in ((40, 2000), (100, 1000), (320, 735)):
        found = {k: [0, 0, 0] for k in range(1, 4)}
        false = 0
        for seed in range(2):
            pool, responses, kind = _simulate(n_subjects, n_items, 100 + seed, 0.06)
            report = check_pool_fit(pool, responses, SETTINGS)
            misfit = _flags(report, "misfit")
            any_flag = misfit | _flags(report, "key_suspect")
            for k in range(1, 4):
                found[k][0] += int(misfit[kind == k].sum())
                found[k][1] += int(any_flag[kind == k].sum())
                found[k][2] += int((kind == k).sum())
            false += int(misfit[kind == 0].sum())
        cells = "".join(
            f"{found[k][0] / found[k][2]:>13.2f} / {found[k][1] / found[k][2]:.2f}"
            for k in range(1, 4)
        )
        print(f"{n_subjects:>9}{n_items:>7}{cells}{false:>20}")


def _cat(*args: str) -> tuple[float, str]:
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "cat", *args], capture_output=True, text=True, check=True
    )
    return time.perf_counter() - t0, done.stdout


def real_data() -> None:
    if not SHARED.is_dir():
        print(f"\n3. skipped: shared data not found at {SHARED}")
        return
    print("\n3. cat pool fit on real LLM data")
    with tempfile.TemporaryDirectory() as tmp:
        for name, folder, items in (
            ("MMLU-Pro", "mmlu-pro", True),
            ("Open LLM Leaderboard ARC", "oll-arc", False),
        ):
            data = SHARED / folder / "responses.csv.gz"
            pool = Path(tmp) / folder
            if items:
                _cat(
                    "pool",
                    "import",
                    "questions",
                    str(SHARED / folder / "items.csv.gz"),
                    "--out",
                    str(pool),
                    "--language",
                    "en",
                    "--map",
                    "id=question_id",
                    "--map",
                    "scenario=category",
                )
            else:
                _synthetic_items(data, pool)
            _cat(
                "calibrate",
                str(data),
                "--model",
                "3pl",
                "--out",
                str(pool / "params.csv"),
                "--pool",
                str(pool),
            )
            out = Path(tmp) / f"{folder}-fit.json"
            seconds, stdout = _cat(
                "pool", "fit", str(pool), str(data), "--out", str(out), "--show", "15"
            )
            report = json.loads(out.read_text())
            print(f"\n{name}: `cat pool fit` took {seconds:.1f} s")
            print(stdout)
            flagged = [r for r in report["item_rows"] if r["flags"]]
            by_reason: dict[str, list[str]] = {}
            for row in flagged:
                for f in row["flags"]:
                    by_reason.setdefault(f["reason"], []).append(row["item_id"])
            for reason, ids in by_reason.items():
                shown = ", ".join(ids[:12]) + (" …" if len(ids) > 12 else "")
                print(f"  {reason} ({len(ids)}): {shown}")


def _synthetic_items(responses: Path, pool: Path) -> None:
    """A pool folder for a matrix without question text (ARC): placeholder items."""
    from itempool.formats.responses import read_responses

    matrix = read_responses(responses)
    pool.mkdir(parents=True)
    (pool / "pool.json").write_text(json.dumps({"name": pool.name, "language": "en"}))
    (pool / "items.jsonl").write_text(
        "".join(
            json.dumps(
                {"id": i, "question": f"item {i}", "options": {"A": "1", "B": "2"}, "answer": "A"}
            )
            + "\n"
            for i in matrix.item_ids
        )
    )


def main() -> None:
    t0 = time.perf_counter()
    false_positives()
    power()
    real_data()
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
