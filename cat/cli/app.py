"""The ``cat`` command line (typer). Sub-commands live in their own modules.

Help and errors are styled here, once, for every command; the command modules only write
docstrings, options and ``help=`` texts:

* Help is click's plain layout (``Usage:``, the help text, ``Arguments:``, ``Options:``,
  ``Commands:``), not typer's rich boxes, which cut option names and defaults short at 80
  columns. Option values are named like click's (PATH, TEXT, INTEGER, FLOAT, a choice as
  ``[mfi|kl|random]``); flags have none. Help is at most 100 columns wide, wrapped to the
  terminal when narrower. See ``write_help_text`` for how a docstring keeps an example
  verbatim.
* Every error is one line on stderr, ``error: ...``, with exit code 2: click's usage
  errors (missing or unknown option, a bad value, an unknown command) as well as the
  commands' own (``common.fail``, ``typer.BadParameter``). See ``describe_error``.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from difflib import get_close_matches
from enum import Enum
from pathlib import Path
from types import NoneType, UnionType
from typing import IO, Any, Union, get_args, get_origin
from uuid import UUID

import typer
from pydantic import ValidationError
from typer._click import Command, Context, HelpFormatter, Parameter
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
from typer._click.formatting import join_options
from typer.core import TyperCommand, TyperGroup
from typer.models import DefaultPlaceholder, ParameterInfo

from cat.cli.assess import assess
from cat.cli.calibrate import calibrate
from cat.cli.common import EXIT_BAD_INPUT, package_version, print_error
from cat.cli.demo import demo
from cat.cli.pool import pool_app
from cat.cli.pool_fit import fit_pool
from cat.cli.recalibrate import recalibrate_pool
from cat.cli.simulate import simulate
from cat.cli.synth import synth
from cat.cli.validate import validate

#: Help never grows wider than this, however wide the terminal (click's default is 80).
HELP_MAX_WIDTH = 100

# Continuation lines of an example broken to fit the terminal are indented this much more.
_CONTINUATION_INDENT = "    "

# ---------------------------------------------------------------------------------------
# Help text
# ---------------------------------------------------------------------------------------


def write_help_text(formatter: HelpFormatter, text: str) -> None:
    """Write a command's help text (its docstring), keeping example blocks as written.

    The convention, the same as for code in Markdown or reStructuredText: a paragraph
    (lines between blank lines) whose first line is indented deeper than the text around
    it is printed verbatim, line by line, e.g. ::

        Examples:

          cat calibrate responses.jsonl --model 3pl --out params.csv

          cat assess --pool item_pools/demo --model qwen2.5:7b \\
              --base-url http://localhost:11434/v1 --out result.json

    Every other paragraph is re-wrapped to the terminal. click's marker, a paragraph whose
    first line is ``\\b``, also keeps it verbatim. A verbatim line wider than the terminal
    is broken at a space and continued, shell-style, with a trailing `` \\`` (a trailing
    ``# comment`` moves onto its own line above), so that it can still be copied and run.
    """
    for index, block in enumerate(_paragraphs(text)):
        if index:
            formatter.write("\n")
        if block[0].strip() == "\b":
            _write_verbatim(formatter, block[1:])
        elif block[0][:1].isspace():
            _write_verbatim(formatter, block)
        else:
            formatter.write_text(" ".join(line.strip() for line in block))


def _paragraphs(text: str) -> list[list[str]]:
    blocks: list[list[str]] = [[]]
    for line in text.expandtabs().splitlines():
        if line.strip():
            blocks[-1].append(line.rstrip())
        elif blocks[-1]:
            blocks.append([])
    return [block for block in blocks if block]


def _write_verbatim(formatter: HelpFormatter, lines: list[str]) -> None:
    margin = " " * formatter.current_indent
    width = formatter.width - formatter.current_indent
    for line in lines:
        for piece in _fit_line(line, width):
            formatter.write(f"{margin}{piece}\n")


def _fit_line(line: str, width: int) -> list[str]:
    """A verbatim line as one or more lines of at most ``width`` (where it can be broken)."""
    if len(line) <= width:
        return [line]
    indent = line[: len(line) - len(line.lstrip())]
    code, hash_mark, comment = line.partition(" #")
    if hash_mark and code.strip():
        # A shell comment cannot be continued with a backslash: it goes above its command.
        return [f"{indent}#{comment}", *_break_command(code.rstrip(), width)]
    return _break_command(line, width)


def _break_command(line: str, width: int) -> list[str]:
    indent = line[: len(line) - len(line.lstrip())]
    pieces: list[str] = []
    rest = line
    while len(rest) > width:
        start = len(rest) - len(rest.lstrip()) + 1
        # Before an option if one is far enough along, so that "--out x" stays together;
        # else at the last space. Either leaves room for the " \" continuation.
        cut = rest.rfind(" -", start, width - 1)
        if cut < start + (width - start) // 3:
            cut = rest.rfind(" ", start, width - 1)
        if cut < 0:
            break  # one word wider than the terminal: left whole, for copying
        pieces.append(f"{rest[:cut]} \\")
        rest = indent + _CONTINUATION_INDENT + rest[cut + 1 :].lstrip()
    pieces.append(rest)
    return pieces


def _summary(command: Command) -> str:
    """A command's line in its group's list: its short help, else its first sentence."""
    if command.short_help:
        return " ".join(command.short_help.split())
    first_paragraph = _paragraphs(command.help or "")[:1]
    text = " ".join(" ".join(first_paragraph[0]).split()) if first_paragraph else ""
    # Whole, never cut with "...": the list wraps it instead.
    return re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]


# ---------------------------------------------------------------------------------------
# Arguments and options
# ---------------------------------------------------------------------------------------

_TYPE_NAMES: dict[Any, str] = {
    str: "TEXT",
    int: "INTEGER",
    float: "FLOAT",
    bool: "BOOLEAN",
    UUID: "UUID",
    datetime: "DATETIME",
}


def metavar(param: Parameter) -> str:
    """How help names an option's value: its ``metavar=``, else its type as click does."""
    if param.metavar:
        return param.metavar
    # typer 0.29 describes every parameter's type by a TypeDescriptor (typer._coercion).
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None:
        return "VALUE"
    choices = descriptor.choices
    if choices:
        return "[" + "|".join(_choice_text(choice) for choice in choices) + "]"
    return _type_name(descriptor.annotation, descriptor.parameter_info)


def _choice_text(choice: object) -> str:
    return str(choice.value if isinstance(choice, Enum) else choice)


def _type_name(annotation: Any, info: ParameterInfo) -> str:
    origin = get_origin(annotation)
    if origin in (Union, UnionType):  # X | None
        annotation = next(a for a in get_args(annotation) if a is not NoneType)
        origin = get_origin(annotation)
    if origin is list:  # a repeated option, or an argument taking several values
        return _type_name(get_args(annotation)[0], info)
    if origin is tuple:
        return " ".join(_type_name(arg, info) for arg in get_args(annotation))
    if annotation is datetime and info.formats:
        return "[" + "|".join(info.formats) + "]"
    if annotation in _TYPE_NAMES:
        return _TYPE_NAMES[annotation]
    if isinstance(annotation, type) and issubclass(annotation, Path):
        if info.file_okay and not info.dir_okay:
            return "FILE"
        if info.dir_okay and not info.file_okay:
            return "DIRECTORY"
        return "PATH"
    if isinstance(annotation, type) and issubclass(annotation, io.IOBase):
        return "FILENAME"  # typer.FileText and friends: the file is opened for the command
    return str(getattr(annotation, "__name__", "VALUE")).upper()


def display_name(param: Parameter) -> str:
    """How errors and help name a parameter: ``--long-option``, or ``ARGUMENT``."""
    if param.param_type_name == "option":
        long_names = [opt for opt in param.opts if opt.startswith("--")]
        return (long_names or param.opts or [param.name or "?"])[0]
    return param.metavar or (param.name or "?").upper()


def _argument_usage(param: Parameter) -> str:
    name = display_name(param)
    if param.nargs != 1:
        name += "..."
    return name if param.required else f"[{name}]"


def _help_record(param: Parameter, ctx: Context) -> tuple[str, str] | None:
    # The help column (help, default, range, required) is typer's; the name column ours.
    record = param.get_help_record(ctx)
    if record is None:  # hidden
        return None
    if param.param_type_name == "argument":
        name = display_name(param) + ("..." if param.nargs != 1 else "")
        return name, record[1]
    is_flag = bool(getattr(param, "is_flag", False) or getattr(param, "count", False))
    value = "" if is_flag else f" {metavar(param)}"
    names = [join_options(opts)[0] + value for opts in (param.opts, param.secondary_opts) if opts]
    return " / ".join(names), record[1]


def _format_parameters(command: Command, ctx: Context, formatter: HelpFormatter) -> None:
    sections: dict[str, list[tuple[str, str]]] = {"Arguments": [], "Options": []}
    for param in command.get_params(ctx):
        record = _help_record(param, ctx)
        if record is not None:
            section = "Arguments" if param.param_type_name == "argument" else "Options"
            sections[section].append(record)
    for title, rows in sections.items():
        if rows:
            with formatter.section(title):
                formatter.write_dl(rows)


def _usage_pieces(command: Command, ctx: Context) -> list[str]:
    pieces = [command.options_metavar] if command.options_metavar else []
    pieces += [
        _argument_usage(param)
        for param in command.get_params(ctx)
        if param.param_type_name == "argument"
    ]
    return pieces


# ---------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------

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
    cause = exc.__cause__
    if isinstance(cause, ValidationError) and cause.errors():
        # typer 0.29 converts values with pydantic: its error knows the value and the rule.
        error = cause.errors()[0]
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


# ---------------------------------------------------------------------------------------
# The command classes
# ---------------------------------------------------------------------------------------


class CatCommand(TyperCommand):
    """A command with plain help (see the module docstring) and one-line errors."""

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        """Plain help whatever the markup mode (TyperCommand would draw rich boxes)."""
        Command.format_help(self, ctx, formatter)

    def collect_usage_pieces(self, ctx: Context) -> list[str]:
        """``[OPTIONS] ARGUMENT [OPTIONAL]...``, arguments named in capitals."""
        return _usage_pieces(self, ctx)

    def format_help_text(self, ctx: Context, formatter: HelpFormatter) -> None:
        """The docstring, examples verbatim (``write_help_text``)."""
        _format_text(self.help, ctx, formatter)

    def format_epilog(self, ctx: Context, formatter: HelpFormatter) -> None:
        """The epilog, written like the help text."""
        _format_text(self.epilog, ctx, formatter)

    def format_options(self, ctx: Context, formatter: HelpFormatter) -> None:
        """Arguments and options, each name and value in full."""
        _format_parameters(self, ctx, formatter)

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        """Parse, turning errors into one line."""
        with one_line_errors(ctx):
            return super().parse_args(ctx, args)

    def invoke(self, ctx: Context) -> Any:
        """Run, turning errors (``typer.BadParameter``) into one line."""
        with one_line_errors(ctx):
            return super().invoke(ctx)


class CatGroup(TyperGroup):
    """A group with plain help, its commands listed with their first sentence, and
    one-line errors (which also covers its sub-commands)."""

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        """Plain help whatever the markup mode (TyperGroup would draw rich boxes)."""
        Command.format_help(self, ctx, formatter)

    def collect_usage_pieces(self, ctx: Context) -> list[str]:
        """``[OPTIONS] COMMAND [ARGS]...``."""
        return [*_usage_pieces(self, ctx), self.subcommand_metavar]

    def format_help_text(self, ctx: Context, formatter: HelpFormatter) -> None:
        """The group's help, examples verbatim (``write_help_text``)."""
        _format_text(self.help, ctx, formatter)

    def format_epilog(self, ctx: Context, formatter: HelpFormatter) -> None:
        """The epilog, written like the help text."""
        _format_text(self.epilog, ctx, formatter)

    def format_options(self, ctx: Context, formatter: HelpFormatter) -> None:
        """Options, then the commands."""
        _format_parameters(self, ctx, formatter)
        self.format_commands(ctx, formatter)

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        """Each command with its first sentence, wrapped rather than cut short."""
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, _summary(command)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def resolve_command(
        self, ctx: Context, args: list[str]
    ) -> tuple[str | None, Command | None, list[str]]:
        """Find the sub-command; an unknown one is an error that suggests the nearest."""
        name = args[0]
        if self.get_command(ctx, name) is None and not name.startswith("-"):
            guesses = get_close_matches(name, list(self.commands), n=1)
            if guesses:
                hint = f"; did you mean `{ctx.command_path} {guesses[0]}`?"
            else:
                hint = f" (see {ctx.command_path} --help)"
            raise CommandLineError(f"no such command {name!r}{hint}")
        return super().resolve_command(ctx, args)

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        """Parse, turning errors into one line."""
        with one_line_errors(ctx):
            return super().parse_args(ctx, args)

    def invoke(self, ctx: Context) -> Any:
        """Run the sub-command, turning errors into one line."""
        with one_line_errors(ctx):
            return super().invoke(ctx)


def _format_text(text: str | None, ctx: Context, formatter: HelpFormatter) -> None:
    # Like click: a form feed ends what help shows of a docstring.
    text = (text or "").partition("\f")[0]
    if text.strip():
        formatter.write_paragraph()
        with formatter.indentation():
            write_help_text(formatter, text)


def use_cat_classes(typer_app: typer.Typer) -> None:
    """Make every command and sub-group of ``typer_app`` (registered so far, in any module)
    a ``CatCommand`` / ``CatGroup``, unless it chose a class of its own."""
    # typer records its default class (TyperCommand) or a placeholder when none is chosen.
    for command in typer_app.registered_commands:
        if command.cls in (None, TyperCommand):
            command.cls = CatCommand
    for group in typer_app.registered_groups:
        if group.cls in (None, TyperGroup) or isinstance(group.cls, DefaultPlaceholder):
            group.cls = CatGroup
        if group.typer_instance is not None:
            use_cat_classes(group.typer_instance)


# ---------------------------------------------------------------------------------------
# The application
# ---------------------------------------------------------------------------------------

app = typer.Typer(
    name="cat",
    cls=CatGroup,
    # None: click's plain help and errors instead of rich's boxes, for every command.
    rich_markup_mode=None,
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": HELP_MAX_WIDTH},
    help=(
        "Rank large language models by computerized adaptive testing.\n\n"
        "Inside its virtual environment this `cat` also stands in for the system cat: "
        "cat FILE, cat -n FILE, cat - and cat < x go to the system cat, untouched. So "
        "does cat NAME when NAME is an existing file (not a folder), even one named like "
        "a command; python -m cat NAME always runs the command. A first word that is "
        "neither a file nor a command but close to one (cat asses) is an error that names "
        "the command."
    ),
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"cat-llm {package_version()}")
        raise typer.Exit()


@app.callback()
def _root(
    show_version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Rank large language models by computerized adaptive testing."""


app.command(no_args_is_help=True)(calibrate)
app.command(no_args_is_help=True)(simulate)
app.command(no_args_is_help=True)(validate)
app.command(no_args_is_help=True)(synth)
app.command(no_args_is_help=True)(assess)
app.command()(demo)
pool_app.command("fit", no_args_is_help=True)(fit_pool)
app.add_typer(pool_app, name="pool")
app.command("recalibrate", no_args_is_help=True)(recalibrate_pool)
use_cat_classes(app)


def run() -> None:
    """Run the application (the console script's entry for our own commands)."""
    app(prog_name="cat")
