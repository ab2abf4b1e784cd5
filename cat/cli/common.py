"""What every command shares: one-line errors, warnings on stderr, progress bars."""

from __future__ import annotations

import functools
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from cat.errors import CatError
from irt.errors import IRTError
from synth.errors import SynthError

P = ParamSpec("P")
R = TypeVar("R")

#: Exit code for bad input or a known failure (a one-line message on stderr).
EXIT_BAD_INPUT = 2

stdout = Console()
stderr = Console(stderr=True)


def fail(message: str) -> typer.Exit:
    """Print ``error: message`` on one line of stderr; raise the returned Exit."""
    stderr.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(EXIT_BAD_INPUT)


def handle_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn the project's known errors into one line and exit code 2, and print warnings
    (convergence, data quality) as ``warning:`` lines instead of Python's format."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                return func(*args, **kwargs)
            except (CatError, IRTError, SynthError) as exc:
                raise fail(str(exc)) from exc
            except OSError as exc:  # an output that cannot be written, a full disk
                where = f": {exc.filename}" if exc.filename else ""
                raise fail(f"{exc.strerror or exc}{where}") from exc
            except KeyboardInterrupt:
                stderr.print("interrupted")
                raise typer.Exit(130) from None
            finally:
                for w in caught:
                    stderr.print(
                        f"[yellow]warning:[/] {w.message}", highlight=False, soft_wrap=True
                    )

    return wrapper


def say(text: str) -> None:
    """Print one plain line. Messages quote ids and lists in brackets, which rich would
    read as markup; and a line must stay one line at any terminal width, for scripts
    that read it."""
    stdout.print(text, markup=False, highlight=False, soft_wrap=True)


def package_version() -> str:
    """This installation's version, recorded in every output file."""
    try:
        return version("cat-llm")
    except PackageNotFoundError:  # running from a source tree without installing
        return "0+unknown"


def check_writable(*paths: Path | None) -> None:
    """Fail before any work if an output's folder does not exist."""
    for path in paths:
        if path is not None and not path.parent.is_dir():
            raise fail(f"cannot write {path}: folder {path.parent} does not exist")


def show_progress() -> bool:
    """Progress bars only when a person watches: stdout is a terminal."""
    return sys.stdout.isatty()


@contextmanager
def progress_bar(description: str, total: float | None) -> Iterator[Callable[..., None]]:
    """Yield ``update(completed=..., description=...)``; a no-op off a terminal."""
    if not show_progress():
        yield lambda **_: None
        return
    columns = (
        SpinnerColumn(),
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=stdout, transient=True) as progress:
        task = progress.add_task(description, total=total)

        def update(**fields: object) -> None:
            progress.update(task, **fields)  # type: ignore[arg-type]

        yield update
