"""Models unlike the references: answer patterns that ignore item difficulty.

    python benchmarks/bench_unlike.py                       # every shipped 0/1 pool
    python benchmarks/bench_unlike.py --pool mmlu-pro --lengths 60
    python benchmarks/bench_unlike.py --pool demo-en --pool mmlu-pro --seeds 10

A model that is right with the same probability on every item, whatever its difficulty
(a broken answer format, a contaminated subset, a wrong prompt), is what no reference
looks like. Each such "flat" model (right with probability 0.40 or 0.70; its answers to
every pool item drawn once with a fixed seed, so its true accuracy is the share right
over the whole pool) takes the default adaptive test (``cat.assess``, the design the
pool's cross-fit chose) at each length; the table gives the prediction with its 90%
interval, whether the interval holds the truth, and what flags it: person fit (lz
below its threshold), the difficulty check (its gain per item below every reference's)
and the slope check on the audit items (``cat.designs.flatness``, ``cat.engine.audit``),
and the fallback prediction taken where a check flags it. ``--seeds N`` repeats each
case over N more draws and counts how often it was flagged and held.

Issue 41's target: every flat model flagged, and the reported interval (or its
fallback's) holding the true accuracy, at 60 and 250 items on every shipped pool.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import cat
from itempool import LoadedPool

POOLS = Path(__file__).resolve().parents[1] / "item_pools"
#: The shipped pools of 0/1 items (demo-open's are scored, not right/wrong).
SHIPPED = ("demo", "demo-en", "mmlu-pro")
SEED = 0


@dataclass
class FlatExaminee:
    """Right with probability ``rate`` on every item, answers drawn once per pool."""

    rate: float
    seed: int = SEED
    _answers: dict[str, int] = field(default_factory=dict, init=False, repr=False)

    @property
    def label(self) -> str:
        return f"flat:{self.rate:g}"

    def start(self, pool: LoadedPool, seed: int) -> None:
        rng = np.random.default_rng([self.seed, int(self.rate * 1000)])
        drawn = rng.random(len(pool.items)) < self.rate
        self._answers = {item.id: int(r) for item, r in zip(pool.items, drawn, strict=True)}

    def answer(self, item_ids: Sequence[str]) -> list[float | None]:
        return [self._answers[i] for i in item_ids]

    def truth(self) -> float:
        return float(np.mean(list(self._answers.values())))

    def usage(self) -> dict[str, int] | None:
        return None  # makes no call

    def checkpoints(self) -> None:
        return None

    def close(self) -> None:
        return None


def row(pool: LoadedPool, name: str, rate: float, length: int) -> str:
    examinee = FlatExaminee(rate)
    result = cat.assess(pool, examinee, length=length, seed=SEED)
    truth = examinee.truth()
    acc = result.predicted_accuracy
    held = acc.low <= truth <= acc.high
    fit = result.person_fit
    lz = "—" if fit.lz is None else f"{fit.lz:+.2f}{' flagged' if fit.flagged else ''}"
    check = result.difficulty_check
    if check is None:
        gain = "skipped"
    else:
        flag = " flagged" if check.flagged else ""
        gain = f"{check.gain:+.3f} vs {check.lowest_reference:+.3f}{flag}"
    slope = result.slope_check
    z = "—" if slope is None else f"{slope.z:+.2f}{' flagged' if slope.flagged else ''}"
    flagged = fit.flagged or (check is not None and check.flagged) or result.fallback is not None
    fallback = result.fallback
    used = "—"
    if fallback is not None:
        used = f"β {fallback.slope:+.2f} (was {fallback.replaced.value:.3f})"
    return (
        f"| {name} | {rate:.2f} | {length} | {truth:.3f} | {acc.value:.3f} "
        f"[{acc.low:.3f}, {acc.high:.3f}] | {'yes' if held else 'no'} | {lz} | "
        f"{gain} | {z} | {'yes' if flagged else 'no'} | {used} |"
    )


def draws(pool: LoadedPool, name: str, rate: float, length: int, seeds: int) -> str:
    """One row over ``seeds`` draws (the flat model's answers and the test's seed): how
    often it was flagged (any check, or the fallback taken) and its interval held."""
    flagged = held = 0
    for seed in range(1, seeds + 1):
        examinee = FlatExaminee(rate, seed=seed)
        result = cat.assess(pool, examinee, length=length, seed=seed)
        acc = result.predicted_accuracy
        held += acc.low <= examinee.truth() <= acc.high
        check = result.difficulty_check
        flagged += bool(
            result.person_fit.flagged
            or (check is not None and check.flagged)
            or result.fallback is not None
        )
    return f"| {name} | {rate:.2f} | {length} | {flagged} of {seeds} | {held} of {seeds} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pool", action="append", help="a pool name (default: every shipped)")
    parser.add_argument("--lengths", default="60,250")
    parser.add_argument("--rates", default="0.4,0.7")
    parser.add_argument(
        "--seeds", type=int, default=0, help="also N more draws of each model: flagged/held"
    )
    args = parser.parse_args()
    lengths = [int(x) for x in args.lengths.split(",")]
    rates = [float(x) for x in args.rates.split(",")]
    print(
        "| pool | rate | items | true | predicted [90%] | held | person fit lz | "
        "difficulty gain vs lowest reference | slope check z | flagged | fallback |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for pool, name, rate, length in cases(args.pool or SHIPPED, rates, lengths):
        print(row(pool, name, rate, length), flush=True)
    if args.seeds:
        print(f"\nover {args.seeds} more draws (seeds 1..{args.seeds}):\n")
        print("| pool | rate | items | flagged | interval held |")
        print("|---|---|---|---|---|")
        for pool, name, rate, length in cases(args.pool or SHIPPED, rates, lengths):
            print(draws(pool, name, rate, length, args.seeds), flush=True)


def cases(
    names: Sequence[str], rates: list[float], lengths: list[int]
) -> Iterator[tuple[LoadedPool, str, float, int]]:
    """Each pool, flat rate and test length the pool is long enough for."""
    for name in names:
        pool = cat.load_pool(POOLS / name if (POOLS / name).is_dir() else name)
        for rate in rates:
            for length in lengths:
                if length <= len(pool.items):
                    yield pool, name, rate, length


if __name__ == "__main__":
    main()
