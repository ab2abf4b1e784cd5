"""Leaderboard-scale calibration: seconds, EM cycles, peak memory and recovery of a 3PL fit
as ``cat calibrate`` runs it, from a wide CSV file to the parameter file, on each path:
numpy (``--device cpu``), torch on the processors (``torch:cpu``) and torch on the GPU
(``cuda``, when torch sees one).

    python benchmarks/bench_scale.py                      # 10,000 x 30,000 and 10,000 x 100,000
    python benchmarks/bench_scale.py --sizes 2000x10000   # a quick look
    python benchmarks/bench_scale.py --devices cpu,cuda   # the paths to run
    python benchmarks/bench_scale.py --in-memory --sizes 100000x100000 --devices cuda
    python benchmarks/bench_scale.py --in-memory --model graded --sizes 10000x10000
    python benchmarks/bench_scale.py --threads            # BLAS threads: default vs one

``--in-memory`` leaves the file out: each size is simulated in memory (on the GPU when the
paths include one, which is how 100,000 x 100,000 is made in seconds) and fitted by
``EMCalibrator`` on every path in one process, so its times are the fits' alone.
``--model graded`` (in memory only) fits the graded model instead, by ``PolytomousCalibrator``
without standard errors: five categories, a ~ LogNormal(0, 0.3), thresholds a location
b ~ N(0, 1) ± 0.5 and ± 1.5 in θ; r(b) and max |Δb| are then of the items' locations −mean(d)/a.

Each size is simulated once (3PL: a ~ LogNormal(0, 0.3), b ~ N(0, 1), c ~ U(0, 0.25),
θ ~ N(0, 1), seeded) and written as a wide CSV under ``--workdir``; each fit then runs
in its own process, so that its peak resident memory (reading the file included) is its
own. Issue 30's targets on the 2-core, 24 GB development machine: 10,000 x 30,000 in no
more than 72 s and 3 GB; 10,000 x 100,000 in under 10 minutes and at most 8 bytes a
response cell. On a GPU: 10,000 x 30,000 at least 50 times faster than the numpy path on
the same machine, and 100,000 x 100,000 in under 30 s on one H100/H200. Each torch row
says how far its difficulties are from the numpy path's (max |Δb|) and how many times
faster its fit ran ("x numpy", fit seconds against fit seconds).

``--threads`` times R mirt's ``bfactor`` comparison (a bifactor 2PL on the 1,525 x 16
psychTools ability answers, four groups of four items) with the default BLAS threads and
with ``OPENBLAS_NUM_THREADS=1``: the default must never be slower.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
SEED = 20261126
DEFAULT_SIZES = "10000x30000,10000x100000"
#: Rows simulated and written at a time (their float probabilities stay ~100 MB).
_CHUNK = 100


def _simulate(n: int, j: int, folder: Path) -> Path:
    """The CSV of an n x j 3PL matrix and the true parameters beside it (kept between runs)."""
    from irt.models import probability
    from irt.simulate import random_params

    path = folder / f"scale_{n}x{j}.csv"
    truth = folder / f"scale_{n}x{j}_truth.npz"
    if path.exists() and truth.exists():
        return path
    rng = np.random.default_rng(SEED)
    params = random_params(j, rng, "3pl")
    theta = rng.normal(size=n)
    np.savez(truth, a=params.a, b=params.b, c=params.c, theta=theta)
    partial = path.with_suffix(".partial")
    with open(partial, "wb") as fh:
        fh.write(("subject_id," + ",".join(params.item_ids) + "\n").encode())
        row = np.empty(2 * j, dtype=np.uint8)
        row[1::2] = ord(",")
        row[-1] = ord("\n")
        for lo in range(0, n, _CHUNK):
            block = rng.random((min(_CHUNK, n - lo), j)) < probability(
                theta[lo : lo + _CHUNK], params
            )
            for k, answers in enumerate(block):
                row[0::2] = answers + ord("0")
                fh.write(f"s{lo + k:06d},".encode())
                fh.write(row.tobytes())
    partial.rename(path)
    return path


def _fit_worker(path: str, out: str, device: str) -> dict[str, Any]:
    """Runs in a child process: ``cat calibrate PATH --model 3pl --out OUT --device D``."""
    import warnings

    from cat.pools.calibration_job import calibrate

    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    outcome = calibrate(path, model="3pl", out=out, score_subjects=False, device=device)
    device_peak = 0
    if device.startswith(("cuda", "torch:cuda")):
        import torch

        device_peak = int(torch.cuda.max_memory_allocated())
    return {
        "seconds": time.perf_counter() - t0,
        "fit_seconds": outcome.report.seconds,
        "cycles": outcome.report.n_iter,
        "converged": outcome.report.converged,
        "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "device_peak": device_peak,
        "device": outcome.report.settings["device"],
    }


def _in_memory_worker(size: str, devices: str, model: str = "3pl") -> list[dict[str, Any]]:
    """Runs in a child process: one simulated matrix, fitted on each of ``devices``."""
    import warnings

    from irt.em import EMCalibrator
    from irt.polytomous_em import PolytomousCalibrator

    warnings.simplefilter("ignore")
    n, j = _sizes(size)[0]
    paths = devices.split(",")
    t0 = time.perf_counter()
    gpu = next((d.removeprefix("torch:") for d in paths if "cuda" in d), None)
    if model == "graded":
        responses, truth = _simulated_scores(n, j)
    else:
        responses, truth = _simulated_matrix(n, j, gpu)
    made = time.perf_counter() - t0
    rows = []
    for device in paths:
        on_gpu = "cuda" in device
        if on_gpu:
            import torch

            torch.cuda.reset_peak_memory_stats()
        if model == "graded":
            fit = PolytomousCalibrator("graded", standard_errors=None, device=device)
            fit.fit(responses)
            a = fit.params_.a
            b = -np.nanmean(fit.params_.d, axis=1) / a
        else:
            fit = EMCalibrator("3pl", device=device).fit(responses)
            a, b = fit.params_.a, fit.params_.b
        rows.append(
            {
                "device": fit.device_,
                "seconds": made + fit.seconds_,
                "fit_seconds": fit.seconds_,
                "cycles": fit.n_iter_,
                "converged": fit.converged_,
                "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                "device_peak": int(torch.cuda.max_memory_allocated()) if on_gpu else 0,
                "r_a": float(np.corrcoef(a, truth[0])[0, 1]),
                "r_b": float(np.corrcoef(b, truth[1])[0, 1]),
                "b": b.tolist(),
            }
        )
    return rows


def _simulated_matrix(n: int, j: int, gpu: str | None) -> tuple[Any, tuple[Any, Any]]:
    """A 3PL response matrix of n x j cells and the true (a, b): drawn on ``gpu`` by torch
    when given (seconds for 10^10 cells), else by numpy a chunk of rows at a time."""
    from irt.models import probability
    from irt.responses import ResponseMatrix
    from irt.simulate import random_params

    rng = np.random.default_rng(SEED)
    params = random_params(j, rng, "3pl")
    theta = rng.normal(size=n)
    codes = np.empty((n, j), dtype=np.int8)
    if gpu is None:
        for lo in range(0, n, _CHUNK):
            block = rng.random((min(_CHUNK, n - lo), j)) < probability(
                theta[lo : lo + _CHUNK], params
            )
            codes[lo : lo + _CHUNK] = block
    else:
        import torch

        generator = torch.Generator(device=gpu).manual_seed(SEED)
        a, b, c = (torch.as_tensor(v, device=gpu) for v in (params.a, params.b, params.c))
        th = torch.as_tensor(theta, device=gpu)
        rows = max(1, 2**28 // j)
        for lo in range(0, n, rows):
            z = a * (th[lo : lo + rows, None] - b)
            p = c + (1 - c) * torch.sigmoid(z)
            draw = torch.rand(p.shape, generator=generator, device=gpu, dtype=p.dtype)
            codes[lo : lo + rows] = (draw < p).to(torch.int8).cpu().numpy()
    subjects = tuple(f"s{k:06d}" for k in range(n))
    return ResponseMatrix(subjects, params.item_ids, codes), (params.a, params.b)


def _simulated_scores(n: int, j: int) -> tuple[Any, tuple[Any, Any]]:
    """Graded scores 0..4 of n x j cells and the items' true (a, location)."""
    from irt.polytomous_responses import PolytomousResponses

    rng = np.random.default_rng(SEED)
    a = rng.lognormal(0.0, 0.3, j)
    location = rng.normal(0.0, 1.0, j)
    d = -a[:, None] * (location[:, None] + np.array([-1.5, -0.5, 0.5, 1.5]))  # (j, 4)
    theta = rng.normal(size=n)
    scores = np.empty((n, j), dtype=np.int16)
    for lo in range(0, n, _CHUNK):
        eta = a * theta[lo : lo + _CHUNK, None]  # (rows, j)
        at_least = 1.0 / (1.0 + np.exp(-(eta[..., None] + d)))  # P(X >= k), k = 1..4
        draw = rng.random(eta.shape)[..., None]
        scores[lo : lo + _CHUNK] = (draw < at_least).sum(axis=-1)
    items = tuple(f"i{k:06d}" for k in range(j))
    subjects = tuple(f"s{k:06d}" for k in range(n))
    responses = PolytomousResponses.from_array(scores, subjects, items, [5] * j)
    return responses, (a, location)


def _bifactor_worker() -> dict[str, Any]:
    import warnings

    from irt.bifactor import BifactorCalibrator
    from itempool.formats.responses import read_responses

    warnings.simplefilter("ignore")
    data = read_responses(SHARED / "human" / "psychTools_ability.csv", id_column=False)
    t0 = time.perf_counter()
    fit = BifactorCalibrator().fit(data, [k // 4 for k in range(data.n_items)])
    return {"seconds": time.perf_counter() - t0, "cycles": fit.n_iter_, "loglik": fit.loglik_}


def _child(args: list[str], env: dict[str, str] | None = None) -> Any:
    done = subprocess.run(
        [sys.executable, __file__, "--worker", *args],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    if done.returncode != 0:
        raise SystemExit(f"worker {args} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _recovery(path: Path, params_csv: Path) -> tuple[float, float, Any]:
    """r(a) and r(b) with the true parameters, and the fitted difficulties."""
    from itempool.formats.params import read_params

    truth = np.load(path.with_name(path.stem + "_truth.npz"))
    fitted = read_params(params_csv)
    return (
        float(np.corrcoef(fitted.a, truth["a"])[0, 1]),
        float(np.corrcoef(fitted.b, truth["b"])[0, 1]),
        fitted.b,
    )


def _default_devices() -> str:
    """numpy and torch on the processors, and the GPU where torch sees one."""
    try:
        import torch
    except ImportError:
        return "cpu"
    return "cpu,torch:cpu,cuda" if torch.cuda.is_available() else "cpu,torch:cpu"


def _runs(
    n: int, j: int, devices: list[str], workdir: Path, in_memory: bool, model: str
) -> Iterator[dict[str, Any]]:
    """Each path's fit of the n x j matrix, as the table reads it."""
    if in_memory:
        yield from _child(["memory", f"{n}x{j}", ",".join(devices), model])
        return
    path = _simulate(n, j, workdir)
    for device in devices:
        out = workdir / f"params_{n}x{j}_{device.replace(':', '-')}.csv"
        r = _child(["fit", str(path), str(out), device])
        r["r_a"], r["r_b"], b = _recovery(path, out)
        r["b"] = b.tolist()
        yield r


def _sizes(text: str) -> list[tuple[int, int]]:
    out = []
    for part in text.split(","):
        n, j = part.lower().split("x")
        out.append((int(n), int(j)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=DEFAULT_SIZES, help="e.g. 2000x10000,10000x30000")
    parser.add_argument(
        "--devices",
        default=None,
        help="comma-separated --device values (default: cpu,torch:cpu and cuda if present)",
    )
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/cat-bench-scale"))
    parser.add_argument("--threads", action="store_true", help="the BLAS threads comparison")
    parser.add_argument(
        "--in-memory", action="store_true", help="simulate in memory and time the fits alone"
    )
    parser.add_argument(
        "--model", choices=("3pl", "graded"), default="3pl", help="graded: with --in-memory"
    )
    parser.add_argument("--worker", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.model == "graded" and not args.in_memory and args.worker is None:
        parser.error("--model graded runs with --in-memory")
    if args.worker is not None:
        kind, *rest = args.worker
        workers = {"fit": _fit_worker, "memory": _in_memory_worker, "bifactor": _bifactor_worker}
        print(json.dumps(workers[kind](*rest)))
        return
    devices = [d.strip() for d in (args.devices or _default_devices()).split(",") if d.strip()]
    source = "simulated in memory" if args.in_memory else "wide CSV -> params.csv"
    print(
        f"{os.cpu_count()} cores, default BLAS threads; {source}, {args.model}; "
        f"paths: {', '.join(devices)}"
    )
    total = "sim+fit s" if args.in_memory else "read+fit s"
    print(
        f"{'size':>16}{'cells':>7}  {'path':<12}{total:>11}{'fit s':>8}{'cycles':>7}"
        f"{'peak RSS':>10}{'B/cell':>7}{'GPU mem':>9}{'r(a)':>7}{'r(b)':>7}"
        f"{'max|Δb|':>9}{'x numpy':>8}"
    )
    args.workdir.mkdir(parents=True, exist_ok=True)
    for n, j in _sizes(args.sizes):
        cells = n * j
        numpy_b, numpy_seconds = None, None
        for r in _runs(n, j, devices, args.workdir, args.in_memory, args.model):
            ra, rb, b = r["r_a"], r["r_b"], np.asarray(r["b"])
            if r["device"] == "cpu" and numpy_b is None:
                numpy_b, numpy_seconds = b, r["fit_seconds"]
            gap = "" if numpy_b is None else f"{float(np.abs(b - numpy_b).max()):.1e}"
            faster = "" if numpy_seconds is None else f"{numpy_seconds / r['fit_seconds']:.1f}"
            gpu = f"{r['device_peak'] / 2**30:.2f}GB" if r["device_peak"] else "-"
            note = "" if r["converged"] else "  (cycle cap)"
            print(
                f"{n:>7,} x {j:<7,}{cells / 1e9:>6.2f}G  {r['device']:<12}"
                f"{r['seconds']:>11.1f}{r['fit_seconds']:>8.1f}{r['cycles']:>7}"
                f"{r['peak_rss'] / 2**30:>8.2f}GB{r['peak_rss'] / cells:>7.2f}{gpu:>9}"
                f"{ra:>7.3f}{rb:>7.3f}{gap:>9}{faster:>8}{note}",
                flush=True,
            )
    if args.threads:
        print("\nBLAS threads: bifactor 2PL, psychTools ability 1,525 x 16 (R's bfactor test)")
        one = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
        default = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
        for name, env in (("default", default), ("one thread", one)):
            r = _child(["bifactor"], env)
            print(
                f"{name:>12}: {r['seconds']:7.1f} s, {r['cycles']} cycles, loglik {r['loglik']:.4f}"
            )


if __name__ == "__main__":
    main()
