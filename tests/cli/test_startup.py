"""Start-up: help, version and argument errors load nothing the answer does not need.

DESIGN.md's CLI contract: ``--help``, ``--version`` and argument errors import no numpy,
scipy, openai, matplotlib or the project's pydantic models; each command imports what it
needs once it runs. (Times are measured by benchmarks/bench_startup.py, not here.)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

DEMO_POOL = Path(__file__).resolve().parents[2] / "item_pools" / "demo"

#: Never loaded before a command does its work.
HEAVY = frozenset({"numpy", "scipy", "openai", "matplotlib", "torch", "pyro", "httpx"})

#: Runs ``cat ARGS`` in this process as the console script would, then prints the
#: modules that were loaded and those of the project that hold pydantic models.
_PROBE = """
import contextlib, io, json, sys
args = sys.argv[1:]
sys.argv = ["cat", *args]
from cat._entry import main
out = io.StringIO()
code = 0
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
    try:
        main(module=True)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0
ours = ("cat", "irt", "synth", "itempool", "catdemo")
models = sorted(
    name
    for name, module in list(sys.modules.items())
    if name.split(".")[0] in ours
    and any(
        isinstance(value, type) and any(b.__module__ == "pydantic.main" for b in value.__mro__)
        for value in vars(module).values()
    )
)
print(json.dumps({"code": code, "modules": sorted(sys.modules), "models": models,
                  "output": out.getvalue()}))
"""

COMMANDS = [
    ["--help"],
    ["--version"],
    ["assess", "--help"],
    ["calibrate", "--help"],
    ["simulate", "--help"],
    ["validate", "--help"],
    ["synth", "--help"],
    ["demo", "--help"],
    ["pool", "--help"],
    ["pool", "info", "--help"],
    ["pool", "validate", "--help"],
    ["pool", "import", "questions", "--help"],
    ["pool", "fit", "--help"],
    ["recalibrate", "--help"],
    ["leaderboard", "--help"],
    ["compare", "--help"],
    ["export", "--help"],
]

ARGUMENT_ERRORS = [
    ["assess", "--length", "x", "--pool", "p", "--model", "m"],
    ["calibrate", "r.jsonl", "--model", "9pl"],
    ["simulate", "--params", "p.csv"],
    ["synth", "--nosuch"],
    ["pool", "info", "a", "b"],
    ["leaderboard", "r.json", "--nosuch"],
    ["compare", "--model", "a", "--margin", "x"],
    ["export", "--store", "s.db", "--nosuch"],
]


def _probe(args: list[str]) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


def _loaded(result: dict[str, object]) -> set[str]:
    modules = result["modules"]
    assert isinstance(modules, list)
    return {str(m) for m in modules}


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_help_loads_nothing_heavy(args: list[str]) -> None:
    result = _probe(args)
    assert result["code"] == 0, result["output"]
    assert "Usage:" in str(result["output"]) or args == ["--version"]
    loaded = _loaded(result)
    assert {m.split(".")[0] for m in loaded} & HEAVY == set()
    assert result["models"] == []


@pytest.mark.parametrize("args", [["--help"], ["--version"]], ids=" ".join)
def test_top_level_help_and_version_load_no_pydantic(args: list[str]) -> None:
    # typer converts a command's arguments with pydantic, so a command's own help loads
    # it; the top-level help and the version have no arguments to convert.
    loaded = _loaded(_probe(args))
    assert "pydantic" not in loaded
    assert "importlib.metadata" not in loaded or args == ["--version"]


@pytest.mark.parametrize("args", ARGUMENT_ERRORS, ids=" ".join)
def test_argument_errors_load_nothing_heavy(args: list[str]) -> None:
    result = _probe(args)
    assert result["code"] == 2, result["output"]
    assert str(result["output"]).startswith("error:")
    loaded = _loaded(result)
    assert {m.split(".")[0] for m in loaded} & HEAVY == set()
    assert result["models"] == []


def test_a_command_that_runs_loads_its_work() -> None:
    # The imports moved into the commands' bodies are real: the command runs.
    result = _probe(["pool", "info", str(DEMO_POOL)])
    assert result["code"] == 0, result["output"]
    assert "Reference" in str(result["output"])
    assert "numpy" in _loaded(result)


def test_a_live_run_starts_without_scipy() -> None:
    # What a live run imports before its first request: scipy's special functions and
    # optimisers (0.4 s and 0.5 s) wait until something uses them.
    code = (
        "import sys, cat.assessment.assess; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout
