"""The ``cat`` command line (typer). Sub-commands live in their own modules."""

from __future__ import annotations

import typer

from cat.cli.assess import assess
from cat.cli.calibrate import calibrate
from cat.cli.common import package_version
from cat.cli.demo import demo
from cat.cli.pool import pool_app
from cat.cli.pool_fit import fit_pool
from cat.cli.recalibrate import recalibrate_pool
from cat.cli.simulate import simulate
from cat.cli.synth import synth
from cat.cli.validate import validate

app = typer.Typer(
    name="cat",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    help=(
        "Rank large language models by computerized adaptive testing.\n\n"
        "Calls that are not one of these commands (cat FILE, cat -n FILE, cat < x) "
        "go to the system cat."
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


def run() -> None:
    """Run the application (the console script's entry for our own commands)."""
    app(prog_name="cat")
