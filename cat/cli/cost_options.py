"""The cost options ``cat assess``, ``cat compare`` and ``cat synth`` share
(``--dry-run``, ``--prices``, ``--max-cost``) and the table a dry run prints."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from cat.cli.common import counted, say, stdout

if TYPE_CHECKING:
    from cat.assessment.cost_estimate import CallsEstimate
    from cat.assessment.examinees import Examinee
    from itempool import LoadedPool
    from synth.pricing import Prices

DRY_RUN = typer.Option(
    False,
    "--dry-run",
    help="Make no call and write nothing: print what the run would ask (calls, tokens in "
    "and out, and money with --prices), from its prompts rendered as they would be sent "
    "and the references' recorded reply lengths.",
)
PRICES = typer.Option(
    None,
    "--prices",
    help='Prices per million tokens, {"model": {"input": x, "output": y}} (as cat synth '
    "--prices): the money in --dry-run and RESULT.json's estimate, and what --max-cost "
    "counts.",
)
MAX_COST = typer.Option(
    None,
    "--max-cost",
    help="Stop the test before a call would take the model's spending past this much, at "
    "--prices (stop reason max_cost; calls answered from the store cost nothing).",
)


def read_prices(path: Path | None) -> Prices | None:
    """``--prices`` read (``synth.pricing.Prices``), or None."""
    from cat.assessment.spending import read_prices as read

    return read(path)


def print_estimates(
    title: str,
    estimates: Sequence[CallsEstimate],
    free: Sequence[str],
    max_cost: float | None = None,
) -> None:
    """The dry run's table: one row a live model; ``free`` names the models that make
    no call (simulated, replayed); with ``max_cost``, how many calls it leaves."""
    table = Table(title=title, title_justify="center")
    table.add_column("model", no_wrap=True)
    for column in ("calls", "tokens in", "tokens out", "cost"):
        table.add_column(column, justify="right")
    for e in estimates:
        replies = "?" if e.completion_tokens is None else f"{e.completion_tokens:,}"
        cost = "—" if e.cost is None else f"{e.cost:,.4f}"
        table.add_row(e.model, f"{e.calls:,}", f"{e.prompt_tokens:,}", replies, cost)
    if estimates:
        stdout.print(table)
    for e in estimates:
        reply = "?" if e.reply_per_call is None else f"{e.reply_per_call:,.0f}"
        say(
            f"{e.model}: a prompt {e.prompt_per_call:,.0f} tokens on average "
            f"({counted(e.rendered, 'prompt')} rendered as they would be sent), a reply "
            f"{reply}: {e.reply_source}"
        )
        if max_cost is not None and e.cost is not None and e.calls:
            affordable = int(max_cost // (e.cost / e.calls))
            if affordable < e.calls:
                say(
                    f"{e.model}: --max-cost {max_cost:g} stops the test after about "
                    f"{affordable:,} calls"
                )
    for name in free:
        say(f"{name}: no call (not a model behind an endpoint)")
    say(
        "no call made, nothing written (--dry-run); tokens estimated at 4 characters a "
        "token (a CJK character 1), the endpoint's tokenizer decides the real count"
    )


def dry_run_estimates(
    pool: LoadedPool,
    examinees: Sequence[tuple[str, Examinee]],
    length: int,
    seed: int,
    prices: Prices | None,
) -> tuple[list[CallsEstimate], list[str]]:
    """Each live model's estimate (``examinees``: each model as given, and its examinee),
    and the models that make no call."""
    from cat.assessment.cost_estimate import estimate_assessment
    from cat.assessment.endpoint import EndpointExaminee

    estimates, free = [], []
    for spec, examinee in examinees:
        if isinstance(examinee, EndpointExaminee):
            estimates.append(
                estimate_assessment(pool, examinee, length=length, seed=seed, prices=prices)
            )
        else:
            free.append(spec)
    return estimates, free
