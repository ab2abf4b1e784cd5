"""``cat synth``: every participant answers every pool item; answers go to a run store.

Parses the options, calls ``synth.job.run_synthesis`` and renders its report.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table

from cat.cli.common import check_writable, counted, fail, handle_errors, progress_bar, say, stdout
from cat.cli.cost_options import DRY_RUN
from cat.cli.generation_options import (
    CONCURRENCY,
    EXTRA_BODY,
    MAX_TOKENS,
    STOP,
    SYNTH_FEW_SHOT,
    SYNTH_PROMPT_TEMPLATE,
    SYSTEM_PROMPT,
    TEMPERATURE,
    generation_settings,
)
from synth.names import DEFAULT_KEY_ENV, KINDS, OPEN_GRADINGS, Style

if TYPE_CHECKING:
    from synth.batch_api import BatchApiRun, BatchProgress
    from synth.batch_round import BatchRound
    from synth.estimate import SynthesisEstimate
    from synth.job import SynthesisReport
    from synth.runner import RunProgress

_STYLES = tuple(s.value for s in Style)


@handle_errors
def synth(
    pool_dir: Path = typer.Option(
        ...,
        "--pool",
        help="Item pool: a folder (pool.json, items.jsonl), or a shipped pool's name.",
    ),
    agents: str = typer.Option(
        ..., "--agents", help="Models, comma-separated; MODEL@URL gives one its own endpoint."
    ),
    store_path: Path = typer.Option(..., "--store", help="Run store (SQLite); reruns resume it."),
    out: Path = typer.Option(
        ...,
        "--out",
        help="Write the response matrix here (JSONL); chosen options go beside it "
        "(NAME.choices.jsonl, for cat pool fit --choices).",
    ),
    base_url: str | None = typer.Option(
        None,
        "--base-url",
        help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 (not needed with "
        "--batch-out/--batch-in, which make no call).",
    ),
    participants: str = typer.Option(
        ",".join(KINDS),
        "--participants",
        help=f"Who answers, comma-separated, from: {', '.join(KINDS)} "
        "(each agent alone; each ordered pair of agents).",
    ),
    styles: str = typer.Option(
        Style.DIRECT.value,
        "--styles",
        help=f"Prompt styles, comma-separated, from: {', '.join(_STYLES)}.",
    ),
    concurrency: int = CONCURRENCY,
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N items."),
    api_key_env: str = typer.Option(
        DEFAULT_KEY_ENV, "--api-key-env", help="Environment variable holding the API key."
    ),
    timeout: float = typer.Option(60.0, "--timeout", min=0.1, help="Seconds per request."),
    max_attempts: int = typer.Option(6, "--max-attempts", min=1, help="Tries per call."),
    prices: Path | None = typer.Option(
        None,
        "--prices",
        help='Prices per million tokens: {"model": {"input": x, "output": y}}; calls answered '
        'by batches pay "batch_input" and "batch_output", half the online prices unless given.',
    ),
    temperature: float | None = TEMPERATURE,
    max_tokens: int | None = MAX_TOKENS,
    system_prompt: str | None = SYSTEM_PROMPT,
    prompt_template: Path | None = SYNTH_PROMPT_TEMPLATE,
    few_shot: int | None = SYNTH_FEW_SHOT,
    stop: list[str] | None = STOP,
    extra_body: str | None = EXTRA_BODY,
    seed: int = typer.Option(0, "--seed", help="Sent with every request; recorded."),
    order_threshold: float = typer.Option(
        0.8,
        "--order-threshold",
        min=-1.0,
        max=1.0,
        help="An ordering answer passes when its Kendall tau with the key reaches this "
        "(the 0/1 reading; an order item with max_score above 1 scores (tau + 1) / 2).",
    ),
    judge_model: str | None = typer.Option(
        None,
        "--judge-model",
        help="An LLM judge that also scores open items' answers 0..max_score (on "
        "--base-url, or MODEL@URL); its judgements are stored and never asked twice.",
    ),
    open_grading: str = typer.Option(
        "metric",
        "--open-grading",
        help="Where open items' points come from: metric (ROUGE-L / the numeric answer) or "
        "judge (needs --judge-model); the other is kept and compared in the summary.",
    ),
    binary: bool = typer.Option(
        False,
        "--binary",
        help="Write 0/1 answers even when items score above 1 (multi: all letters right; "
        "order: tau >= --order-threshold; open: at least half the points).",
    ),
    report_path: Path | None = typer.Option(
        None, "--report", help="Also write the run summary here (JSON)."
    ),
    batch_out: Path | None = typer.Option(
        None,
        "--batch-out",
        help="Make no call: write the next round's requests into this folder as OpenAI "
        "batch files (vllm run-batch -i FILE -o OUT reads them), one series per model, "
        "and stop. The custom_id of each line is its call's key in the store.",
    ),
    batch_in: Path | None = typer.Option(
        None,
        "--batch-in",
        help="Import batch results (a result file, or a folder of them) into the store, "
        "then write the next round's requests (--batch-out) or, once every stage is "
        "answered, the responses as an online run does.",
    ),
    batch: bool = typer.Option(
        False,
        "--batch",
        help="Run through the endpoint's Batch API (/v1/files, /v1/batches; half the "
        "price on OpenAI): each stage is a round of batches, uploaded, polled and "
        "imported. Killed or stopped, the same command resumes the batches it created.",
    ),
    batch_cancel: bool = typer.Option(
        False,
        "--batch-cancel",
        help="Cancel this run's batches still in flight at the provider, and stop. What "
        "they answered before the cancel is imported by the next --batch run, which asks "
        "the rest again.",
    ),
    poll_seconds: float = typer.Option(
        30.0, "--poll-seconds", min=0.0, help="With --batch: seconds between polls."
    ),
    max_batch_lines: int = typer.Option(
        50_000,
        "--max-batch-lines",
        min=1,
        max=50_000,
        help="With --batch or --batch-out: requests a batch file holds at most (files are "
        "also split at 200 MB). Smaller files fit a provider's limit of requests in "
        "flight (OpenAI's enqueued tokens) better.",
    ),
    max_batch_attempts: int = typer.Option(
        3,
        "--max-batch-attempts",
        min=1,
        help="With --batch or --batch-in: a request whose result is an error (or is "
        "missing from an ended batch, with --batch) is asked again in the next round, up "
        "to this many times; then it is recorded as failed.",
    ),
    dry_run: bool = DRY_RUN,
) -> None:
    """Ask every participant (each agent alone, and each ordered pair by generation ->
    debate -> reflection) every question of a pool, grade the answers and write the
    response matrix for `cat calibrate`.

    Every answer scores 0..max_score: a pool whose items all score 0/1 gets a 0/1
    matrix; with any item above 1 (multi and order partial credit, open items) the
    matrix holds the scores, unless --binary. Open items (free text) are graded against
    their references or numeric answer, and by an LLM judge with --judge-model.

    Every reply is stored the moment it arrives: rerun the same command after a crash
    or Ctrl-C and only the missing calls are made. The API key is read from
    $OPENAI_API_KEY (or --api-key-env) and never written anywhere.

    How the answers are asked (--temperature, --max-tokens, --system-prompt,
    --prompt-template, --few-shot, --stop, --extra-body) is recorded in the store, which
    then takes no run asked otherwise: a changed setting needs a store of its own.

    Examples: on a local vLLM or Ollama server.

      cat synth --pool item_pools/demo --agents qwen2.5:7b,llama3.1:8b \\
          --base-url http://localhost:11434/v1 \\
          --store run.db --out responses.jsonl

    No LLM at all: the simulated server of the tests, started first (in another
    terminal) with python -m synth.local_server --pool examples/mini_pool --models
    good=0.9,bad=0.4 --port 8765, plays the models good and bad.

      cat synth --pool examples/mini_pool --agents good,bad \\
          --base-url http://127.0.0.1:8765/v1 \\
          --store mini.db --out mini.jsonl

    Through the endpoint's Batch API (half the price on OpenAI): rounds of batches,
    uploaded, polled and imported; rerun the same command to resume after a stop.

      cat synth --pool item_pools/demo-en --agents gpt-4o-mini,gpt-4o \\
          --base-url https://api.openai.com/v1 \\
          --store run.db --out responses.jsonl --batch --prices prices.json

    Offline, through batch files (vllm run-batch, or any engine reading OpenAI batch
    lines): each round writes requests, the engine answers them, the next imports them.
    No call is made, so no --base-url is needed; the folders are made if missing. The
    first command writes batches/round01-good-001.jsonl and round01-bad-001.jsonl; the
    engine answers each into results/ (vllm run-batch -i batches/FILE -o results/FILE);
    the second imports the answers and writes the next round's requests, and so on
    until it writes mini.jsonl.

      cat synth --pool examples/mini_pool --agents good,bad \\
          --store mini.db --out mini.jsonl --batch-out batches/

      cat synth --pool examples/mini_pool --agents good,bad \\
          --store mini.db --out mini.jsonl \\
          --batch-in results/ --batch-out batches/
    """
    from synth.batch_api import cancel_batches, run_batch_api
    from synth.batch_round import run_batch_round
    from synth.job import prepare_run, run_synthesis

    check_writable(
        {"--store": store_path, "--out": out, "--report": report_path},
        folders={"--batch-out": batch_out},
    )
    kinds = comma_list(participants, KINDS, "--participants")
    if open_grading not in OPEN_GRADINGS:
        raise fail(f"--open-grading takes {' or '.join(OPEN_GRADINGS)}; got {open_grading!r}")
    style_list = [Style(s) for s in comma_list(styles, _STYLES, "--styles")]
    generation = generation_settings(
        temperature=temperature,
        max_tokens=max_tokens,
        system_prompt=system_prompt,
        prompt_template=prompt_template,
        few_shot=few_shot,
        stop=stop,
        extra_body=extra_body,
    )
    # What the online run and a batch round share (run_synthesis and prepare_run).
    common: dict[str, Any] = {
        "store": store_path,
        "out": out,
        "base_url": base_url,
        "participants": kinds,
        "styles": style_list,
        "limit": limit,
        "generation": generation,
        "seed": seed,
        "concurrency": concurrency,
        "order_threshold": order_threshold,
        "judge_model": judge_model,
        "open_grading": open_grading,
        "binary": binary,
        "report": report_path,
        "prices": prices,
        "timeout": timeout,
    }
    if (batch or batch_cancel) and (batch_out is not None or batch_in is not None):
        raise fail("--batch runs through the Batch API; --batch-out/--batch-in through files")
    if dry_run:
        from synth.estimate import dry_run as estimate

        # No call, so no URL needed yet; nothing is written (the store is only read).
        print_synthesis_estimate(estimate(prepare_run(pool_dir, agents, **common, offline=True)))
        return
    if batch_cancel:
        cancelled = cancel_batches(prepare_run(pool_dir, agents, **common), api_key_env=api_key_env)
        for name, status in cancelled:
            say(f"{name}: {status}")
        say(
            f"{counted(len(cancelled), 'batch', 'batches')} asked to cancel; run the same "
            "command with --batch to import what they answered and ask the rest again"
        )
        return
    if batch:
        plan = prepare_run(pool_dir, agents, **common)
        with progress_bar("planning the first round", total=None) as update:
            run = run_batch_api(
                plan,
                api_key_env=api_key_env,
                max_batch_attempts=max_batch_attempts,
                poll_seconds=poll_seconds,
                max_requests=max_batch_lines,
                progress=_progress(update, _planning_line),
                on_batches=_batch_progress(update),
            )
        _print_batch_run(run)
        print_report(run.report)
        return
    if batch_out is not None or batch_in is not None:
        with progress_bar("planning the batch round", total=None) as update:
            done = run_batch_round(
                # No call is made: an agent needs no URL until the run goes online.
                prepare_run(pool_dir, agents, **common, offline=True),
                batch_in=batch_in,
                batch_out=batch_out,
                max_batch_attempts=max_batch_attempts,
                max_requests=max_batch_lines,
                progress=_progress(update),
            )
        _print_round(done)
        if done.report is not None:
            print_report(done.report)
        return
    with progress_bar("synthesising", total=None) as update:
        report = run_synthesis(
            pool_dir,
            agents,
            **common,
            api_key_env=api_key_env,
            max_attempts=max_attempts,
            progress=_progress(update),
        )
    print_report(report)


def print_synthesis_estimate(estimate: SynthesisEstimate, title: str = "cat synth") -> None:
    """A synthesis's dry run: each model's calls, tokens and cost."""
    table = Table(title=f"{title}, no call made", title_justify="center")
    table.add_column("model", no_wrap=True)
    for column in ("calls", "in the store", "tokens in", "tokens out", "cost"):
        table.add_column(column, justify="right")
    for m in estimate.models:
        out = "?" if m.completion_tokens is None else f"{m.completion_tokens:,}"
        cost = "—" if m.cost is None else f"{m.cost:,.4f}"
        table.add_row(m.model, f"{m.calls:,}", f"{m.stored:,}", f"{m.prompt_tokens:,}", out, cost)
    stdout.print(table)
    reply = "?" if estimate.reply_tokens is None else f"{estimate.reply_tokens:,.0f}"
    say(f"a reply {reply} tokens: {estimate.reply_source}")
    say(
        f"{estimate.calls:,} calls to make; no call made, nothing written (--dry-run); "
        "tokens estimated at 4 characters a token (a CJK character 1), every prompt "
        "rendered as it would be sent (a pair's earlier replies stood in for)"
    )


def comma_list(text: str, choices: Sequence[str], flag: str) -> list[str]:
    values = [v.strip() for v in text.split(",") if v.strip()]
    if not values or any(v not in choices for v in values):
        raise fail(f"{flag} takes {', '.join(choices)} (comma-separated); got {text!r}")
    return values


def _calls_line(p: RunProgress) -> str:
    return (
        f"{p.done:,}/{p.total:,} calls · {p.failed_calls} failed · {p.tokens:,} tokens · "
        f"{p.cost:.2f} cost · {p.rate:.0f}/s"
    )


def _planning_line(p: RunProgress) -> str:
    """The walk that plans a batch round: every job looked up in the store."""
    return f"planning the next round: {p.done:,}/{p.total:,} calls looked up"


def _progress(
    update: Callable[..., None], describe: Callable[[RunProgress], str] = _calls_line
) -> Callable[[RunProgress], None]:
    last = [0.0]

    def show(p: RunProgress) -> None:
        now = time.perf_counter()
        if now - last[0] < 0.1 and p.done < p.total:
            return  # redrawing on every call would cost more than the calls
        last[0] = now
        update(total=p.total, completed=p.done, description=describe(p))

    return show


def _batch_progress(update: Callable[..., None]) -> Callable[[BatchProgress], None]:
    """A line as each round is submitted and as it ends; the bar in between."""
    from synth.batch_round import stages_text

    def show(p: BatchProgress) -> None:
        statuses = ", ".join(f"{n} {status}" for status, n in sorted(p.statuses.items()))
        if p.phase == "submitted":
            say(
                f"round {p.round}: {counted(p.requests, 'request')} "
                f"({stages_text(p.stages)}) in {counted(p.batches, 'batch', 'batches')}: "
                f"{statuses}"
            )
        elif p.phase == "ended":
            refused = (
                f"; {counted(p.refused, 'batch', 'batches')} over the provider's limit of "
                "requests in flight, asked again"
                if p.refused
                else ""
            )
            say(
                f"round {p.round} ended ({statuses}): {counted(p.imported, 'result')} "
                f"imported, {counted(p.errors, 'error')}{refused}"
            )
        doing = "created" if p.phase == "uploading" else "ended"
        update(
            total=p.batches,
            completed=p.done,
            description=f"round {p.round}: {p.done}/{p.batches} batches {doing} · "
            f"{p.answered:,}/{p.requests:,} requests answered · {statuses}",
        )

    return show


def _print_batch_run(run: BatchApiRun) -> None:
    if not run.rounds:
        say("Batch API: nothing left to ask (every call is answered or failed in the store)")
        return
    resumed = f", {run.resumed} resumed from an earlier run" if run.resumed else ""
    say(
        f"Batch API: {counted(run.rounds, 'round')}, "
        f"{counted(run.batches, 'batch', 'batches')} created "
        f"({counted(run.submitted, 'request')}{resumed}); "
        f"{counted(run.imported, 'result')} imported, {counted(run.errors, 'error')} "
        "(asked again next round, within --max-batch-attempts)"
    )


def print_report(report: SynthesisReport) -> None:
    scored = report.max_score > 1
    table = Table(title="Synthesis")
    columns = ("participant", "answered", "accuracy", *(("mean share",) if scored else ()))
    for col in (*columns, "unparsed", "failed"):
        table.add_column(col, justify="left" if col == "participant" else "right")
    for row in report.participants:
        shares = (_figure(row.mean_share),) if scored else ()
        table.add_row(
            row.name,
            str(row.answered),
            _figure(row.accuracy),
            *shares,
            str(row.unparsed),
            str(row.failed),
        )
    stdout.print(table)
    flips = report.reflection
    if flips.pairs_graded:
        say(
            f"reflection changed {flips.right_to_wrong} right first answers to wrong and "
            f"{flips.wrong_to_right} wrong ones to right ({flips.pairs_graded} pair answers)"
        )
    if report.regraded_answers:
        say(f"{report.regraded_answers:,} stored answers graded again from their stored replies")
    _print_judge(report)
    _print_batch_cost(report)
    totals = report.store_totals
    cost = f", cost {totals.cost:.4f}" if totals.cost else ""
    say(
        f"{_calls(report)} in {report.seconds:.1f} s; store total {totals.calls:,} calls, "
        f"{totals.tokens:,} tokens{cost}"
    )
    about = [f"scores 0..{report.max_score}"] if report.scores == "points" else []
    about += [f"open items by the {report.open_grading}"] if report.n_open_items else []
    about.append(f"chosen options: {report.choices}")
    say(
        f"{report.n_written} participant{'' if report.n_written == 1 else 's'} written to "
        f"{report.responses} ({'; '.join(about)}); calls stored in {report.store}"
    )
    if report.report is not None:
        say(f"summary written to {report.report}")
    for note in report.notes:
        say(f"note: {note}")


def _print_batch_cost(report: SynthesisReport) -> None:
    batch = report.batch
    if batch is None or not batch.online_cost:
        return
    saved = 1.0 - batch.cost / batch.online_cost
    say(
        f"the {batch.calls:,} calls answered by batches cost {batch.cost:.4f} at batch "
        f"prices against {batch.online_cost:.4f} for the same calls online ({saved:.0%} saved)"
    )


def _figure(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _print_judge(report: SynthesisReport) -> None:
    judge = report.judge
    if judge is None:
        return
    failed = f", {judge.failed} failed ({judge.refused} refused scores)" if judge.failed else ""
    say(
        f"judge {judge.model} (prompt {judge.prompt_version}): {judge.judged} of "
        f"{judge.open_answers} open answers judged ({judge.new} new, {judge.from_store} "
        f"from the store{failed})"
    )
    agree = judge.agreement
    if agree.n:
        say(
            f"judge vs metric on {agree.n} open answers: exact agreement "
            f"{_figure(agree.exact)}, quadratic-weighted kappa {_figure(agree.quadratic_kappa)}"
            f", Spearman rho {_figure(agree.spearman)}"
        )


def _calls(report: SynthesisReport) -> str:
    """Where this run's answers came from, true whether all, some or none were stored."""
    if report.batch is not None and report.new_calls == 0:
        failed = f" ({report.failed_calls:,} failed)" if report.failed_calls else ""
        return (
            f"{report.n_answers:,} answers from the store, {report.batch.calls:,} of its "
            f"calls answered by batches{failed}"
        )
    if report.all_from_store:
        return f"no new calls: all {report.n_answers:,} answers came from the store"
    return (
        f"{report.new_calls:,} new calls ({report.failed_calls:,} failed; "
        f"{report.stored_answers:,} of {report.n_answers:,} answers from the store)"
    )


def _print_round(done: BatchRound) -> None:
    from synth.batch_round import stages_text

    if done.imported or done.errors or done.unmatched:
        say(
            f"imported {done.imported:,} batch results; {done.errors:,} were errors (asked "
            f"again next round, within --max-batch-attempts); {done.unmatched:,} matched no "
            "call still to make (answered before, or of another run)"
        )
    if done.report is not None:
        say("every stage is answered: responses written")
        return
    say(f"round {done.round}: {done.n_remaining:,} calls remain ({stages_text(done.remaining)})")
    for path in done.files:
        say(f"  requests: {path}")
