"""``cat synth``: every participant answers every pool item; answers go to a run store."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table

from cat.cli.common import (
    check_writable,
    fail,
    handle_errors,
    package_version,
    progress_bar,
    stdout,
)

if TYPE_CHECKING:
    from synth.backend import OpenAIBackend
    from synth.items import Pool
    from synth.pricing import Prices
    from synth.prompts import Style
    from synth.runner import RunProgress, RunSettings
    from synth.store import RunStore

#: Kept here rather than imported: the openai client loads only when synth runs.
_DEFAULT_KEY_ENV = "OPENAI_API_KEY"


@handle_errors
def synth(
    pool_dir: Path = typer.Option(..., "--pool", help="Item pool folder (pool.json, items.jsonl)."),
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
        None, "--base-url", help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1."
    ),
    participants: str = typer.Option(
        "singles,pairs", "--participants", help="singles, pairs (ordered), or both."
    ),
    styles: str = typer.Option("direct", "--styles", help="Prompt styles: direct, cot, or both."),
    concurrency: int = typer.Option(8, "--concurrency", min=1, help="Calls in flight at once."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N items."),
    api_key_env: str = typer.Option(
        _DEFAULT_KEY_ENV, "--api-key-env", help="Environment variable holding the API key."
    ),
    timeout: float = typer.Option(60.0, "--timeout", min=0.1, help="Seconds per request."),
    max_attempts: int = typer.Option(6, "--max-attempts", min=1, help="Tries per call."),
    prices: Path | None = typer.Option(
        None, "--prices", help='Prices per million tokens: {"model": {"input": x, "output": y}}.'
    ),
    temperature: float = typer.Option(0.0, "--temperature", min=0.0, help="Sampling temperature."),
    seed: int = typer.Option(0, "--seed", help="Sent with every request; recorded."),
    order_threshold: float = typer.Option(
        0.8,
        "--order-threshold",
        min=-1.0,
        max=1.0,
        help="An ordering answer passes when its Kendall tau with the key reaches this.",
    ),
) -> None:
    """Ask every participant (each agent alone, and each ordered pair by generation ->
    debate -> reflection) every question of a pool, grade the answers and write the
    response matrix for `cat calibrate`.

    Every reply is stored the moment it arrives: rerun the same command after a crash
    or Ctrl-C and only the missing calls are made. The API key is read from
    $OPENAI_API_KEY (or --api-key-env) and never written anywhere.

    Example (a local vLLM or Ollama server):

      cat synth --pool item_pools/demo --agents qwen2.5:7b,llama3.1:8b
                --base-url http://localhost:11434/v1 --store run.db --out responses.jsonl
    """
    from synth.backend import OpenAIBackend, RetryPolicy, api_key, check_reachable
    from synth.export import summarize_results, write_choices, write_responses
    from synth.items import Pool, read_pool
    from synth.participants import KINDS, make_participants, parse_agents
    from synth.pricing import Prices
    from synth.prompts import PROMPT_VERSION
    from synth.runner import RunSettings
    from synth.store import RunStore

    check_writable(out, choices_file(out), store_path)
    pool = read_pool(pool_dir)
    if limit is not None:
        pool = Pool(name=pool.name, language=pool.language, items=pool.items[:limit])
    agent_list = parse_agents(agents, base_url)
    style_list = [_style(s) for s in styles.split(",") if s.strip()]
    kinds = [k.strip() for k in participants.split(",") if k.strip()]
    if any(k not in KINDS for k in kinds):
        raise fail(f"--participants takes {', '.join(KINDS)}, got {participants!r}")
    who = make_participants(agent_list, kinds, style_list)
    price_table = Prices.read(prices) if prices else None
    urls = sorted({a.base_url for a in agent_list})
    for url in urls:
        api_key(url, api_key_env)  # a missing key fails here, before any call
        check_reachable(url)
    retry = RetryPolicy(max_attempts=max_attempts)
    backends = {
        url: OpenAIBackend(url, api_key_env, timeout, retry, seed=seed + k)
        for k, url in enumerate(urls)
    }
    settings = RunSettings(
        temperature=temperature,
        seed=seed,
        concurrency=concurrency,
        order_threshold=order_threshold,
    )
    t0 = time.perf_counter()
    with RunStore(store_path) as store:
        store.set_meta(
            "run",
            {
                "pool": pool.name,
                "language": pool.language,
                "agents": [a.model for a in agent_list],
                "participants": [p.name for p in who],
                "prompt_version": PROMPT_VERSION,
                "temperature": temperature,
                "seed": seed,
                "order_threshold": order_threshold,
                "package_version": package_version(),
                "updated": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            },
        )
        progress = _run(pool, who, store, backends, settings, price_table)
        results = store.results()
        totals = store.totals()
    names = [p.name for p in who]
    item_ids = [i.id for i in pool.items]
    n_subjects = write_responses(results, names, item_ids, out)
    choices_path = choices_file(out)
    write_choices(results, names, item_ids, choices_path)
    summary = summarize_results(results, names)
    _print(summary, progress, totals, time.perf_counter() - t0)
    stdout.print(
        f"{n_subjects} participants written to {out} (chosen options: {choices_path}); "
        f"calls stored in {store_path}"
    )


def choices_file(out: Path) -> Path:
    """Where the chosen options go beside the responses: ``run.jsonl`` → ``run.choices.jsonl``."""
    name = out.name[: -len(".jsonl")] if out.name.endswith(".jsonl") else out.name
    return out.with_name(f"{name}.choices.jsonl")


def _style(text: str) -> Style:
    from synth.prompts import Style

    try:
        return Style(text.strip())
    except ValueError as exc:
        raise fail(f"--styles takes direct, cot; got {text!r}") from exc


def _run(
    pool: Pool,
    who: list[Any],
    store: RunStore,
    backends: dict[str, OpenAIBackend],
    settings: RunSettings,
    prices: Prices | None,
) -> RunProgress:

    total = sum(p.n_stages for p in who) * len(pool.items)
    with progress_bar("synthesising", total=total) as update:
        last = [0.0]

        def show(p: RunProgress) -> None:
            now = time.perf_counter()
            if now - last[0] < 0.1 and p.done < p.total:
                return
            last[0] = now
            update(
                completed=p.done,
                description=f"{p.done:,}/{p.total:,} calls · {p.failed_calls} failed · "
                f"{p.tokens:,} tokens · {p.cost:.2f} cost · {p.rate:.0f}/s",
            )

        from synth.runner import SynthRunner

        runner = SynthRunner(pool, who, store, backends, settings, prices, show)

        async def main() -> RunProgress:
            try:
                return await runner.run()
            finally:
                for backend in backends.values():
                    await backend.close()

        return asyncio.run(main())


def _print(
    summary: dict[str, Any], progress: RunProgress, totals: dict[str, float], seconds: float
) -> None:
    table = Table(title="Synthesis")
    for col in ("participant", "answered", "accuracy", "unparsed", "failed"):
        table.add_column(col, justify="left" if col == "participant" else "right")
    for name, row in summary["participants"].items():
        acc = "—" if row["accuracy"] is None else f"{row['accuracy']:.3f}"
        table.add_row(name, str(row["answered"]), acc, str(row["unparsed"]), str(row["failed"]))
    stdout.print(table)
    flips = summary["reflection"]
    if flips["pairs_graded"]:
        stdout.print(
            f"reflection changed {flips['right_to_wrong']} right first answers to wrong and "
            f"{flips['wrong_to_right']} wrong ones to right ({flips['pairs_graded']} pair answers)"
        )
    cost = f", cost {totals['cost']:.4f}" if totals["cost"] else ""
    stdout.print(
        f"{progress.new_calls:,} new calls ({progress.stored_calls:,} from the store, "
        f"{progress.failed_calls} failed) in {seconds:.1f} s; store total {int(totals['calls']):,} "
        f"calls, {int(totals['prompt_tokens'] + totals['completion_tokens']):,} tokens{cost}"
    )
