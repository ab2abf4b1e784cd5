"""Coverage of the 90% accuracy interval by kind of model: who the interval fails.

    python benchmarks/bench_coverage.py                         # ARC and MMLU-Pro, all
    python benchmarks/bench_coverage.py --data oll-arc --lengths 100,250 --train-size 30
    python benchmarks/bench_coverage.py --valid VALID.json --responses R.csv.gz

Replays held-out subjects of the shared real matrices through ``cat validate`` (the
default design, what ``cat assess`` runs, and random items scored by the same chosen
predictor), with intervals from training subjects only, and splits the held-out subjects
by kind:

- by their true accuracy: bottom 10%, middle 80%, top 10% (and each decile with
  ``--deciles``);
- by how unlike the other models their answers are: the share of items on which they
  differ from their nearest neighbour in the whole matrix (each subject's most similar
  other subject, over the items both answered), in terciles. It ranks models by how
  typical their answer pattern is, whatever the training draw; with 30 references the
  nearest reference lies farther still.

For each stratum: the share of subjects whose interval held the truth, the mean
half-width, and the mean error of the prediction (signed: positive overpredicts). A
VALID.json written by ``cat validate --out`` (which records each subject's interval) can
be read instead of a run (``--valid``, with its responses for the strata).

Issue 41's targets: coverage >= .85 in every stratum and <= .95 overall, at 100 and
250 items, with 30 references and with all, on ARC and MMLU-Pro.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cat.engine.registry import DEFAULT
from cat.validation.report import ValidationReport
from cat.validation.report import validate as validate_report
from irt.responses import ResponseMatrix
from itempool.formats.responses import read_responses

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
SEED = 0
#: Held-out design per data set when every other subject may be a reference.
ALL: dict[str, dict[str, Any]] = {
    "mmlu-pro": {"leave_one_out": True},
    "oll-arc": {"holdout": 0.3},
}


@dataclass(frozen=True)
class Stratum:
    name: str
    rows: np.ndarray  # indices into the report's subjects


def nearest_disagreement(data: ResponseMatrix) -> dict[str, float]:
    """Per subject, the share of items (answered by both) on which it differs from its
    most similar other subject."""
    answered = data.observed.astype(np.float64)
    right = np.where(data.observed, data.values, 0).astype(np.float64)
    wrong = answered - right
    both = answered @ answered.T
    agree = right @ right.T + wrong @ wrong.T
    with np.errstate(invalid="ignore", divide="ignore"):
        share = 1.0 - agree / both
    share[both == 0] = np.nan
    np.fill_diagonal(share, np.nan)
    nearest = np.nanmin(share, axis=1)
    return dict(zip(data.subject_ids, nearest.tolist(), strict=True))


def strata(report: ValidationReport, distance: dict[str, float], deciles: bool) -> list[Stratum]:
    """The groups of held-out subjects the table reports."""
    truth = np.array([s.truth for s in report.subjects])
    far = np.array([distance[s.subject_id] for s in report.subjects])
    n = len(truth)
    out = [Stratum("all", np.arange(n))]
    low, high = np.quantile(truth, [0.1, 0.9])
    out += [
        Stratum("accuracy: bottom 10%", np.flatnonzero(truth <= low)),
        Stratum("accuracy: middle 80%", np.flatnonzero((truth > low) & (truth < high))),
        Stratum("accuracy: top 10%", np.flatnonzero(truth >= high)),
    ]
    if deciles:
        edges = np.quantile(truth, np.linspace(0, 1, 11))
        which = np.clip(np.searchsorted(edges, truth, side="right") - 1, 0, 9)
        out += [Stratum(f"accuracy decile {d + 1}", np.flatnonzero(which == d)) for d in range(10)]
    cuts = np.quantile(far, [1 / 3, 2 / 3])
    which = np.searchsorted(cuts, far, side="right")
    names = ("most like others", "middle", "least like others")
    out += [Stratum(f"distance: {names[t]}", np.flatnonzero(which == t)) for t in range(3)]
    return out


def table(report: ValidationReport, distance: dict[str, float], title: str, deciles: bool) -> None:
    """Per length and row (the default; random items scored by the chosen predictor),
    coverage, mean half-width and mean signed error in each stratum."""
    lengths = report.settings.lengths
    rows = [(f"{DEFAULT}/chosen", "default"), ("random/chosen", "random")]
    groups = strata(report, distance, deciles)
    print(f"\n{title}")
    head = " | ".join(f"{label}@{n}: cov / ±half / err" for n in lengths for _, label in rows)
    print(f"| stratum | n | {head} |")
    print("|---|---|" + "---|" * (len(lengths) * len(rows)))
    for group in groups:
        cells = []
        for n in lengths:
            for key, _ in rows:
                name = f"{key}@{n}"
                subjects = [report.subjects[i] for i in group.rows]
                if not subjects or name not in subjects[0].covered:
                    cells.append("—")
                    continue
                cov = np.mean([s.covered[name] for s in subjects])
                half = np.mean(
                    [(s.intervals[name][1] - s.intervals[name][0]) / 2 for s in subjects]
                )
                err = np.mean([s.predicted[name] - s.truth for s in subjects])
                cells.append(f"{cov:.2f} / {half:.4f} / {err:+.4f}")
        print(f"| {group.name} | {len(group.rows)} | " + " | ".join(cells) + " |")


def run(folder: str, lengths: list[int], train_size: int | None, deciles: bool) -> None:
    data = read_responses(SHARED / folder / "responses.csv.gz")
    items = SHARED / folder / "items.csv.gz"
    split: dict[str, Any] = (
        {"train_size": train_size, "splits": 1} if train_size is not None else ALL[folder]
    )
    t0 = time.perf_counter()
    report = validate_report(
        data,
        model="3pl",
        policies=[DEFAULT],
        lengths=lengths,
        seed=SEED,
        scenarios=items if items.exists() else None,
        scenario_column="category",
        **split,
    )
    refs = f"{train_size} references" if train_size is not None else "all references"
    title = (
        f"{folder}, {refs}: {len(report.subjects)} held-out subjects "
        f"({time.perf_counter() - t0:.0f} s, seed {SEED})"
    )
    table(report, nearest_disagreement(data), title, deciles)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=sorted(ALL), action="append")
    parser.add_argument("--lengths", default="100,250")
    parser.add_argument("--train-size", type=int, action="append")
    parser.add_argument("--all", action="store_true", help="only every other subject")
    parser.add_argument("--deciles", action="store_true")
    parser.add_argument("--valid", type=Path, help="a VALID.json to read instead of a run")
    parser.add_argument("--responses", type=Path, help="the responses of --valid")
    args = parser.parse_args()
    if args.valid is not None:
        if args.responses is None:
            raise SystemExit("--valid needs --responses, for the strata")
        report = ValidationReport.model_validate(json.loads(args.valid.read_text("utf-8")))
        distance = nearest_disagreement(read_responses(args.responses))
        table(report, distance, str(args.valid), args.deciles)
        return
    if not SHARED.is_dir():
        raise SystemExit(f"shared data not found at {SHARED}")
    lengths = [int(x) for x in args.lengths.split(",")]
    sizes: list[int | None] = [None] if args.all else [*(args.train_size or [30]), None]
    for folder in args.data or sorted(ALL):
        for size in sizes:
            run(folder, lengths, size, args.deciles)


if __name__ == "__main__":
    main()
