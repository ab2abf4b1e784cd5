"""Run a benchmark on an earlier revision and on this working tree, in the same run, and
print its figures side by side ("before → after").

    python benchmarks/bench_revisions.py --base f1e33fa bench_calibration.py --quick --no-peer
    python benchmarks/bench_revisions.py --base f1e33fa --rounds 3 bench_polytomous.py

The earlier revision (and ``--after REV``, if given, instead of the working tree) is
checked out into a temporary git worktree and its own copy of the benchmark runs there
(``PYTHONPATH`` pointing at it), so a benchmark whose imports moved between the two
revisions still runs on each. Rounds alternate (before, after, before, ...) so that a
machine whose load changes during the run does not favour one side; each line of output
is the line of the round with the smallest total time. Lines that differ between the two
revisions only in their numbers are printed once, every number as ``before→after``;
other lines are printed as they are, before ones marked ``-`` and after ones ``+``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)*(?:[eE][-+]?\d+)?")


def _checkout(revision: str, where: Path) -> Path:
    subprocess.run(
        ["git", "worktree", "add", "--detach", "-q", str(where), revision], cwd=ROOT, check=True
    )
    return where


def _run(tree: Path, bench: str, args: list[str]) -> tuple[float, list[str]]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(tree / "benchmarks" / bench), *args],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise SystemExit(f"{bench} failed in {tree}:\n" + "\n".join(tail))
    return seconds, done.stdout.splitlines()


def _side_by_side(before: list[str], after: list[str]) -> list[str]:
    out = []
    for k in range(max(len(before), len(after))):
        old = before[k] if k < len(before) else ""
        new = after[k] if k < len(after) else ""
        if old == new:
            out.append(f"  {new}")
        elif NUMBER.sub("#", old) == NUMBER.sub("#", new):
            out.append("  " + _merged(old, new))
        else:
            out.extend(line for line in (f"- {old}", f"+ {new}") if line.strip() not in "-+")
    return out


def _merged(old: str, new: str) -> str:
    """``new`` with each number that changed written ``before→after``."""
    pairs = iter(
        a if a == b else f"{a}→{b}"
        for a, b in zip(NUMBER.findall(old), NUMBER.findall(new), strict=True)
    )
    return NUMBER.sub(lambda _m: next(pairs), new)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the earlier revision (commit, tag)")
    parser.add_argument("--after", help="the later revision (default: this working tree as it is)")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each side (default 2)")
    parser.add_argument("bench", help="the benchmark's file name in benchmarks/")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the benchmark's own options")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-revisions-") as tmp:
        # The benchmarks find the shared data beside the repository.
        shared = ROOT.parent / "shared"
        if shared.is_dir():
            (Path(tmp) / "shared").symlink_to(shared)
        trees = {"before": _checkout(opts.base, Path(tmp) / "before")}
        trees["after"] = ROOT if opts.after is None else _checkout(opts.after, Path(tmp) / "after")
        try:
            best: dict[str, tuple[float, list[str]]] = {}
            for _ in range(opts.rounds):
                for side, tree in trees.items():
                    seconds, lines = _run(tree, opts.bench, opts.args)
                    if side not in best or seconds < best[side][0]:
                        best[side] = (seconds, lines)
        finally:
            for tree in trees.values():
                if tree != ROOT:
                    subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT)
    after = opts.after or "working tree"
    print(f"{opts.bench} {' '.join(opts.args)}: {opts.base} → {after}")
    print(f"whole run, best of {opts.rounds}: {best['before'][0]:.1f}s → {best['after'][0]:.1f}s")
    print("\n".join(_side_by_side(best["before"][1], best["after"][1])))


if __name__ == "__main__":
    main()
