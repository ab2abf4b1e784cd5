"""Every error of the ``cat`` command line as one line on stderr, ``error: ...``, exit code 2.

That covers click's usage errors (missing or unknown option, a bad value, an unknown
command) as well as the commands' own (``common.fail``, ``typer.BadParameter``): the command
classes of ``cat.cli.command_classes`` run parsing and commands inside
``one_line_errors``. See ``describe_error`` for the wording.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Any

from typer._click import Context, Parameter
from typer._click.exceptions import (
    BadOptionUsage,
    BadParameter,
    ClickException,
    FileError,
    MissingParameter,
    NoArgsIsHelpError,
    NoSuchOption,
    UsageError,
)

from cat.cli.common import EXIT_BAD_INPUT, print_error
from cat.cli.help_format import display_name

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails

_RANGE_ERRORS = frozenset({"greater_than", "greater_than_equal", "less_than", "less_than_equal"})
_RANGE_SIGNS = {"gt": "x>", "ge": "x>=", "lt": "x<", "le": "x<="}


class CommandLineError(ClickException):
    """A usage error already worded for the one-line style: ``error: message``, exit 2."""

    exit_code = EXIT_BAD_INPUT

    def show(self, file: IO[Any] | None = None) -> None:
        """Print ``error: message`` on stderr (``file`` is ignored: errors go to stderr)."""
        print_error(self.message)


@contextmanager
def one_line_errors(ctx: Context) -> Iterator[None]:
    """Re-raise click's errors (and ``typer.BadParameter``) as one-line ``CommandLineError``s.

    ``ctx`` is the command's context, for errors raised without one (the option parser's),
    so that the message can point to the right ``--help``.
    """
    try:
        yield
    except (NoArgsIsHelpError, CommandLineError):
        raise  # the first is the help of a command called without arguments
    except ClickException as exc:
        if isinstance(exc, UsageError) and exc.ctx is None:
            exc.ctx = ctx
        raise CommandLineError(describe_error(exc)) from exc


def describe_error(exc: ClickException) -> str:
    """One line for a click error, naming the option or file and the value.

    ``missing option --pool (see cat assess --help)``, ``--length: 0 is not in the range
    x>=1``, ``unknown option --lenght; did you mean --length? (see cat assess --help)``,
    ``cannot open x.csv: no such file or directory``.
    """
    ctx = getattr(exc, "ctx", None)
    see = f" (see {ctx.command_path} --help)" if isinstance(ctx, Context) else ""
    if isinstance(exc, MissingParameter):
        kind = exc.param_type or (exc.param.param_type_name if exc.param else "parameter")
        return f"missing {kind} {_parameter_name(exc)}{see}"
    if isinstance(exc, BadParameter):
        name = _parameter_name(exc)
        problem = _bad_value(exc)
        return f"{name}: {problem}" if name else problem
    if isinstance(exc, NoSuchOption):
        guess = f"; did you mean {exc.possibilities[0]}?" if exc.possibilities else ""
        return f"unknown option {exc.option_name}{guess}{see}"
    if isinstance(exc, BadOptionUsage) and "requires" in exc.message:
        several = re.search(r"requires (\d+) arguments", exc.message)
        if several and int(several[1]) > 1:
            return f"{exc.option_name} takes {several[1]} values{see}"
        return f"{exc.option_name} needs a value{see}"
    if isinstance(exc, FileError):
        return f"cannot open {exc.ui_filename}: {_sentence(exc.message)}"
    message = _sentence(exc.message)
    extra = re.fullmatch(r"got unexpected extra argument\(s\) \((.*)\)", message)
    if extra:
        message = f"unexpected argument{'s' * (' ' in extra[1])} {extra[1]}"
    return f"{message}{see}" if isinstance(exc, UsageError) else message


def _parameter_name(exc: BadParameter) -> str:
    if exc.param is not None:
        return display_name(exc.param)
    hint = exc.param_hint
    if hint is None:
        return ""
    return hint if isinstance(hint, str) else " / ".join(hint)


def _bad_value(exc: BadParameter) -> str:
    errors = _pydantic_errors(exc.__cause__)
    if errors:
        # typer 0.29 converts values with pydantic: its error knows the value and the rule.
        error = errors[0]
        value, kind = error.get("input"), error["type"]
        if kind in _RANGE_ERRORS:
            return f"{value} is not in the range {_range(exc.param, error.get('ctx') or {})}"
        if kind.startswith("int_"):
            return f"{value!r} is not a whole number"
        if kind.startswith("float_"):
            return f"{value!r} is not a number"
        message = _sentence(exc.message.removeprefix("Value error, "))
        return message if _mentions(message, value) else f"{_quote(value)}: {message}"
    # Raised by a command itself: find the value it was given, to show it.
    message = _sentence(exc.message)
    value = _given_value(exc)
    return message if _mentions(message, value) else f"{message} (got {_quote(value)})"


def _pydantic_errors(cause: BaseException | None) -> list[ErrorDetails]:
    """The errors of a pydantic ValidationError, else none. Such an error exists only
    once something loaded pydantic, which the command line does not load for itself."""
    if cause is None or "pydantic" not in sys.modules:
        return []
    from pydantic import ValidationError

    return cause.errors() if isinstance(cause, ValidationError) else []


def _range(param: Parameter | None, bounds: dict[str, Any]) -> str:
    low, high = getattr(param, "min", None), getattr(param, "max", None)
    if low is not None and high is not None:
        return f"{low}<=x<={high}"
    if low is not None:
        return f"x>={low}"
    if high is not None:
        return f"x<={high}"
    return " and ".join(f"{_RANGE_SIGNS[k]}{v}" for k, v in bounds.items() if k in _RANGE_SIGNS)


def _given_value(exc: BadParameter) -> object:
    ctx, hint = exc.ctx, exc.param_hint
    if ctx is None or not isinstance(hint, str):
        return None
    for param in ctx.command.params:
        if hint in (*param.opts, *param.secondary_opts, display_name(param)) and param.name:
            return ctx.params.get(param.name)
    return None


def _mentions(message: str, value: object) -> bool:
    return value is None or str(value) in message


def _quote(value: object) -> str:
    return repr(value) if isinstance(value, str | int | float) else repr(str(value))


def _sentence(text: str) -> str:
    """One line, lower-case start (unless an acronym), no final full stop."""
    text = " ".join(text.split())
    if text[:2].istitle():
        text = text[0].lower() + text[1:]
    return text[:-1] if text.endswith(".") and not text.endswith("..") else text
