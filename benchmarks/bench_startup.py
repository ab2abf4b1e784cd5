"""Start-up of the ``cat`` command line against ``python -c pass``, in the same run.

    python benchmarks/bench_startup.py            # 9 runs of each, median
    python benchmarks/bench_startup.py --runs 21

Three kinds of figure (issue 27):

- **help and errors**: ``cat --help``, ``cat --version``, each command's ``--help`` and an
  argument error, timed as whole processes (fork to exit);
- **before the work**: for each command, the time from starting the process until the
  command's own function begins (the parsing and imports every call pays before any
  work), measured by a process that marks the moment the function is entered and exits
  there;
- **pass-through**: ``cat FILE``, which hands the call to the system ``cat``.

Targets: ``cat --help`` at most 10 times ``python -c pass``; before the work at most
0.6 s; the pass-through at most 50 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: Runs the command line as the console script does, but leaves the process (exit code
#: 0, "entered" on stderr) the moment a command's own function is entered.
_MARK_ENTRY = """
import functools, os, sys
import cat.cli.common as common
_wrap = common.handle_errors
def _entered(func):
    @functools.wraps(func)
    def leave(*args, **kwargs):
        sys.stderr.write("entered\\n"); sys.stderr.flush(); os._exit(0)
    return _wrap(leave)
common.handle_errors = _entered
sys.argv = ["cat", *sys.argv[1:]]
from cat._entry import main
main(module=True)
"""

#: A command line that reaches each command's function (its inputs are checked there).
_REACH = {
    "assess": ["assess", "--pool", "missing", "--model", "sim:0"],
    "calibrate": ["calibrate", "missing.jsonl", "--out", "p.csv"],
    "simulate": [
        "simulate",
        "--params",
        "p.csv",
        "--examinees",
        "9",
        "--length",
        "9",
        "--out",
        "s.json",
    ],
    "validate": ["validate", "missing.jsonl", "--out", "v.json"],
    "synth": ["synth", "--pool", "p", "--agents", "m", "--store", "r.db", "--out", "r.jsonl"],
    "pool info": ["pool", "info", "missing"],
    "recalibrate": ["recalibrate", "missing.jsonl", "--pool", "p", "--out", "q"],
}


def _seconds(command: list[str], cwd: Path, expect: str | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if expect is not None and expect not in done.stderr:
        raise SystemExit(f"{' '.join(command)} did not reach its command: {done.stderr[-500:]}")
    return elapsed


def _median(command: list[str], runs: int, cwd: Path, expect: str | None = None) -> float:
    _seconds(command, cwd, expect)  # warm the file cache and the byte-code
    return statistics.median(_seconds(command, cwd, expect) for _ in range(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="Runs of each command (median).")
    args = parser.parse_args()
    script = Path(sys.executable).parent / "cat"
    if not script.exists():
        raise SystemExit(f"no console script at {script}: pip install -e . first")
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        (cwd / "notes.txt").write_text("a line\n")
        baseline = _median([python, "-c", "pass"], args.runs, cwd)
        rows: list[tuple[str, float]] = []
        for label, argv in [
            ("cat --help", ["--help"]),
            ("cat --version", ["--version"]),
            ("cat assess --help", ["assess", "--help"]),
            ("cat calibrate --help", ["calibrate", "--help"]),
            ("cat synth --help", ["synth", "--help"]),
            ("cat pool info --help", ["pool", "info", "--help"]),
            ("cat assess --length x (argument error)", ["assess", "--length", "x"]),
        ]:
            rows.append((label, _median([str(script), *argv], args.runs, cwd)))
        for name, argv in _REACH.items():
            seconds = _median([python, "-c", _MARK_ENTRY, *argv], args.runs, cwd, "entered")
            rows.append((f"before the work: cat {name}", seconds))
        passthrough = _median([str(script), "notes.txt"], args.runs, cwd)
        system_cat = _median(["/bin/cat", "notes.txt"], args.runs, cwd)
    print(
        f"median of {args.runs} runs each; {os.cpu_count()} cores; Python {sys.version.split()[0]}"
    )
    print(f"{'command':<45} {'seconds':>8} {'x python -c pass':>17}")
    print(f"{'python -c pass':<45} {baseline:8.3f} {1:17.1f}")
    for label, seconds in rows:
        print(f"{label:<45} {seconds:8.3f} {seconds / baseline:17.1f}")
    print(f"{'cat notes.txt (pass-through)':<45} {passthrough:8.3f} {passthrough / baseline:17.1f}")
    print(f"{'/bin/cat notes.txt':<45} {system_cat:8.3f} {system_cat / baseline:17.1f}")


if __name__ == "__main__":
    main()
