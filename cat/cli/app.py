"""The ``cat`` command line (typer): the application and its commands' registration.

Sub-commands live in their own modules; other packages add theirs through entry points
(``cat.cli.plugins``). Help and errors are styled once, for every
command, by the classes of ``cat.cli.command_classes``; the command modules only write
docstrings, options and ``help=`` texts:

* Help is click's plain layout, at most 100 columns wide (``cat.cli.help_format``).
* Every error is one line on stderr, ``error: ...``, with exit code 2
  (``cat.cli.usage_errors``).
"""

from __future__ import annotations

import typer

from cat.cli.assess import assess
from cat.cli.calibrate import calibrate
from cat.cli.command_classes import CatGroup, use_cat_classes
from cat.cli.compare import compare
from cat.cli.export import export
from cat.cli.help_format import HELP_MAX_WIDTH
from cat.cli.leaderboard import leaderboard
from cat.cli.plugins import load_command, plugin_commands
from cat.cli.pool import pool_app
from cat.cli.pool_create import create_pool_cmd
from cat.cli.pool_fit import fit_pool
from cat.cli.recalibrate import recalibrate_pool
from cat.cli.simulate import simulate
from cat.cli.synth import synth
from cat.cli.validate import validate
from cat.provenance import package_version

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
app.command(no_args_is_help=True)(compare)
app.command(no_args_is_help=True)(leaderboard)
app.command(no_args_is_help=True)(export)
pool_app.command("fit", no_args_is_help=True)(fit_pool)
pool_app.command("create", no_args_is_help=True)(create_pool_cmd)
app.add_typer(pool_app, name="pool")
app.command("recalibrate", no_args_is_help=True)(recalibrate_pool)
# Commands other packages add (cat.cli.plugins): `cat demo` comes from catdemo this way.
for _name, _target in plugin_commands().items():
    app.command(_name)(load_command(_target))
use_cat_classes(app)


def run() -> None:
    """Run the application (the console script's entry for our own commands)."""
    app(prog_name="cat")
