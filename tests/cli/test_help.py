"""The command line's shared machinery: help at 80 columns, one-line errors, progress in logs."""

from __future__ import annotations

import contextlib
import inspect
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import typer
from typer._click import Parameter
from typer.testing import CliRunner

from cat.cli import common
from cat.cli.app import app
from cat.cli.command_classes import CatGroup, use_cat_classes
from cat.cli.common import PlainProgress, fail, progress_bar
from tests.cli.command_tree import COMMAND_PATHS, command_at

runner = CliRunner()  # its help is 80 columns wide
CAT_SCRIPT = Path(sys.executable).parent / "cat"
# What typer's rich help showed instead of names and values in full.
BROKEN = ("…", "<bool>", "<list", "<str>", "<int", "<float", "<path>", "<dir>", "<file>")
METAVAR = re.compile(r"(PATH|FILE|DIRECTORY|FILENAME|TEXT|INTEGER|FLOAT|BOOLEAN|\[[^\]\s]+\])")


def _help(path: tuple[str, ...]) -> str:
    result = runner.invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    return result.stdout


def _name_column(help_text: str) -> dict[str, str]:
    """Each option name of the Options section -> its whole name column (names, value)."""
    section = help_text.split("\nOptions:\n", 1)[1].split("\n\n", 1)[0]
    columns: dict[str, str] = {}
    for line in section.splitlines():
        if line.startswith("  -"):
            column = line[2:].split("  ", 1)[0]
            for name in re.findall(r"(?<![\w-])--?[\w-]+", column):
                columns[name] = column
    return columns


def _paragraphs(text: str) -> list[list[str]]:
    blocks: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.strip():
            blocks[-1].append(line)
        elif blocks[-1]:
            blocks.append([])
    return [b for b in blocks if b]


def _is_flag(param: Parameter) -> bool:
    return bool(getattr(param, "is_flag", False) or getattr(param, "count", False))


def test_every_command_is_checked() -> None:
    flat = {" ".join(p) for p in COMMAND_PATHS}
    expected = {"calibrate", "simulate", "validate", "synth", "assess", "demo", "recalibrate"}
    assert {"", "pool", "pool validate", "pool fit", "pool import questions"} <= flat
    assert expected <= flat


@pytest.mark.parametrize("path", COMMAND_PATHS, ids=lambda p: " ".join(p) or "cat")
def test_help_at_80_columns_shows_every_name_in_full(path: tuple[str, ...]) -> None:
    text = _help(path)
    command = command_at(path)
    assert text.startswith(f"Usage: {' '.join(('cat', *path))} ")
    for broken in BROKEN:
        assert broken not in text
    assert max(map(len, text.splitlines())) <= 80
    columns = _name_column(text)
    for param in command.params:
        if getattr(param, "hidden", False):
            continue
        if param.param_type_name == "argument":
            assert re.search(rf"^  {re.escape((param.name or '').upper())}\b", text, re.M)
            continue
        for name in (*param.opts, *param.secondary_opts):
            assert name in columns, f"{name} is not in full in the options of {path}"
            value = columns[name].removeprefix(", ".join(param.opts)).strip()
            if _is_flag(param):
                assert not METAVAR.search(value), f"flag {name} shows a value: {columns[name]}"
            else:
                assert METAVAR.fullmatch(value) or value == param.metavar, columns[name]
    assert "-h, --help" in columns.get("--help", "")


@pytest.mark.parametrize("path", COMMAND_PATHS, ids=lambda p: " ".join(p) or "cat")
def test_examples_keep_their_lines(path: tuple[str, ...]) -> None:
    text = _help(path)
    # Lines broken to fit 80 columns end in " \" and go on, indented, on the next line.
    joined = re.sub(r" \\\n\s+", " ", text)
    doc = inspect.cleandoc(command_at(path).help or "")
    examples = [b for b in _paragraphs(doc) if b[0][:1].isspace()]
    for line in (line.strip() for block in examples for line in block):
        code, _, comment = line.partition(" #")
        assert code.removesuffix("\\").strip() in joined
        if comment:
            assert f"#{comment}" in text


def test_commands_are_listed_with_their_whole_first_sentence() -> None:
    text = _help(())
    commands = text.split("\nCommands:\n", 1)[1]
    assert "..." not in commands
    flat = " ".join(commands.split())
    assert "calibrate Fit an IRT model to RESPONSES and write its item parameters." in flat


def test_help_at_80_columns_of_the_installed_script() -> None:
    env = {**os.environ, "COLUMNS": "80"}
    result = subprocess.run(
        [str(CAT_SCRIPT), "assess", "--help"], capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert max(map(len, lines)) <= 80
    assert "  --no-content-balancing  " in result.stdout
    assert re.search(r"^  --resume +Continue", result.stdout, re.M)
    assert "[default: cat-assess.db]" in result.stdout
    assert "--policy [mfi|kl|random|randomesque|astrat|proportional]" in result.stdout


def test_wide_terminal_uses_up_to_100_columns() -> None:
    env = {**os.environ, "COLUMNS": "200"}
    result = subprocess.run(
        [str(CAT_SCRIPT), "assess", "--help"], capture_output=True, text=True, env=env, check=False
    )
    lines = result.stdout.splitlines()
    assert 80 < max(map(len, lines)) <= 100
    # No example needed breaking: the one written over three lines stands as written.
    written = (
        "    cat assess --pool item_pools/demo --model qwen2.5:7b \\\n"
        "        --base-url http://localhost:11434/v1 \\\n"
        "        --out result.json --report report/\n"
    )
    assert written in result.stdout
    # The two examples written over three lines each, and no other line broken.
    assert result.stdout.count(" \\\n") == 4


# --- errors -----------------------------------------------------------------------------


def _error(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr.rstrip("\n")


def test_missing_option() -> None:
    expected = "error: missing option --pool (see cat assess --help)"
    assert _error("assess", "--model", "sim:0") == expected


def test_missing_argument() -> None:
    expected = "error: missing argument RESPONSES (see cat calibrate --help)"
    assert _error("calibrate", "--model", "3pl") == expected


def test_value_out_of_range() -> None:
    got = _error("assess", "--pool", "p", "--model", "sim:0", "--length", "0")
    assert got == "error: --length: 0 is not in the range x>=1"
    # A sampling temperature beyond the OpenAI API's 0..2 is refused before any call.
    got = _error("assess", "--pool", "p", "--model", "m", "--temperature", "100")
    assert got == "error: --temperature: 100 is not in the range 0.0<=x<=2.0"


def test_value_of_the_wrong_type() -> None:
    got = _error("assess", "--pool", "p", "--model", "sim:0", "--length", "ten")
    assert got == "error: --length: 'ten' is not a whole number"


def test_value_not_among_the_choices() -> None:
    got = _error("assess", "--pool", "p", "--model", "sim:0", "--policy", "best")
    assert got.startswith("error: --policy: 'best' is not one of 'mfi', 'kl'")


def test_unknown_option_suggests_the_nearest() -> None:
    expected = "error: unknown option --lenght; did you mean --length? (see cat assess --help)"
    assert _error("assess", "--lenght", "3") == expected


def test_option_without_its_value() -> None:
    got = _error("assess", "--pool", "p", "--model")
    assert got == "error: --model needs a value (see cat assess --help)"


def test_unknown_sub_command_suggests_the_nearest() -> None:
    got = _error("pool", "valdate", "x")
    assert got == "error: no such command 'valdate'; did you mean `cat pool validate`?"


def test_extra_argument() -> None:
    got = _error("pool", "validate", "a", "b")
    assert got == "error: unexpected argument b (see cat pool validate --help)"


def _test_app() -> typer.Typer:
    """A small application styled like ``cat``, with the errors a command raises itself."""
    test_app = typer.Typer(cls=CatGroup, rich_markup_mode=None)

    @test_app.command()
    def pick(
        kind: str = typer.Option("a", "--kind"), path: str = typer.Option("", "--path")
    ) -> None:
        if kind not in ("a", "b"):
            raise typer.BadParameter("takes a or b", param_hint="--kind")
        if path:
            raise fail(f"cannot use {path} [twice]")

    @test_app.command()
    def other() -> None:
        pass

    use_cat_classes(test_app)
    return test_app


def test_bad_parameter_raised_by_a_command_names_the_value() -> None:
    result = runner.invoke(_test_app(), ["pick", "--kind", "c"])
    assert result.exit_code == 2
    assert result.stderr == "error: --kind: takes a or b (got 'c')\n"


def test_fail_prints_its_message_as_written() -> None:
    result = runner.invoke(_test_app(), ["pick", "--path", "x"])
    assert result.exit_code == 2
    assert result.stderr == "error: cannot use x [twice]\n"  # brackets are not rich markup


def test_the_installed_script_prints_one_line() -> None:
    result = subprocess.run(
        [str(CAT_SCRIPT), "assess", "--model", "sim:0"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == "error: missing option --pool (see cat assess --help)\n"


def test_no_arguments_still_shows_the_help() -> None:
    result = runner.invoke(app, ["assess"])
    assert "Usage: cat assess [OPTIONS]" in result.output
    assert "error:" not in result.output


# --- progress off a terminal ------------------------------------------------------------


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _lines(text: str) -> list[str]:
    return text.splitlines()


def test_plain_progress_is_throttled_and_ends_with_the_last_state(
    capsys: pytest.CaptureFixture[str],
) -> None:
    clock = Clock()
    progress = PlainProgress("bootstrap", 50, interval=5.0, clock=clock)
    for t, done in [(1, 1), (2, 2), (6, 9), (7, 10), (11, 20), (13, 50)]:
        clock.now = 100.0 + t
        progress.update(completed=done, description=f"bootstrap replicate {done}")
    progress.close()
    captured = capsys.readouterr()
    assert captured.out == ""
    assert _lines(captured.err) == [
        "bootstrap replicate 9: 9/50 (18%), 0:00:06 elapsed",
        "bootstrap replicate 20: 20/50 (40%), 0:00:11 elapsed",
        "bootstrap replicate 50: 50/50 (100%), 0:00:13 elapsed",
    ]


def test_plain_progress_is_silent_for_quick_work(capsys: pytest.CaptureFixture[str]) -> None:
    clock = Clock()
    progress = PlainProgress("reading", 3, interval=5.0, clock=clock)
    for done in (1, 2, 3):
        clock.now += 1
        progress.update(completed=done)
    progress.close()
    assert capsys.readouterr().err == ""


def test_plain_progress_of_long_work_without_updates(capsys: pytest.CaptureFixture[str]) -> None:
    clock = Clock()
    progress = PlainProgress("cross-fitting 5 folds", None, interval=5.0, clock=clock)
    clock.now += 75
    progress.close()
    assert capsys.readouterr().err == "cross-fitting 5 folds, 0:01:15 elapsed\n"


def test_plain_progress_of_a_fraction(capsys: pytest.CaptureFixture[str]) -> None:
    clock = Clock()
    progress = PlainProgress("simulating", 1.0, interval=5.0, clock=clock)
    clock.now += 3725
    progress.update(completed=0.25, description="simulating: exposure control")
    assert capsys.readouterr().err == "simulating: exposure control: 25%, 1:02:05 elapsed\n"
    progress.close()  # nothing new since that line
    assert capsys.readouterr().err == ""


def test_progress_bar_off_a_terminal_writes_lines_on_stderr(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(common, "PLAIN_PROGRESS_SECONDS", 0.0)
    # Lines from updates only here: the timer's lines are tested below.
    monkeypatch.setattr(common, "_ticking", lambda progress: contextlib.nullcontext())
    assert not common.show_progress()  # pytest captures stdout: not a terminal
    with progress_bar("assessing", total=4) as update:
        for done in range(1, 5):
            update(completed=done, description=f"{done} items")
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = _lines(captured.err)
    assert lines[0].startswith("1 items: 1/4 (25%), 0:00:0")
    assert lines[-1].startswith("4 items: 4/4 (100%), 0:00:0")
    assert all(line.endswith(" elapsed") for line in lines)


def test_plain_progress_ticks_without_news(capsys: pytest.CaptureFixture[str]) -> None:
    clock = Clock()
    progress = PlainProgress("standard errors", None, interval=5.0, clock=clock)
    for t in (1, 4, 6, 8, 11.5):
        clock.now = 100.0 + t
        progress.tick()
    assert _lines(capsys.readouterr().err) == [
        "standard errors, 0:00:06 elapsed",
        "standard errors, 0:00:12 elapsed",
    ]


def test_progress_bar_off_a_terminal_prints_while_the_work_is_silent(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(common, "PLAIN_PROGRESS_SECONDS", 0.05)
    with progress_bar("cross-fitting", total=5) as update:
        update(completed=1, description="cross-fitting fold 1 of 5")
        time.sleep(0.5)  # a fold that reports nothing for a while
    lines = _lines(capsys.readouterr().err)
    assert len(lines) >= 3
    assert all(line.startswith("cross-fitting fold 1 of 5: 1/5 (20%), 0:00:0") for line in lines)
