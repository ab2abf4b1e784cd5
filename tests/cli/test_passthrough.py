"""The ``cat`` console script hands every call that is not ours to the system ``cat``.

The rule is in the docstring of ``cat._entry``.
"""

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from cat._entry import (
    _edit_distance,
    find_system_cat,
    is_own_call,
    own_commands,
    suggest_command,
)

VENV_BIN = Path(sys.executable).parent
CAT_SCRIPT = VENV_BIN / "cat"
HEAVY = frozenset({"numpy", "typer", "rich", "pydantic", "scipy", "irt", "synth", "click"})
CONTENT = b"first line\n\tsecond, with a tab\nno newline at the end \xe2\x9c\x93"


def _path_without_venv() -> str:
    entries = os.environ.get("PATH", os.defpath).split(os.pathsep)
    return os.pathsep.join(e for e in entries if e and Path(e).resolve() != VENV_BIN.resolve())


def _env(path: str | None = None) -> dict[str, str]:
    """The environment of an activated venv: its bin directory first on PATH."""
    env = dict(os.environ)
    env["PATH"] = path if path is not None else f"{VENV_BIN}{os.pathsep}{_path_without_venv()}"
    env["LC_ALL"] = "C"  # coreutils messages in English, identical for both runs
    return env


@pytest.fixture(scope="module")
def system_cat() -> str:
    # find_system_cat also skips other installs of this script (another venv on PATH).
    found = find_system_cat(_path_without_venv())
    if found is None:
        pytest.skip("no system cat on PATH outside the virtual environment")
    return found


@pytest.fixture
def text_file(tmp_path: Path) -> Path:
    path = tmp_path / "input.txt"
    path.write_bytes(CONTENT)
    return path


def _run(
    args: list[str], *, stdin: bytes | None = None, cwd: Path | None = None, path: str | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        args, input=stdin, capture_output=True, env=_env(path), cwd=cwd, timeout=10, check=False
    )


def test_script_is_on_path_first() -> None:
    # Without this, the tests below would pass without ever running our script.
    assert CAT_SCRIPT.is_file()
    assert shutil.which("cat", path=_env()["PATH"]) == str(CAT_SCRIPT)


def test_file_is_printed_byte_for_byte(text_file: Path) -> None:
    result = _run([str(CAT_SCRIPT), str(text_file)])
    assert result.returncode == 0
    assert result.stdout == CONTENT
    assert result.stderr == b""


def test_options_match_system_cat(text_file: Path, system_cat: str) -> None:
    ours = _run([str(CAT_SCRIPT), "-n", "-A", str(text_file)])
    theirs = _run(["cat", "-n", "-A", str(text_file)], path=str(Path(system_cat).parent))
    assert ours.returncode == theirs.returncode == 0
    assert ours.stdout == theirs.stdout
    assert b"     1\tfirst line" in ours.stdout


def test_piped_stdin_without_arguments() -> None:
    result = _run([str(CAT_SCRIPT)], stdin=b"hi\n")
    assert result.returncode == 0
    assert result.stdout == b"hi\n"


def test_dash_reads_stdin_between_files(text_file: Path) -> None:
    result = _run([str(CAT_SCRIPT), str(text_file), "-", str(text_file)], stdin=b"<stdin>")
    assert result.returncode == 0
    assert result.stdout == CONTENT + b"<stdin>" + CONTENT


def test_missing_file_fails_like_system_cat(tmp_path: Path, system_cat: str) -> None:
    missing = str(tmp_path / "missing.txt")
    ours = _run([str(CAT_SCRIPT), missing])
    theirs = subprocess.run(
        ["cat", missing], executable=system_cat, capture_output=True, env=_env(), check=False
    )
    assert ours.returncode == theirs.returncode != 0
    assert ours.stdout == b""
    assert ours.stderr == theirs.stderr
    assert ours.stderr.decode().startswith("cat: ")
    assert "No such file or directory" in ours.stderr.decode()


def test_broken_pipe_ends_silently_like_system_cat(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_bytes(b"y\n" * 1_000_000)  # far more than a pipe buffer holds
    proc = subprocess.Popen(
        [str(CAT_SCRIPT), str(big)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(4) == b"y\ny\n"
    proc.stdout.close()  # like `cat big | head -2`: the reader goes away
    stderr = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(timeout=10) == -signal.SIGPIPE
    assert stderr == b""


def test_help_is_ours() -> None:
    result = _run([str(CAT_SCRIPT), "--help"])
    assert result.returncode == 0
    assert b"Usage" in result.stdout
    assert b"concatenate" not in result.stdout.lower()  # coreutils' help says so


def test_own_command_is_not_passed_through(tmp_path: Path) -> None:
    # No file named "calibrate" exists in tmp_path: the system cat would report a missing
    # file. Our application answers with its usage, whether or not the command exists yet.
    result = _run([str(CAT_SCRIPT), "calibrate", "--help"], cwd=tmp_path)
    output = result.stdout + result.stderr
    assert b"Usage" in output
    assert b"No such file or directory" not in output


def test_no_arguments_on_a_terminal_shows_our_help() -> None:
    pty = pytest.importorskip("pty")
    controller, terminal = pty.openpty()
    try:
        # The system cat would wait for input on the terminal and hit the timeout.
        result = subprocess.run(
            [str(CAT_SCRIPT)], stdin=terminal, capture_output=True, env=_env(), timeout=10
        )
    finally:
        os.close(terminal)
        os.close(controller)
    assert b"Usage" in result.stdout + result.stderr


def test_python_dash_m_passes_through(text_file: Path, tmp_path: Path) -> None:
    result = _run([sys.executable, "-m", "cat", str(text_file)], cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == CONTENT


def test_python_dash_m_help_is_ours(tmp_path: Path) -> None:
    result = _run([sys.executable, "-m", "cat", "--help"], cwd=tmp_path)
    assert result.returncode == 0
    assert b"Usage" in result.stdout


def test_no_system_cat_exits_127(text_file: Path) -> None:
    result = _run([str(CAT_SCRIPT), str(text_file)], path=str(VENV_BIN))
    assert result.returncode == 127
    assert result.stdout == b""
    assert result.stderr.decode() == (
        f"cat: no system 'cat' found on PATH to pass '{text_file}' to\n"
    )


def test_other_copies_directories_and_non_executables_are_skipped(
    text_file: Path, tmp_path: Path
) -> None:
    # Another environment's console script for this project: running it would loop.
    other_env = tmp_path / "other-env"
    other_env.mkdir()
    (other_env / "cat").write_text(
        "#!/bin/sh\n# from cat._entry import main\necho LOOP\nexit 99\n", encoding="utf-8"
    )
    (other_env / "cat").chmod(0o755)
    a_directory = tmp_path / "dir"
    (a_directory / "cat").mkdir(parents=True)
    not_executable = tmp_path / "noexec"
    not_executable.mkdir()
    (not_executable / "cat").write_text("#!/bin/sh\necho WRONG\n", encoding="utf-8")
    (not_executable / "cat").chmod(0o644)
    dirs = [VENV_BIN, other_env, a_directory, not_executable]
    path = os.pathsep.join([*map(str, dirs), _path_without_venv()])
    result = _run([str(CAT_SCRIPT), str(text_file)], path=path)
    assert result.returncode == 0
    assert result.stdout == CONTENT


def _imported(stderr: bytes) -> set[str]:
    """Top-level packages named in a ``python -X importtime`` log."""
    names = set()
    for line in stderr.decode(errors="replace").splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


def test_entry_module_imports_nothing_heavy() -> None:
    code = (
        "import cat._entry, sys; "
        f"heavy = {set(HEAVY)!r}; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & heavy))"
    )
    result = _run([sys.executable, "-c", code])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == b"[]"


def test_pass_through_path_imports_nothing_heavy(text_file: Path, tmp_path: Path) -> None:
    passed = _run([sys.executable, "-X", "importtime", "-m", "cat", str(text_file)], cwd=tmp_path)
    assert passed.stdout == CONTENT
    assert "cat" in _imported(passed.stderr)  # the log is read correctly
    assert _imported(passed.stderr) & HEAVY == set()
    # The same log does show the heavy imports when our own application runs.
    ours = _run([sys.executable, "-X", "importtime", "-m", "cat", "--help"], cwd=tmp_path)
    assert "typer" in _imported(ours.stderr)


@pytest.mark.parametrize("command", sorted(own_commands()))
def test_own_commands_are_routed_to_us(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert is_own_call([command, "--help"], stdin_is_tty=False)
    (tmp_path / command).mkdir()  # a folder of that name does not hide the command
    assert is_own_call([command, "--help"], stdin_is_tty=False)


@pytest.mark.parametrize("command", sorted(own_commands()))
def test_a_file_named_like_a_command_is_the_file(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / command).write_text("notes\n", encoding="utf-8")
    assert not is_own_call([command], stdin_is_tty=True)
    assert suggest_command([command]) is None
    # python -m cat always means the command.
    assert is_own_call([command], stdin_is_tty=True, module=True)


@pytest.mark.parametrize("option", ["--help", "-h", "--version"])
def test_own_options_are_routed_to_us(option: str) -> None:
    assert is_own_call([option], stdin_is_tty=False)


@pytest.mark.parametrize(
    ("args", "stdin_is_tty"),
    [([], False), (["-"], True), (["file.txt"], True), (["-n", "calibrate"], True)],
)
def test_other_calls_are_passed_through(args: list[str], stdin_is_tty: bool) -> None:
    assert not is_own_call(args, stdin_is_tty=stdin_is_tty)


def test_no_arguments_on_a_terminal_is_ours() -> None:
    assert is_own_call([], stdin_is_tty=True)


def test_find_system_cat_never_returns_the_venv_script() -> None:
    assert find_system_cat(str(VENV_BIN)) is None
    found = find_system_cat(_env()["PATH"])
    assert found is not None
    assert Path(found).resolve() != CAT_SCRIPT.resolve()


def test_file_named_like_a_command_is_printed(tmp_path: Path) -> None:
    (tmp_path / "demo").write_bytes(CONTENT)
    result = _run([str(CAT_SCRIPT), "demo"], cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == CONTENT
    assert result.stderr == b""


def test_python_dash_m_runs_the_command_despite_such_a_file(tmp_path: Path) -> None:
    (tmp_path / "demo").write_bytes(CONTENT)
    result = _run([sys.executable, "-m", "cat", "demo", "--help"], cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout.startswith(b"Usage: cat demo")


def test_typo_of_a_command_is_an_error_that_names_it(tmp_path: Path) -> None:
    result = _run([str(CAT_SCRIPT), "asses", "--pool", "x"], cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == b""
    assert result.stderr == (
        b"error: 'asses' is neither a file nor a command; did you mean `cat assess`?\n"
    )


def test_typo_that_names_a_file_is_printed(tmp_path: Path) -> None:
    (tmp_path / "asses").write_bytes(CONTENT)
    result = _run([str(CAT_SCRIPT), "asses"], cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == CONTENT


def test_typo_path_imports_nothing_heavy(tmp_path: Path) -> None:
    result = _run([sys.executable, "-X", "importtime", "-m", "cat", "calibrat"], cwd=tmp_path)
    assert result.returncode == 2
    assert b"did you mean `cat calibrate`?" in result.stderr
    assert _imported(result.stderr) & HEAVY == set()


@pytest.mark.parametrize(
    ("word", "command"),
    [
        ("asses", "assess"),
        ("asess", "assess"),
        ("assses", "assess"),
        ("Assess", "assess"),
        ("simualte", "simulate"),
        ("calibrat", "calibrate"),
        ("recalibrat", "recalibrate"),
        ("valdiate", "validate"),
        ("synht", "synth"),
        ("dmeo", "demo"),
        ("pol", "pool"),
        ("sim", "simulate"),
        ("val", "validate"),
        ("recal", "recalibrate"),
    ],
)
def test_near_misses_are_suggested(
    word: str, command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert not is_own_call([word, "--pool", "x"], stdin_is_tty=True)
    assert suggest_command([word, "--pool", "x"]) == command


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["missing.txt"],
        ["./asses"],
        ["asses.txt"],
        ["-n", "asses"],
        ["-"],
        ["re"],
        ["sy"],
        ["notes"],
        ["synthesis"],
        ["calibration-data"],
    ],
)
def test_other_words_are_not_suggestions(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert suggest_command(args) is None


def test_no_suggestion_when_other_arguments_are_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `cat asses notes.txt`: a list of files to print, one of them missing.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    assert suggest_command(["asses", "notes.txt"]) is None
    assert suggest_command(["asses", "-"]) == "assess"


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [
        ("", "", 0),
        ("demo", "demo", 0),
        ("asses", "assess", 1),
        ("simualte", "simulate", 1),
        ("ab", "ba", 1),
        ("pool", "", 4),
        ("kitten", "sitting", 3),
    ],
)
def test_edit_distance(a: str, b: str, distance: int) -> None:
    assert _edit_distance(a, b) == distance
    assert _edit_distance(b, a) == distance
