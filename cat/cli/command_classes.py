"""The click classes of every ``cat`` command and group: plain help, one-line errors.

``use_cat_classes`` gives them to every command of a typer application, so that the
command modules only write docstrings, options and ``help=`` texts. How help is laid out
is in ``cat.cli.help_format``; how an error becomes one line, in ``cat.cli.usage_errors``.
"""

from __future__ import annotations

from difflib import get_close_matches
from typing import Any

import typer
from typer._click import Command, Context, HelpFormatter
from typer.core import TyperCommand, TyperGroup
from typer.models import DefaultPlaceholder

from cat.cli.help_format import command_summary, format_parameters, format_text, usage_pieces
from cat.cli.usage_errors import CommandLineError, one_line_errors
from cat.errors import command_line


class _PlainCommand(Command):
    """What commands and groups share: plain help (``cat.cli.help_format``) and one-line
    errors (``cat.cli.usage_errors``). Listed before typer's class among the bases."""

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        """Plain help whatever the markup mode (typer's classes would draw rich boxes)."""
        Command.format_help(self, ctx, formatter)

    def collect_usage_pieces(self, ctx: Context) -> list[str]:
        """``[OPTIONS] ARGUMENT [OPTIONAL]...``, arguments named in capitals."""
        return usage_pieces(self, ctx)

    def format_help_text(self, ctx: Context, formatter: HelpFormatter) -> None:
        """The docstring, examples verbatim (``write_help_text``)."""
        format_text(self.help, ctx, formatter)

    def format_epilog(self, ctx: Context, formatter: HelpFormatter) -> None:
        """The epilog, written like the help text."""
        format_text(self.epilog, ctx, formatter)

    def format_options(self, ctx: Context, formatter: HelpFormatter) -> None:
        """Arguments and options, each name and value in full."""
        format_parameters(self, ctx, formatter)

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        """Parse, turning errors into one line."""
        with one_line_errors(ctx), command_line():
            return super().parse_args(ctx, args)

    def invoke(self, ctx: Context) -> Any:
        """Run, turning errors (``typer.BadParameter``) into one line that names options
        as flags (``cat.errors.command_line``)."""
        with one_line_errors(ctx), command_line():
            return super().invoke(ctx)


class CatCommand(_PlainCommand, TyperCommand):
    """A command with plain help and one-line errors."""


class CatGroup(_PlainCommand, TyperGroup):
    """A group with plain help, its commands listed with their first sentence, and
    one-line errors (which also covers its sub-commands)."""

    def collect_usage_pieces(self, ctx: Context) -> list[str]:
        """``[OPTIONS] COMMAND [ARGS]...``."""
        return [*super().collect_usage_pieces(ctx), self.subcommand_metavar]

    def format_options(self, ctx: Context, formatter: HelpFormatter) -> None:
        """Options, then the commands."""
        super().format_options(ctx, formatter)
        self.format_commands(ctx, formatter)

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        """Each command with its first sentence, wrapped rather than cut short."""
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command_summary(command)))
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
