"""Run the examples of a documentation page and compare what they print with the page.

A page's examples are its fenced code blocks of two kinds:

- ``console``: lines starting with ``$ `` are commands (a line ending in ``\\`` goes on
  to the next), the lines after each command up to the next one are what it prints
  (stdout and stderr together);
- ``python``: code; when the next code block is ``text title="output"``, that block is
  what the code prints.

Other blocks (``text``, ``json``, ``bash`` without ``$``) are shown, not run.

Each page runs in a fresh folder holding copies of the repository's ``item_pools`` and
``examples``, so that a page can write anywhere and every page starts from what a fresh
clone has. Its commands run one after another in one bash session (a ``cd``, an
``export`` or a server started with ``&`` lasts for the page; the session's processes
are ended with it), its Python blocks in one interpreter (names last for the page).

What is printed must match the page line by line, where runs of spaces count as one
space, and runs of a table's rule characters (─ ━ ═) as one, so that a table whose widest
cell grows by a digit still matches; and where a line
``...`` on its own matches any number of lines and ``...`` inside a line matches any
text within that line (for times, ports and other values that change from run to run).
Plain progress lines (``...: 3/10 (30%), 0:00:05 elapsed``), which a loaded machine may
print and an idle one not, are left out before comparing. A command must exit with 0,
or with 2 where the page shows it printing ``error: ...``.

    python -m tests.docs.runner docs/guide/assess.md            # check one page
    python -m tests.docs.runner --update docs/guide/assess.md   # write what they print

``--update`` rewrites only the outputs that no longer match, writes every duration as
``...``, and keeps a line of the page that has a ``...`` and still matches.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: What each page's folder starts with: copies of these repository folders.
COPIED = ("item_pools", "examples")
#: Rich tables and help texts wrap at this width in the docs.
COLUMNS = 100
#: Seconds one command or Python block may take.
TIMEOUT = 600.0

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+)(?P<info>[^`]*)$")
_PROGRESS = re.compile(r"^.+, \d+:\d\d:\d\d elapsed$")
_MARK = "@@docs-example-done@@"
_SPACES = re.compile(r" {2,}")
_RULES = re.compile(r"([─━═])\1+")
#: Durations a command prints (``0.11``, ``2.3`` before `` s`` or `` ms``): never the same
#: twice, so ``--update`` writes them as ``...``.
_DURATION = re.compile(r"\b\d+(?:\.\d+)?(?= ?(?:s|ms|µs)\b)")


@dataclass
class Example:
    """One command or Python block, where it is on its page, and what the page shows."""

    kind: str  # "console" or "python"
    code: str
    expected: list[str] | None  # None: a Python block whose output is not shown
    line: int  # 1-based line of the code's first line in the page
    # Where the expected output sits in the page: [start, end) line indices, 0-based.
    output_span: tuple[int, int] | None = None


@dataclass
class Outcome:
    """What an example printed, and whether that matches its page."""

    example: Example
    printed: list[str]
    exit_code: int
    problem: str | None = None


@dataclass
class _Block:
    info: str
    start: int  # index of the first line inside the fence
    end: int  # index of the closing fence
    lines: list[str] = field(default_factory=list)


def _blocks(lines: list[str]) -> list[_Block]:
    blocks: list[_Block] = []
    i = 0
    while i < len(lines):
        opened = _FENCE.match(lines[i])
        if opened is None:
            i += 1
            continue
        indent, fence = len(opened["indent"]), opened["fence"]
        j = i + 1
        while j < len(lines) and lines[j].strip() != fence:
            j += 1
        body = [line[indent:] if line[:indent].isspace() else line for line in lines[i + 1 : j]]
        blocks.append(_Block(opened["info"].strip(), i + 1, j, body))
        i = j + 1
    return blocks


def parse_examples(text: str) -> list[Example]:
    """The examples of a page, in page order."""
    lines = text.splitlines()
    blocks = _blocks(lines)
    examples: list[Example] = []
    for k, block in enumerate(blocks):
        language = block.info.split()[0] if block.info else ""
        if language == "console":
            examples.extend(_console_examples(block))
        elif language == "python":
            following = blocks[k + 1] if k + 1 < len(blocks) else None
            shown = following is not None and following.info.replace("'", '"') == (
                'text title="output"'
            )
            examples.append(
                Example(
                    "python",
                    "\n".join(block.lines) + "\n",
                    following.lines if shown and following else None,
                    block.start + 1,
                    (following.start, following.end) if shown and following else None,
                )
            )
    return examples


def _console_examples(block: _Block) -> list[Example]:
    examples: list[Example] = []
    i = 0
    while i < len(block.lines):
        line = block.lines[i]
        if not line.startswith("$ "):
            raise ValueError(
                f"line {block.start + i + 1}: a console block's text must follow a "
                f"'$ ' command: {line!r}"
            )
        first = i
        command = [line[2:]]
        while command[-1].endswith("\\") and i + 1 < len(block.lines):
            i += 1
            command.append(block.lines[i])
        i += 1
        out_start = i
        while i < len(block.lines) and not block.lines[i].startswith("$ "):
            i += 1
        examples.append(
            Example(
                "console",
                "\n".join(command),
                block.lines[out_start:i],
                block.start + first + 1,
                (block.start + out_start, block.start + i),
            )
        )
    return examples


def matches(expected: list[str], printed: list[str]) -> bool:
    """Whether ``printed`` is what ``expected`` shows (``...`` as described above)."""
    pattern = "".join(
        r"(?:[^\n]*\n)*?" if line.strip() == "..." else _line_pattern(line) + r"\n"
        for line in _trim(expected)
    )
    text = "".join(line + "\n" for line in _trim(printed))
    return re.fullmatch(pattern, text) is not None


def _line_pattern(line: str) -> str:
    return r"[^\n]*".join(re.escape(part) for part in line.split("..."))


def _trim(lines: list[str]) -> list[str]:
    trimmed = [_squeeze(line) for line in lines]
    while trimmed and not trimmed[-1]:
        trimmed.pop()
    while trimmed and not trimmed[0]:
        trimmed.pop(0)
    return trimmed


def _squeeze(line: str) -> str:
    """A line with each run of spaces, and of a table's rule characters, made one:
    a table whose widest cell (a time) grows by a digit still matches its page."""
    return _RULES.sub(r"\1", _SPACES.sub(" ", line.rstrip()))


def page_folder(base: Path) -> Path:
    """A fresh folder holding what a page's examples may use."""
    folder = base / "work"
    folder.mkdir()
    for name in COPIED:
        shutil.copytree(ROOT / name, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    bin_dir = str(Path(sys.executable).parent)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = str(ROOT)
    env.update(COLUMNS=str(COLUMNS), TERM="dumb", NO_COLOR="1", PYTHONHASHSEED="0")
    for name in ("FORCE_COLOR", "CLICOLOR_FORCE", "OPENAI_API_KEY"):
        env.pop(name, None)
    return env


_PYTHON_DRIVER = f"""
import contextlib, io, json, sys, traceback
namespace = {{"__name__": "__main__"}}
while True:
    size = sys.stdin.readline()
    if not size:
        break
    code = sys.stdin.read(int(size))
    out = io.StringIO()
    status = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            exec(compile(code, "<docs>", "exec"), namespace)
        except BaseException:
            traceback.print_exc()
            status = 1
    sys.stdout.write(json.dumps({{"out": out.getvalue(), "status": status}}) + "\\n")
    sys.stdout.write("{_MARK}\\n")
    sys.stdout.flush()
"""


class _Session:
    """One long-lived process (bash or Python) that runs a page's examples in turn."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        self.process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=_environment(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # so that close() ends whatever the page started
        )

    def send(self, text: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(text.encode())
        self.process.stdin.flush()

    def read_until_mark(self, timeout: float) -> str:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        data = b""
        deadline = time.monotonic() + timeout
        finished = re.compile(b"(^|\n)" + re.escape(_MARK.encode()) + b"[^\n]*\n")
        while finished.search(data) is None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError(f"no end after {timeout:.0f} s; printed so far:\n{data!r}")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise RuntimeError(f"the session ended; printed:\n{data.decode(errors='replace')}")
            data += chunk
        return data.decode(errors="replace")

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def _run_console(session: _Session, example: Example) -> tuple[list[str], int]:
    session.send(f"{example.code}\nprintf '\\n%s %s\\n' '{_MARK}' \"$?\"\n")
    text = session.read_until_mark(TIMEOUT)
    body, _, tail = text.rpartition(_MARK)
    code = int(tail.split()[0])
    printed = body.removesuffix("\n").splitlines()
    return printed, code


def _run_python(session: _Session, example: Example) -> tuple[list[str], int]:
    encoded = example.code
    session.send(f"{len(encoded)}\n{encoded}")
    text = session.read_until_mark(TIMEOUT)
    result = json.loads(text.rpartition(_MARK)[0].strip().splitlines()[-1])
    return str(result["out"]).splitlines(), int(result["status"])


def run_page(page: Path, folder: Path) -> list[Outcome]:
    """Run every example of ``page`` in ``folder``; one outcome each."""
    examples = parse_examples(page.read_text(encoding="utf-8"))
    shell = _Session(["bash", "--noprofile", "--norc"], folder)
    shell.send("exec 2>&1\nset +e\n")
    python: _Session | None = None
    outcomes: list[Outcome] = []
    try:
        for example in examples:
            if example.kind == "console":
                printed, code = _run_console(shell, example)
            else:
                if python is None:
                    python = _Session([sys.executable, "-u", "-c", _PYTHON_DRIVER], folder)
                printed, code = _run_python(python, example)
            printed = [line for line in printed if not _PROGRESS.match(line)]
            outcomes.append(Outcome(example, printed, code, _problem(example, printed, code)))
    finally:
        shell.close()
        if python is not None:
            python.close()
    return outcomes


def _problem(example: Example, printed: list[str], code: int) -> str | None:
    expected = example.expected
    shows_error = expected is not None and any(line.startswith("error:") for line in expected)
    if example.kind == "python" and code != 0:
        return "raised:\n" + "\n".join(printed)
    if example.kind == "console" and code != (2 if shows_error else 0):
        return f"exit code {code}" + ("" if shows_error else " (the page shows no error)")
    if expected is not None and not matches(expected, printed):
        return "printed something else"
    return None


def update_page(page: Path, outcomes: list[Outcome]) -> int:
    """Write what the examples printed into ``page`` where it no longer matches; the
    number of outputs rewritten. Indentation of the blocks is kept."""
    lines = page.read_text(encoding="utf-8").splitlines()
    changed = 0
    for outcome in sorted(outcomes, key=lambda o: -o.example.line):
        span = outcome.example.output_span
        if span is None or outcome.example.expected is None:
            continue
        if outcome.problem != "printed something else":
            continue  # as shown, or failed: nothing worth writing
        indent = _indent_of(lines, outcome.example.line - 1)
        written = _written(outcome.example.expected, outcome.printed)
        lines[span[0] : span[1]] = [indent + line if line else "" for line in written]
        changed += 1
    page.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return changed


def _written(expected: list[str], printed: list[str]) -> list[str]:
    """What ``update_page`` writes for an output: the printed lines, with each duration
    as ``...``, and where the page has as many lines, each of its lines with a ``...``
    that still matches kept as the author wrote it."""
    out = [_DURATION.sub("...", line) for line in printed]
    if len(expected) == len(printed):
        out = [
            old if "..." in old and matches([old], [new]) else line
            for old, new, line in zip(expected, printed, out, strict=True)
        ]
    return out


def _indent_of(lines: list[str], index: int) -> str:
    line = lines[index]
    return line[: len(line) - len(line.lstrip(" "))]


def report(page: Path, outcomes: list[Outcome]) -> str:
    """The failures of a page, each with its command and what it printed."""
    parts = []
    for outcome in outcomes:
        if outcome.problem is None:
            continue
        example = outcome.example
        shown = "\n".join(example.expected or [])
        parts.append(
            f"{page}:{example.line}: {outcome.problem}\n--- code\n{example.code}\n"
            f"--- the page shows\n{shown}\n--- printed\n" + "\n".join(outcome.printed)
        )
    return "\n\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description="Run a docs page's examples.")
    parser.add_argument("pages", nargs="+", type=Path)
    parser.add_argument("--update", action="store_true", help="Write the outputs back.")
    args = parser.parse_args()
    failed = False
    for page in args.pages:
        with tempfile.TemporaryDirectory() as tmp:
            start = time.monotonic()
            outcomes = run_page(page, page_folder(Path(tmp)))
            seconds = time.monotonic() - start
        if args.update:
            changed = update_page(page, outcomes)
            print(f"{page}: {len(outcomes)} examples in {seconds:.0f} s; {changed} rewritten")
        problems = report(page, outcomes)
        errors = [o for o in outcomes if o.problem not in (None, "printed something else")]
        if problems and (not args.update or errors):
            print(problems)
            failed = True
        elif not args.update:
            print(f"{page}: {len(outcomes)} examples in {seconds:.0f} s, all as shown")
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
