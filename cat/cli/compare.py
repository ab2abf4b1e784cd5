"""``cat compare``: is model A better than model B? Both answer the same adaptively chosen
items until the 95% interval of their accuracy difference decides it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from cat.cli.common import (
    check_writable,
    fail,
    handle_errors,
    progress_bar,
    say,
    stdout,
    warn_off_protocol,
)
from cat.cli.cost_options import (
    DRY_RUN,
    PRICES,
    dry_run_estimates,
    print_estimates,
    read_prices,
)
from cat.cli.generation_options import (
    EXTRA_BODY,
    EXTRACTOR,
    MAX_TOKENS,
    PROTOCOL_FORM,
    STOP,
    STYLE,
    SYSTEM_PROMPT,
    TEMPERATURE,
    few_shot_option,
    generation_settings,
    prompt_template_option,
)
from synth.names import Style

if TYPE_CHECKING:
    from cat.assessment.examinees import Examinee
    from cat.comparison.paired import PairedTest
    from cat.comparison.result import CompareResult, ModelSide
    from synth.store import RunStore

_PROMPT_TEMPLATE = prompt_template_option("Live models only, both asked alike.")
_FEW_SHOT = few_shot_option("The test never asks an item shown as an example. Live models only.")

#: MODEL@URL: a model at its own endpoint.
_AT_URL = re.compile(r"^(?P<model>.+)@(?P<url>https?://\S+)$")


@handle_errors
def compare(
    models: list[str] | None = typer.Option(
        None,
        "--model",
        help="Give twice, A then B: a model name at --base-url, MODEL@URL (at its own "
        "endpoint), sim:THETA (simulated) or replay:FILE#SUBJECT (recorded answers).",
    ),
    results: tuple[Path, Path] | None = typer.Option(
        None,
        "--results",
        metavar="A.json B.json",
        help="Instead of --model: two RESULT.json files of cat assess on one pool, A then B.",
    ),
    pool_dir: Path | None = typer.Option(
        None,
        "--pool",
        help="Calibrated pool of 0/1 items (folder or shipped name); with --results, "
        "default: the pool the first result names.",
    ),
    base_url: str | None = typer.Option(
        None, "--base-url", help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1."
    ),
    margin: float = typer.Option(
        0.01,
        "--margin",
        min=0.0,
        help="Equivalent when the 95% interval lies within ± this (0.01: one point).",
    ),
    max_length: int = typer.Option(250, "--max-length", min=1, help="Most items asked."),
    min_length: int = typer.Option(
        30, "--min-length", min=0, help="No decision before this many items both answered."
    ),
    batch_size: int = typer.Option(1, "--batch-size", min=1, help="Items asked at once."),
    predictor: str = typer.Option(
        "auto",
        "--predictor",
        help="Each model's accuracy from irt (the IRT plug-in of cat assess), mixture (the "
        "reference mixture) or auto: the one whose cross-fitted errors of pairs of the "
        "pool's references are narrower.",
    ),
    no_balance: bool = typer.Option(
        False, "--no-content-balancing", help="Do not keep the pool's mix of scenarios."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the simulated answers; recorded."),
    out: Path | None = typer.Option(None, "--out", help="Write COMPARE.json here."),
    store_path: Path = typer.Option(
        Path("cat-assess.db"), "--store", help="Run store of live models' calls (SQLite)."
    ),
    api_key_env: str = typer.Option(
        "OPENAI_API_KEY", "--api-key-env", help="Environment variable holding the API key."
    ),
    timeout: float = typer.Option(60.0, "--timeout", min=0.1, help="Seconds per request."),
    max_attempts: int = typer.Option(6, "--max-attempts", min=1, help="Tries per call."),
    temperature: float | None = TEMPERATURE,
    max_tokens: int | None = MAX_TOKENS,
    system_prompt: str | None = SYSTEM_PROMPT,
    prompt_template: Path | None = _PROMPT_TEMPLATE,
    few_shot: int | None = _FEW_SHOT,
    stop: list[str] | None = STOP,
    extra_body: str | None = EXTRA_BODY,
    extractor: str | None = EXTRACTOR,
    style: Style | None = STYLE,
    protocol_form: str | None = PROTOCOL_FORM,
    dry_run: bool = DRY_RUN,
    prices: Path | None = PRICES,
) -> None:
    """Compare two models on the same items: each item the one that most narrows the
    predicted accuracy difference Δ = A − B, until its 95% interval excludes 0 (A or B
    better), lies within ±--margin (equivalent), or --max-length items are used
    (inconclusive). The interval holds the pool's cross-fitted errors of pairs of its
    reference models (cat calibrate --pool --cross-fit), not θ's uncertainty alone.
    Prints the decision, Δ with its interval, the smallest difference the test could
    detect, each model's predicted accuracy and the items used. A rerun with the same
    --store asks nothing twice. --results compares two finished cat assess runs.
    Live models are asked as the pool's protocol says (as cat assess asks them) unless
    the generation options say otherwise; a model asked otherwise is marked.

    Examples:

      cat compare --pool item_pools/demo-en --model sim:1.0 --model sim:0.2

      cat compare --pool item_pools/demo-en --model new-model --model old-model \\
          --base-url http://localhost:8000/v1 --out compare.json

      cat compare --results a.json b.json --out compare.json
    """
    if results is not None and models:
        raise fail("give --model twice or --results A.json B.json, not both")
    if results is None and len(models or []) != 2:
        raise fail(
            f"give --model twice (A, then B), or --results A.json B.json; got "
            f"{len(models or [])} --model"
        )
    # Two sim: models of one θ answer independently; any other model twice would give
    # the same answers (a live one's replies come from the store the second time).
    if models and models[0].strip() == models[1].strip() and not models[0].startswith("sim:"):
        raise fail(f"--model {models[0]} twice: a comparison needs two different models")
    if dry_run and results is not None:
        raise fail("--dry-run estimates a comparison's calls; --results asks nothing")
    check_writable({"--out": out, "--store": None if results else store_path})
    if results is not None:
        from cat.comparison.from_results import compare_results

        result = compare_results(
            results[0],
            results[1],
            pool=pool_dir,
            margin=margin,
            min_length=min_length,
            predictor=predictor,
        )
    else:
        if pool_dir is None:
            raise fail("give --pool, the pool both models are tested on")
        assert models is not None
        generation = generation_settings(
            temperature=temperature,
            max_tokens=max_tokens,
            system_prompt=system_prompt,
            prompt_template=prompt_template,
            few_shot=few_shot,
            stop=stop,
            extra_body=extra_body,
            extractor=extractor,
        )
        endpoint: dict[str, object] = {
            "api_key_env": api_key_env,
            "timeout": timeout,
            "max_attempts": max_attempts,
            "generation": generation,
            **({} if style is None else {"style": style.value}),
            **({} if protocol_form is None else {"protocol_form": protocol_form}),
        }
        from cat.assessment.examinees import refuse_unused_live_settings

        refuse_unused_live_settings(models, endpoint)
        if dry_run:
            specs = (models[0], models[1])
            _dry_run(pool_dir, specs, base_url, endpoint, max_length, seed, prices)
            return
        result = _adaptive(
            pool_dir,
            (models[0], models[1]),
            base_url,
            store_path,
            endpoint,
            margin=margin,
            max_length=max_length,
            min_length=min_length,
            batch_size=batch_size,
            predictor=predictor,
            content_balancing=not no_balance,
            seed=seed,
        )
    if out is not None:
        result.write_json(out)
    _print(result)
    for each in (result.a, result.b):
        warn_off_protocol(each.protocol, each.model)
    if out is not None:
        say(f"result written to {out}")


def _adaptive(
    pool_dir: Path,
    specs: tuple[str, str],
    base_url: str | None,
    store_path: Path,
    endpoint: dict[str, object],
    **options: object,
) -> CompareResult:
    from cat.comparison.compare import compare as run_compare
    from cat.pools.loading import load_pool

    pool = load_pool(pool_dir)
    live = [not spec.startswith(("sim:", "replay:")) for spec in specs]
    store: RunStore | None = None
    if any(live):
        from synth.store import RunStore

        store = RunStore(store_path)
    try:
        parsed = [_examinee(spec, base_url, store, endpoint) for spec in specs]
        max_length = options["max_length"]
        assert isinstance(max_length, int)
        with progress_bar("comparing", total=max_length) as update:

            def show(test: PairedTest) -> None:
                d = test.difference
                update(
                    completed=d.n,
                    description=f"{d.n} items · Δ {d.value:+.3f} ± {d.half_width:.3f}",
                )

            return run_compare(
                pool,
                parsed[0][0],
                parsed[1][0],
                name_a=specs[0],
                name_b=specs[1],
                base_url_a=parsed[0][1],
                base_url_b=parsed[1][1],
                on_step=show,
                **options,  # type: ignore[arg-type]
            )
    finally:
        if store is not None:
            store.close()


def _dry_run(
    pool_dir: Path,
    specs: tuple[str, str],
    base_url: str | None,
    endpoint: dict[str, object],
    max_length: int,
    seed: int,
    prices: Path | None,
) -> None:
    """Each model's calls, tokens and cost at most (both asked up to --max-length)."""
    from cat.pools.loading import load_pool

    pool = load_pool(pool_dir)
    examinees = [(spec, _examinee(spec, base_url, None, endpoint)[0]) for spec in specs]
    estimates, free = dry_run_estimates(pool, examinees, max_length, seed, read_prices(prices))
    print_estimates(f"at most {max_length} items each on {pool.manifest.name}", estimates, free)


def _examinee(
    spec: str, base_url: str | None, store: RunStore | None, endpoint: dict[str, object]
) -> tuple[Examinee, str | None]:
    """The examinee a --model names, and the endpoint it answers at (None offline)."""
    from cat.assessment.examinees import parse_model_spec

    if spec.startswith(("sim:", "replay:")):
        return parse_model_spec(spec), None
    found = _AT_URL.match(spec.strip())
    model, url = (found["model"], found["url"]) if found else (spec, base_url)
    return parse_model_spec(model, base_url=url, store=store, **endpoint), url


def _print(result: CompareResult) -> None:
    d = result.difference
    level = f"{d.level:.0%}"
    table = Table(
        title=f"{result.model_a} (A) vs {result.model_b} (B) on {result.pool.name}",
        show_header=False,
    )
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    verdict: str = result.decision
    if result.better is not None:
        verdict += f": {result.better}"
    table.add_row("decision", verdict)
    table.add_row("difference A − B", f"{d.value:+.3f}  ({level}: {d.low:+.3f} … {d.high:+.3f})")
    own = "θ" if d.predictor == "irt" else f"the {d.predictor}'s own spread"
    if d.stored_half_width is not None:
        scaled = ""
        if d.disagreement_a is not None and d.disagreement_b is not None:
            how = "widened: a model unlike them" if d.widened else "one width: neither unlike them"
            scaled = f"; {how}, disagreement A {d.disagreement_a:.3f}, B {d.disagreement_b:.3f}"
        table.add_row(
            "interval from",
            f"the references' cross-fitted errors of pairs (±{d.stored_half_width:.3f}; "
            f"{d.references} models{scaled}) and {own} (±{d.posterior_half_width:.3f})",
        )
    else:
        table.add_row(
            "interval from",
            f"θ only (±{d.posterior_half_width:.3f}): the pool stores no cross-fitted errors",
        )
    detect = result.detectable_difference
    table.add_row(
        "detectable",
        f"±{detect.value:.3f} (a true difference this large is found with "
        f"{detect.power:.0%} power)",
    )
    for name, side in (("A", result.a), ("B", result.b)):
        table.add_row(f"model {name}", _side(side))
    items = f"{result.n_items} both answered"
    if result.source == "results":
        items = f"A {result.a.n_items}, B {result.b.n_items} answered; {items}"
    if result.n_skipped:
        items += f" ({result.n_skipped} skipped)"
    if result.stop_reason:
        items += f"; stopped: {result.stop_reason}"
    table.add_row("items", items)
    shared = result.shared
    if shared.difference is not None and shared.low is not None and shared.high is not None:
        table.add_row(
            "on those items",
            f"{shared.difference:+.3f} ({level}: {shared.low:+.3f} … {shared.high:+.3f}), "
            "the plain paired difference (those items only)",
        )
    if d.paired_low is not None and d.paired_high is not None:
        table.add_row(
            "checked against",
            f"those items' own interval at {d.look_level:.2%} ({d.paired_low:+.3f} … "
            f"{d.paired_high:+.3f}): the difference's interval holds it, and a decision "
            "needs both to exclude 0",
        )
    if result.truth is not None:
        truth = result.truth
        table.add_row(
            "true difference", f"{truth.difference:+.3f} (A {truth.a:.3f}, B {truth.b:.3f})"
        )
    stdout.print(table)
    if d.stored_half_width is None:
        say(f"note: {d.method}")


def _side(side: ModelSide) -> str:
    acc = side.predicted_accuracy
    text = f"{acc.value:.3f} ({acc.level:.0%}: {acc.low:.3f} … {acc.high:.3f}), θ {side.theta:+.2f}"
    if side.result is not None:
        text += f", {side.n_items} items in {Path(side.result).name}"
    if side.usage is not None:
        text += f"; {side.usage.calls} calls, {side.usage.calls_from_store} from the store"
    return text
