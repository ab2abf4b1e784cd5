"""What every command shares: one-line errors, warnings on stderr, progress bars."""

from __future__ import annotations

import functools
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, ParamSpec, TextIO, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from cat.errors import CatError
from irt.errors import IRTError
from irt.names import ModelGroup, model_named, model_names
from synth.errors import SynthError

if TYPE_CHECKING:
    from cat.assessment.result import ProtocolUse
    from itempool import PredictionErrors

P = ParamSpec("P")
R = TypeVar("R")

#: Exit code for bad input or a known failure (a one-line message on stderr).
EXIT_BAD_INPUT = 2

stdout = Console()
stderr = Console(stderr=True)


def print_error(message: str) -> None:
    """Print ``error: message`` on stderr, the one style of every error of the command line."""
    # Escaped: messages quote user input and lists in brackets, which rich reads as markup.
    stderr.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)


def fail(message: str) -> typer.Exit:
    """Print ``error: message`` on one line of stderr; raise the returned Exit."""
    print_error(message)
    return typer.Exit(EXIT_BAD_INPUT)


def handle_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn the project's known errors into one line and exit code 2, and print warnings
    (convergence, data quality) as ``warning:`` lines instead of Python's format."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        _command_started[0] = time.monotonic()
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


#: When the running command's own function began (``handle_errors`` sets it).
_command_started: list[float] = [time.monotonic()]


def time_text(fit_seconds: float, what: str = "fitting") -> str:
    """``0.10 s fitting; 2.3 s in all``: a fit's own time beside the command's, which also
    holds reading, standard errors, scoring, cross-fitting and writing."""
    whole = time.monotonic() - _command_started[0]
    return f"{fit_seconds:.2f} s {what}; {whole:.1f} s in all"


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``1 item``, ``2,400 items`` (``plural`` where adding an s will not do)."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def say(text: str) -> None:
    """Print one plain line. Messages quote ids and lists in brackets, which rich would
    read as markup; and a line must stay one line at any terminal width, for scripts
    that read it."""
    stdout.print(text, markup=False, highlight=False, soft_wrap=True)


def warn_off_protocol(protocol: ProtocolUse | None, model: str) -> None:
    """The one warning line of a live model asked off its pool's protocol."""
    if protocol is not None and not protocol.followed:
        say(protocol.warning(model))


def check_writable(
    files: Mapping[str, Path | None] | None = None,
    *,
    folders: Mapping[str, Path | None] | None = None,
    makes_folders: bool = False,
) -> None:
    """Fail before any work, in one line naming the option, if an output cannot be written:
    an error found after a long fit or run of calls would waste all of it.

    ``files`` and ``folders`` map each output option (``"--out"``) to its path, None where
    it was not given. A file must not be an existing folder, and its folder must exist
    unless the command makes it (``makes_folders``). A folder, made with its parents if
    missing, must not be an existing file."""
    from cat.pools.loading import output_file_problem, output_folder_problem

    for option, path in (files or {}).items():
        problem = None if path is None else output_file_problem(path, makes_folders=makes_folders)
        if problem is not None:
            raise fail(f"{option} {path}: {problem}")
    for option, path in (folders or {}).items():
        problem = None if path is None else output_folder_problem(path)
        if problem is not None:
            raise fail(f"{option} {path}: {problem}")


def show_progress() -> bool:
    """Progress bars only when a person watches: stdout is a terminal."""
    return sys.stdout.isatty()


#: Off a terminal, one progress line every this many seconds, whether or not the work
#: reported anything new (a long phase still shows that it runs, and for how long); work
#: that ends sooner prints none, so that quick commands keep a clean stderr.
PLAIN_PROGRESS_SECONDS = 5.0


class PlainProgress:
    """Progress as plain lines for a log: ``description: 120/250 (48%), 0:01:05 elapsed``.

    ``update`` takes the fields of rich's ``Progress.update`` (``completed``, ``total``,
    ``advance``, ``description``; others are ignored) and prints a line once ``interval``
    seconds have passed since the start or the previous line. ``tick`` prints the current
    state on the same schedule without news (``progress_bar`` calls it from a timer
    thread, so that work which reports rarely still shows a line every ``interval``).
    ``close`` prints the final state of work that lasted at least ``interval``, unless
    the last line already showed it. The three may be called from different threads.
    """

    def __init__(
        self,
        description: str,
        total: float | None,
        *,
        interval: float,
        clock: Callable[[], float] = time.monotonic,
        stream: TextIO | None = None,
    ) -> None:
        self.description = description
        self.total = None if total is None else float(total)
        self.completed: float | None = None
        self._interval = interval
        self._clock = clock
        self._stream = stream
        self._start = clock()
        self._last_line_at: float | None = None
        self._pending = False  # an update arrived since the last line
        self._lock = threading.Lock()

    def update(self, **fields: object) -> None:
        """Record new values and print a line if the last one is old enough."""
        with self._lock:
            self._record(fields)
            self._pending = True
            self._print_if_due()

    def tick(self) -> None:
        """Print the current state if the last line (or the start) is ``interval`` old."""
        with self._lock:
            self._print_if_due()

    def _record(self, fields: dict[str, object]) -> None:
        description = fields.get("description")
        if description is not None:
            self.description = str(description)
        if "total" in fields:
            total = fields["total"]
            self.total = float(total) if isinstance(total, int | float) else None
        completed = fields.get("completed")
        if isinstance(completed, int | float):
            self.completed = float(completed)
        advance = fields.get("advance")
        if isinstance(advance, int | float):
            self.completed = (self.completed or 0.0) + advance

    def _print_if_due(self) -> None:
        now = self._clock()
        since = self._start if self._last_line_at is None else self._last_line_at
        if now - since >= self._interval:
            self._print(now)

    def close(self) -> None:
        """Print the final state of long work, unless the last line already showed it."""
        with self._lock:
            now = self._clock()
            long = now - self._start >= self._interval
            if long and (self._pending or self._last_line_at is None):
                self._print(now)

    def line(self, elapsed: float) -> str:
        """The progress line after ``elapsed`` seconds."""
        clock = str(timedelta(seconds=round(elapsed)))
        done = self._done_text()
        if not done:
            return f"{self.description}, {clock} elapsed"
        return f"{self.description}: {done}, {clock} elapsed"

    def _done_text(self) -> str:
        if self.completed is None:
            return ""
        if not self.total:
            return _number(self.completed)
        percent = f"{100 * self.completed / self.total:.0f}%"
        # A total of 1 means a fraction done (calibration, simulation): the percentage says it.
        if self.total == 1:
            return percent
        return f"{_number(self.completed)}/{_number(self.total)} ({percent})"

    def _print(self, now: float) -> None:
        # sys.stderr is looked up at each line, not kept: test runners swap it.
        print(self.line(now - self._start), file=self._stream or sys.stderr, flush=True)
        self._last_line_at = now
        self._pending = False


def _number(value: float) -> str:
    # float(): an int passes mypy as a float, but has no is_integer() before Python 3.12.
    return f"{value:.0f}" if float(value).is_integer() else f"{value:g}"


@contextmanager
def progress_bar(description: str, total: float | None) -> Iterator[Callable[..., None]]:
    """Yield ``update(completed=..., description=...)``.

    On a terminal this draws a rich bar on stdout. Otherwise (output piped or redirected)
    it prints plain lines on stderr, so that stdout stays parseable and a log still shows
    long work: with the description, completed/total where known and the elapsed time,
    at most one every ``PLAIN_PROGRESS_SECONDS``, plus the final state; none for work
    that ends sooner. Nothing is printed when the work ends with an exception.
    """
    if not show_progress():
        plain = PlainProgress(description, total, interval=PLAIN_PROGRESS_SECONDS)
        with _ticking(plain):
            yield plain.update
        plain.close()
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


@contextmanager
def _ticking(progress: PlainProgress) -> Iterator[None]:
    """Call ``progress.tick()`` from a daemon thread while the block runs: the work itself
    may report nothing for minutes (one fold of a cross-fit, standard errors)."""
    stop = threading.Event()
    # A fraction of the interval, so that a line comes at most that late.
    period = max(PLAIN_PROGRESS_SECONDS / 5, 0.01)

    def beat() -> None:
        while not stop.wait(period):
            progress.tick()

    thread = threading.Thread(target=beat, name="progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


@contextmanager
def fraction_progress(description: str) -> Iterator[Callable[[str, float], None]]:
    """``progress_bar`` for work that reports ``progress(what, fraction done)`` (validation,
    simulation): yield that callback, which moves the bar and shows ``what``."""
    with progress_bar(description, total=1.0) as update:

        def progress(what: str, done: float) -> None:
            update(completed=done, description=what)

        yield progress


class ModelChoice(str):
    """``--model`` of ``cat calibrate`` and ``cat validate``: a name of ``irt.names.MODELS``
    (a unidimensional model, ``bifactor`` or ``mirt`` fitted beside the 3PL, a model for
    scores 0..m, or one for scores in [0, 1]), or an item family registered from outside
    the package, which is fitted as the models for scores 0..m are. Parsed by
    ``model_choice``."""

    #: The default.
    THREE_PL: ClassVar[ModelChoice]

    @property
    def value(self) -> str:
        """The name as ``irt.names`` spells it."""
        return str(self)

    @property
    def group(self) -> ModelGroup:
        """How the model is fitted (``irt.names.ModelGroup``)."""
        return model_named(self).group

    @property
    def continuous(self) -> bool:
        """Whether the model is for scores in [0, 1] (``cat.pools.continuous_calibration``)."""
        return self.group is ModelGroup.CONTINUOUS

    @property
    def graded(self) -> bool:
        """Whether the model is for scores 0..m (``cat.pools.graded_calibration``)."""
        return self.group is ModelGroup.GRADED

    @property
    def multidimensional(self) -> bool:
        """Whether the model is fitted on factors beside the 3PL (bifactor, mirt)."""
        return self.group is ModelGroup.MULTIDIMENSIONAL


ModelChoice.THREE_PL = ModelChoice("3pl")


def model_choice(text: str | ModelChoice) -> ModelChoice:
    """``--model``'s value as a ``ModelChoice``, or a usage error naming the choices."""
    if isinstance(text, ModelChoice):
        return text
    try:
        return ModelChoice(model_named(text).name)
    except IRTError as exc:
        raise typer.BadParameter(str(exc)) from None


#: ``--model``'s choices, for its help: the list is too long for the option column.
MODEL_NAMES = ", ".join(model_names())


def print_cross_fit(errors: dict[str, PredictionErrors]) -> None:
    """One line per stored length: each design's mean absolute error and the one that
    cat assess runs there."""
    import numpy as np

    from cat.prediction.cross_fit import choose_design

    first = next(iter(errors.values()))
    for length in first.errors:
        mae = {
            name: float(np.mean(np.abs(np.asarray(e.errors[length])))) for name, e in errors.items()
        }
        figures = ", ".join(f"{name} {value:.4f}" for name, value in mae.items())
        say(
            f"cross-fit ({first.folds} folds, {length} items, {len(first.errors[length])} "
            f"reference models): mean absolute error {figures}; cat assess runs "
            f"{choose_design(errors, int(length))} at {length} items"
        )
