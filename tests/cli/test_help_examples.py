"""Every example in every command's ``--help`` runs as pasted (defect 14).

The commands are found by walking the typer application, so a new command's examples are
checked without anyone listing them. An example is a block of indented lines under the
command's "Example"/"Examples" heading; each block is given to ``bash`` exactly as help
prints it, so a line whose ``\\`` continuation was lost runs as a second, broken command.
There ``cat`` is a shell function that starts a Python process running the real command
line, patched to leave the moment a command's own function is entered: the arguments are
parsed in full (unknown options, bad values, missing options all fail) and no work is done.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cat.cli.app import app
from tests.cli.command_tree import COMMAND_PATHS, command_at

REPO = Path(__file__).resolve().parents[2]
BASH = shutil.which("bash")
runner = CliRunner()

#: The width the examples are run at (CliRunner's default); help breaks a line wider than
#: the terminal with a ``\\`` continuation, so other widths must give the same commands.
WIDTH = 80
OTHER_WIDTHS = (60, 100)

#: Top-level folders of the repository whose files an example may name as shipped.
SHIPPED = ("item_pools", "examples")

#: Printed on stderr by a command that was reached, with the name of its function.
MARK = "cat-help-example: entered"

#: The ``cat`` command line as the console script runs it, except that every command
#: decorated with ``handle_errors`` (all of them) leaves the process, exit code 0, with
#: ``MARK`` the moment its function is entered (benchmarks/bench_startup.py's trick).
ENTRY = f"""
import functools, os, sys
import cat.cli.common as common
_wrap = common.handle_errors
def _entered(func):
    @functools.wraps(func)
    def leave(*args, **kwargs):
        sys.stderr.write("{MARK} " + func.__name__ + "\\n"); sys.stderr.flush(); os._exit(0)
    return _wrap(leave)
common.handle_errors = _entered
sys.argv = ["cat", *sys.argv[1:]]
from cat._entry import main
main(module=True)
"""

#: A word that stands for one to fill in: DIR, RESPONSES, MODEL_NAME, "...".
PLACEHOLDER = re.compile(r"[A-Z][A-Z_]+|\.\.\.")

#: Before the example: stop at the first failing command, and run ``cat`` as above.
PREAMBLE = 'set -e\ncat() { "$CAT_EXAMPLE_PYTHON" -c "$CAT_EXAMPLE_ENTRY" "$@"; }\n'


def _help(path: tuple[str, ...], width: int = WIDTH) -> str:
    result = runner.invoke(app, [*path, "--help"], terminal_width=width)
    assert result.exit_code == 0, result.output
    return result.stdout


def example_blocks(help_text: str) -> list[str]:
    """The examples of a help text: each run of lines indented deeper than the text under
    the heading that starts with "Example", up to the next section (``Arguments:``,
    ``Options:``), with that indentation removed."""
    lines = help_text.splitlines()
    start = next(
        (k for k, line in enumerate(lines) if re.match(r"  Examples?\b", line)), len(lines)
    )
    blocks: list[list[str]] = []
    previous_was_code = False
    for line in lines[start + 1 :]:
        if line and not line[0].isspace():
            break  # the next section
        code = line.startswith("    ")
        if code and not previous_was_code:
            blocks.append([])
        if code:
            blocks[-1].append(line[4:])
        previous_was_code = code
    return ["\n".join(block) for block in blocks]


def shell_commands(block: str) -> list[str]:
    """The commands of an example as the shell reads them: a line ending in ``\\`` goes on
    with the next one (the backslash and the line break are dropped)."""
    commands: list[str] = []
    current = ""
    for line in block.splitlines():
        if line.endswith("\\"):
            current += line[:-1]
            continue
        commands.append(current + line)
        current = ""
    if current:
        commands.append(current)
    return [c for c in commands if c.strip()]


def shipped_files(command: str) -> list[str]:
    """The paths under ``SHIPPED`` folders that a command names (also in ``--opt=PATH``
    and ``replay:PATH#SUBJECT``)."""
    folders = "|".join(SHIPPED)
    return re.findall(rf"(?<![\w./-])((?:{folders})/[\w./-]*)", command)


def run_as_pasted(block: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run an example block with ``bash`` as a user who pasted it would, ``cat`` being the
    entry-marking command line; nothing else can be run (PATH is an empty folder)."""
    assert BASH is not None
    programs = cwd / "no-programs"
    programs.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "PATH": str(programs),
        "CAT_EXAMPLE_PYTHON": sys.executable,
        "CAT_EXAMPLE_ENTRY": ENTRY,
    }
    return subprocess.run(
        [BASH, "-c", PREAMBLE + block + "\n"],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def check_example(block: str, cwd: Path) -> str | None:
    """Why an example does not run as pasted, or None when every command in it is a cat
    command that parses and reaches its function."""
    commands = shell_commands(block)
    for command in commands:
        try:
            words = shlex.split(command, comments=True)
        except ValueError as exc:
            return f"cannot be read by a shell ({exc}): {command.strip()!r}"
        if words[:1] != ["cat"]:
            return f"not a cat command: {command.strip()!r}"
        # A stand-in (--pool DIR, cat synth ... --out) may parse, but runs nothing real.
        placeholders = [w for w in words if PLACEHOLDER.fullmatch(w)]
        if placeholders:
            return f"placeholder {placeholders[0]!r} in {command.strip()!r}"
    done = run_as_pasted(block, cwd)
    reached = [line for line in done.stderr.splitlines() if line.startswith(MARK)]
    if done.returncode != 0 or len(reached) != len(commands):
        return (
            f"exit code {done.returncode}, {len(reached)} of {len(commands)} commands reached "
            f"their function; stderr:\n{done.stderr.strip()}"
        )
    return None


EXAMPLES = [
    pytest.param(path, k, block, id=f"{' '.join(path)}-{k}")
    for path in COMMAND_PATHS
    for k, block in enumerate(example_blocks(_help(path)))
]


def _name(path: tuple[str, ...]) -> str:
    return " ".join(("cat", *path))


def test_every_command_shows_examples() -> None:
    """Each command that does something (not a group) has examples to check."""
    leaves = [p for p in COMMAND_PATHS if p and not hasattr(command_at(p), "commands")]
    assert len(leaves) >= 13  # assess ... pool import lm-eval
    missing = [_name(p) for p in leaves if not example_blocks(_help(p))]
    assert missing == []


@pytest.mark.skipif(BASH is None, reason="needs bash")
@pytest.mark.parametrize(("path", "k", "block"), EXAMPLES)
def test_example_runs_as_pasted(path: tuple[str, ...], k: int, block: str, tmp_path: Path) -> None:
    problem = check_example(block, tmp_path)
    assert problem is None, f"`{_name(path)} --help`, example {k + 1}:\n{block}\n-> {problem}"


@pytest.mark.parametrize(("path", "k", "block"), EXAMPLES)
def test_shipped_files_named_by_examples_exist(path: tuple[str, ...], k: int, block: str) -> None:
    named = [f for command in shell_commands(block) for f in shipped_files(command)]
    missing = [f for f in named if not (REPO / f).exists()]
    assert missing == [], f"`{_name(path)} --help`, example {k + 1}, names {missing}"


@pytest.mark.parametrize("width", OTHER_WIDTHS)
@pytest.mark.parametrize("path", [p for p in COMMAND_PATHS if example_blocks(_help(p))], ids=_name)
def test_examples_read_the_same_at_any_width(path: tuple[str, ...], width: int) -> None:
    """Help breaks a long example line to the terminal with ``\\``: the shell must read
    the same commands, word for word, as at the width the examples are run at."""

    def words(text: str) -> list[list[list[str]]]:
        blocks = example_blocks(text)
        return [[shlex.split(c, comments=True) for c in shell_commands(b)] for b in blocks]

    assert words(_help(path, width)) == words(_help(path))


# The checker itself: it must catch what it is for.


def test_a_lost_continuation_is_caught(tmp_path: Path) -> None:
    """The defect: the second line of cat calibrate's last example ran on its own."""
    block = (
        "cat calibrate scores.jsonl --model graded --continuous similarity.jsonl\n"
        "--out params.csv --continuous-out continuous_params.csv"
    )
    assert check_example(block, tmp_path) == (
        "not a cat command: '--out params.csv --continuous-out continuous_params.csv'"
    )
    # What the user saw: the first line ran alone, then the shell ran the second.
    done = run_as_pasted(block, tmp_path)
    assert done.returncode == 127 and "--out: command not found" in done.stderr
    assert done.stderr.count(MARK) == 1


def test_the_checker_passes_a_sound_example_and_fails_usage_errors(tmp_path: Path) -> None:
    sound = "cat pool info item_pools/demo \\\n    --json info.json"
    assert check_example(sound, tmp_path) is None
    assert not (tmp_path / "info.json").exists()  # parsed only
    unknown = check_example("cat pool info item_pools/demo --jsn info.json", tmp_path)
    assert unknown is not None and "unknown option --jsn" in unknown
    bad_value = check_example("cat simulate --params p.csv --examinees x --out s.json", tmp_path)
    assert bad_value is not None and "--examinees" in bad_value
    missing = check_example("cat simulate --params p.csv --out s.json", tmp_path)
    assert missing is not None and "--examinees" in missing
    assert check_example("# a comment\ncat demo", tmp_path) == "not a cat command: '# a comment'"
    assert check_example("cat pool info DIR", tmp_path) == (
        "placeholder 'DIR' in 'cat pool info DIR'"
    )


def test_example_extraction() -> None:
    help_text = (
        "Usage: cat x [OPTIONS]\n\n"
        "  Does x.\n\n"
        "    not an example: above the heading\n\n"
        "  Examples: two of them, the second\n"
        "  wrapped.\n\n"
        "    cat x --a 1 \\\n"
        "        --b 2\n"
        "    cat x --c\n\n"
        "  Prose between.\n\n"
        "    cat x --d\n\n"
        "Options:\n"
        "    --a INTEGER\n"
    )
    blocks = example_blocks(help_text)
    assert blocks == ["cat x --a 1 \\\n    --b 2\ncat x --c", "cat x --d"]
    assert shell_commands(blocks[0]) == ["cat x --a 1     --b 2", "cat x --c"]
    assert shipped_files("cat a --pool item_pools/demo --model replay:examples/r.jsonl#m1") == [
        "item_pools/demo",
        "examples/r.jsonl",
    ]
