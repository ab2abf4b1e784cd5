"""Plain help for every command of the ``cat`` command line.

Help is click's plain layout (``Usage:``, the help text, ``Arguments:``, ``Options:``,
``Commands:``), not typer's rich boxes, which cut option names and defaults short at 80
columns. Option values are named like click's (PATH, TEXT, INTEGER, FLOAT, a choice as
``[mfi|kl|random]``); flags have none. Help is at most 100 columns wide, wrapped to the
terminal when narrower. See ``write_help_text`` for how a docstring keeps an example
verbatim. The command classes that use these functions are in ``cat.cli.command_classes``.
"""

from __future__ import annotations

import io
import re
from datetime import datetime
from enum import Enum
from pathlib import Path
from types import NoneType, UnionType
from typing import Any, Union, get_args, get_origin
from uuid import UUID

from typer._click import Command, Context, HelpFormatter, Parameter
from typer._click.formatting import join_options
from typer.models import ParameterInfo

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


def command_summary(command: Command) -> str:
    """A command's line in its group's list: its short help, else its first sentence."""
    if command.short_help:
        return " ".join(command.short_help.split())
    first_paragraph = _paragraphs(command.help or "")[:1]
    text = " ".join(" ".join(first_paragraph[0]).split()) if first_paragraph else ""
    # Whole, never cut with "...": the list wraps it instead.
    return re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]


def format_text(text: str | None, ctx: Context, formatter: HelpFormatter) -> None:
    """Write a help text or an epilog as its own indented paragraph (``write_help_text``)."""
    # Like click: a form feed ends what help shows of a docstring.
    text = (text or "").partition("\f")[0]
    if text.strip():
        formatter.write_paragraph()
        with formatter.indentation():
            write_help_text(formatter, text)


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


def format_parameters(command: Command, ctx: Context, formatter: HelpFormatter) -> None:
    """The ``Arguments:`` and ``Options:`` sections, each name and value in full."""
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


def usage_pieces(command: Command, ctx: Context) -> list[str]:
    """``[OPTIONS] ARGUMENT [OPTIONAL]...``, arguments named in capitals."""
    pieces = [command.options_metavar] if command.options_metavar else []
    pieces += [
        _argument_usage(param)
        for param in command.get_params(ctx)
        if param.param_type_name == "argument"
    ]
    return pieces
