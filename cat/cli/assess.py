"""``cat assess``: rank one model against a calibrated pool after ~250 adaptive items."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table

from cat.cli.assess_many import assess_models, model_specs
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
    MAX_COST,
    PRICES,
    dry_run_estimates,
    print_estimates,
    read_prices,
)
from cat.cli.generation_options import (
    CONCURRENCY,
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
from cat.engine.names import (
    AUDIT_EVERY,
    DEFAULT_CRITERION,
    DEFAULT_ESTIMATOR,
    DEFAULT_POLICY,
    CriterionName,
    DesignChoice,
    DesignName,
    EstimatorName,
    PolicyName,
)
from synth.names import Style

if TYPE_CHECKING:
    from cat.assessment.result import AssessmentResult, ItemRecord, Rank
    from cat.assessment.session import AssessmentSession
    from itempool import LoadedPool
    from synth.generation import GenerationRecord

_PROMPT_TEMPLATE = prompt_template_option(
    "The examples of --few-shot are rendered with it too. Live models only."
)
_FEW_SHOT = few_shot_option(
    "The test never asks an item shown as an example (RESULT.json lists them in "
    "settings.excluded_items). Live models only."
)


@handle_errors
def assess(
    ctx: typer.Context,
    pool_dir: Path = typer.Option(
        ..., "--pool", help="Calibrated item pool: a folder, or a shipped pool's name (mmlu-pro)."
    ),
    model: list[str] = typer.Option(
        [],
        "--model",
        help="A model name at --base-url, sim:THETA (simulated), or replay:FILE#SUBJECT. "
        "Repeat it to assess several models at once, sharing --store and --concurrency: "
        "--out and --report are then folders, with one MODEL.json and one MODEL/ each.",
    ),
    models_file: Path | None = typer.Option(
        None,
        "--models",
        help="A file of models, one a line as --model takes them (a line starting with # "
        "is a comment), assessed with any --model given.",
    ),
    base_url: str | None = typer.Option(
        None, "--base-url", help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1."
    ),
    length: int = typer.Option(250, "--length", min=1, help="Maximum number of items."),
    out: Path | None = typer.Option(
        None, "--out", help="Write RESULT.json here (several models: a folder of MODEL.json)."
    ),
    report: Path | None = typer.Option(
        None,
        "--report",
        help="Write an HTML report with plots into this folder (several models: one "
        "MODEL/ in it each).",
    ),
    batch_size: int = typer.Option(1, "--batch-size", min=1, help="Items asked at once."),
    se_target: float | None = typer.Option(
        None, "--se-target", min=0.0, help="Also stop once the SE of θ reaches this."
    ),
    min_length: int = typer.Option(0, "--min-length", min=0, help="Never stop before this."),
    design: DesignChoice = typer.Option(
        DesignChoice.AUTO,
        "--design",
        help="auto: the design whose cross-fitted errors on the pool's references were "
        "smallest (cat calibrate --pool --cross-fit stores them; otherwise irt); irt: "
        "items by --policy at θ̂ and the IRT prediction; mixture, low-rank: items and "
        "prediction from the references' own answers; bifactor (a pool calibrated with "
        "--model bifactor): items and prediction from the bifactor model; mirt (a pool "
        "calibrated with --model mirt): from its correlated factor per scenario.",
    ),
    criterion: CriterionName | None = typer.Option(
        None,
        "--criterion",
        help="How the bifactor and mirt designs pick items: d-optimal (default) or "
        "a-optimal (θ as a whole), kl (posterior-weighted Kullback-Leibler), total (narrow "
        "the predicted accuracy), profile (the per-scenario accuracies), general (the "
        "general factor). Default: the one the pool was cross-fitted with (cat calibrate "
        "--criterion), else d-optimal.",
    ),
    policy: PolicyName = typer.Option(
        DEFAULT_POLICY, "--policy", help="Item selection of the irt design."
    ),
    estimator: EstimatorName = typer.Option(
        DEFAULT_ESTIMATOR, "--estimator", help="Ability estimator."
    ),
    no_balance: bool = typer.Option(
        False, "--no-content-balancing", help="Do not keep the pool's mix of scenarios."
    ),
    audit_every: int = typer.Option(
        AUDIT_EVERY,
        "--audit-every",
        min=0,
        help="After the 30th item, one item in N is an audit item, easy or hard for the "
        "model as estimated (one in N/2 up to the 60th), so that answers which ignore "
        "difficulty are caught and the prediction falls back on the answers themselves. "
        "0: none.",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of selection and simulation; recorded."),
    store_path: Path = typer.Option(
        Path("cat-assess.db"), "--store", help="Run store of a live model's calls (SQLite)."
    ),
    resume: bool = typer.Option(
        False, "--resume", help="Continue this model's unfinished assessment in --store."
    ),
    api_key_env: str = typer.Option(
        "OPENAI_API_KEY", "--api-key-env", help="Environment variable holding the API key."
    ),
    timeout: float = typer.Option(60.0, "--timeout", min=0.1, help="Seconds per request."),
    max_attempts: int = typer.Option(6, "--max-attempts", min=1, help="Tries per call."),
    judge_model: str | None = typer.Option(
        None,
        "--judge-model",
        help="Grade open items by this LLM judge (MODEL on --base-url, or MODEL@URL), as "
        "cat synth --open-grading judge graded the scores the pool was calibrated on; "
        "default: the reference metric, as cat synth grades by default.",
    ),
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
    concurrency: int = CONCURRENCY,
    dry_run: bool = DRY_RUN,
    prices: Path | None = PRICES,
    max_cost: float | None = MAX_COST,
) -> None:
    """Give a model an adaptive test on a calibrated pool: each item the most
    informative at its current ability estimate (the irt design), or the item that most
    narrows the predicted score under the pool's references (the mixture and low-rank
    designs; --design auto runs the pool's best by its references' cross-fitted
    errors). Prints θ with its interval, the
    predicted accuracy on the whole pool, the rank among the pool's reference models
    with P(above) for the neighbours, and per-scenario predictions.

    A live model is asked and graded as the pool's protocol says (pool.json: the prompt,
    worked examples, sampling settings, answer extractor; cat pool info shows it), each
    of --temperature, --max-tokens, --system-prompt, --prompt-template, --few-shot,
    --stop, --extra-body, --extractor and --style overriding its field, and
    --protocol-form asking in another of its forms (on mmlu-pro, raw: the official raw
    prompt for a base model behind a completions endpoint); RESULT.json records them
    under settings.generation, and under settings.protocol the fields the run departed
    from the protocol in (a warning says so too). A changed setting never reuses a
    stored reply.

    Examples:

      cat assess --pool item_pools/demo --model sim:0.5 --out result.json

      cat assess --pool item_pools/demo --model qwen2.5:7b \\
          --base-url http://localhost:11434/v1 \\
          --out result.json --report report/

      cat assess --pool item_pools/demo --model qwen2.5:7b --model llama3.1:8b \\
          --base-url http://localhost:11434/v1 --concurrency 16 \\
          --temperature 0.7 --few-shot 3 --out results/
    """
    from cat.assessment.assess import assess as run_assess
    from cat.assessment.examinees import parse_model_spec, refuse_unused_live_settings
    from cat.assessment.summary import current_rank
    from cat.pools.loading import load_pool

    specs = model_specs(model, models_file)
    several = len(specs) > 1
    _note_idle_connections(ctx, specs, concurrency, batch_size)
    if several:
        if out is not None and out.suffix.lower() == ".json" and not out.is_dir():
            raise fail(
                f"--out {out}: {len(specs)} models write one MODEL.json each into a folder; "
                f"give a folder (--out {out.with_suffix('')}/)"
            )
        check_writable({"--store": store_path}, folders={"--out": out, "--report": report})
    else:
        check_writable({"--out": out, "--store": store_path}, folders={"--report": report})
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
    pool = load_pool(pool_dir)
    endpoint: dict[str, Any] = {
        "base_url": base_url,
        "store": store_path,
        "api_key_env": api_key_env,
        "timeout": timeout,
        "max_attempts": max_attempts,
        "generation": generation,
        "concurrency": concurrency,
        **({} if style is None else {"style": style.value}),
        **({} if protocol_form is None else {"protocol_form": protocol_form}),
        **({} if judge_model is None else {"judge_model": judge_model}),
    }
    refuse_unused_live_settings(specs, endpoint)
    if criterion is not None:
        _note_criterion(pool, criterion)
    options: dict[str, Any] = {
        "length": length,
        "design": design.value,
        "criterion": None if criterion is None else criterion.value,
        "policy": policy.value,
        "estimator": estimator.value,
        "se_target": se_target,
        "min_length": min_length,
        "content_balancing": not no_balance,
        "audit_every": audit_every,
        "batch_size": batch_size,
        "seed": seed,
        "base_url": base_url,
    }
    if max_cost is not None and not max_cost > 0:
        raise fail(f"--max-cost must be above 0, got {max_cost:g}")
    if max_cost is not None and prices is None:
        raise fail("--max-cost needs --prices FILE, the prices that turn tokens into money")
    priced = read_prices(prices)
    if dry_run:
        examinees = [(spec, parse_model_spec(spec, **endpoint)) for spec in specs]
        estimates, free = dry_run_estimates(pool, examinees, length, seed, priced)
        title = f"at most {length} items on {pool.manifest.name}"
        print_estimates(title, estimates, free, max_cost)
        return
    options["prices"], options["max_cost"] = priced, max_cost
    if several:
        assess_models(pool, specs, endpoint, options, out, report, resume, concurrency)
        return
    examinee = parse_model_spec(specs[0], **endpoint)
    thetas = [r.theta for r in pool.references]
    with progress_bar("assessing", total=length) as update:
        resumed = [False]

        def show(session: AssessmentSession, items: list[ItemRecord]) -> None:
            if resume and not resumed[0]:
                resumed[0] = True
                say(f"resuming after {len(session.given)} items")
            rank = current_rank(session.theta, thetas)
            where = f" · rank {rank}/{len(thetas) + 1}" if thetas else ""
            update(
                completed=len(session.given),
                description=f"{len(session.given)} items · θ {session.theta:+.2f} ± "
                f"{session.se:.2f}{where}",
            )

        result = run_assess(
            pool, examinee, resume=resume, model_name=specs[0], on_step=show, **options
        )
    if out is not None:
        result.write_json(out)
    if report is not None:
        from cat.reports.html import write_report

        assert pool.params is not None  # assess refuses an uncalibrated pool
        write_report(result, pool.params, report)
    _print(result)
    if out is not None:
        say(f"result written to {out}")
    if report is not None:
        say(f"report written to {report / 'index.html'}")


def _print(result: AssessmentResult) -> None:
    acc, ci = result.predicted_accuracy, result.theta_interval
    table = Table(title=f"{result.model} on {result.pool.name}", show_header=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    table.add_row("θ", f"{result.theta:+.3f}  (90%: {ci.low:+.3f} … {ci.high:+.3f})")
    # On scored items the "accuracy" is the mean share of each item's top score.
    what = "score" if result.pool.scored else "accuracy"
    table.add_row(f"predicted {what}", f"{acc.value:.3f}  (90%: {acc.low:.3f} … {acc.high:.3f})")
    info = result.accuracy_interval
    if result.settings.design in (DesignName.BIFACTOR, DesignName.MIRT):
        table.add_row(
            "design",
            f"{result.settings.design.value}: items and prediction from the pool's "
            "multidimensional model",
        )
    elif result.settings.design is not DesignName.IRT:
        table.add_row(
            "design",
            f"{result.settings.design.value}: items and prediction from the references' answers",
        )
    unlike = result.unlike_references
    if info.half_width is not None:
        scaled = ", scaled by the disagreement below" if unlike is not None else ""
        table.add_row(
            "interval from",
            f"the references' cross-fitted errors (±{info.half_width:.3f}; {info.references} "
            f"models, {info.folds} folds, {info.length} items{scaled})",
        )
    if unlike is not None:
        verdict = (
            f"flagged: unlike the references (theirs: at most {unlike.threshold:.3f} for 9 in 10)"
            if unlike.flagged
            else "as the references'"
        )
        table.add_row(
            "disagreement",
            f"{unlike.disagreement:.3f} from the {unlike.companion} prediction "
            f"({unlike.companion_accuracy:.3f}); {verdict}",
        )
    if result.truth is not None:
        table.add_row(f"true {what}", f"{result.truth.accuracy:.3f}")
    if result.rank is not None:
        table.add_row("rank", f"{result.rank.position} of {result.rank.of}")
        table.add_row("neighbours", _neighbours(result.rank, result.theta))
    check = result.difficulty_check
    if check is not None:
        verdict = f"flagged: {check.reason}" if check.flagged else "as the references'"
        table.add_row("difficulty", f"gain {check.gain:.3f} per item; {verdict}")
    slope = result.slope_check
    if slope is not None:
        verdict = "flagged: the answers do not follow difficulty" if slope.flagged else "fits"
        table.add_row(
            "slope check", f"z {slope.z:+.2f} (flagged below {slope.threshold:+.2f}); {verdict}"
        )
    fallback = result.fallback
    if fallback is not None:
        was = fallback.replaced
        table.add_row(
            "fallback",
            f"the answers' own accuracy (slope {fallback.slope:+.2f} on the items' difficulty) "
            f"in place of {was.value:.3f} (90%: {was.low:.3f} … {was.high:.3f})",
        )
    fit = result.person_fit
    if fit.lz is not None:
        model = "IRT model" if result.settings.design is not DesignName.IRT else "model"
        note = f"  flagged: the answers fit the {model} poorly" if fit.flagged else ""
        table.add_row("person fit (lz)", f"{fit.lz:+.2f}{note}")
    items = f"{result.n_items} of {result.pool.n_items:,}"
    if result.n_skipped:
        items += f" ({result.n_skipped} skipped)"
    table.add_row("items", f"{items}; stopped: {result.stop_reason}")
    usage = result.usage
    if usage is not None:
        tokens = usage.prompt_tokens + usage.completion_tokens
        calls = f"{usage.calls} new, {usage.calls_from_store} from the store; {tokens:,} tokens"
        if usage.reasoning_tokens:
            calls += f" ({usage.reasoning_tokens:,} reasoning)"
        if usage.truncated:
            calls += f"; {usage.truncated} cut off at the token limit"
        table.add_row("calls", calls)
    protocol = result.settings.protocol
    if protocol is not None:
        table.add_row("protocol", protocol.label())
    asked = _generation_text(result.settings.generation)
    if asked:
        table.add_row("asked with", asked)
    stdout.print(table)
    warn_off_protocol(protocol, result.model)
    profile = result.profile
    if profile is not None:
        ranks = []
        if profile.general_rank is not None:
            ranks.append(
                f"general factor {profile.general_rank.position} of {profile.general_rank.of}"
            )
        if profile.total_rank is not None:
            ranks.append(
                f"predicted total {profile.total_rank.position} of {profile.total_rank.of}"
            )
        general = profile.factors[0]
        text = (
            f"general {general.score:+.2f} (sd {general.sd:.2f})"
            if profile.model == "bifactor"
            else f"{len(profile.factors)} factors (scores below, 0 = the references' mean)"
        )
        say(
            f"{profile.model} profile: {text}"
            + (f"; rank on the {', on the '.join(ranks)}" if ranks else "")
        )
    if result.scenarios:
        scores = {} if profile is None else {f.factor: f for f in profile.factors}
        per = Table(title=f"Predicted {what} per scenario")
        columns = ["scenario", "items given", "predicted", "90% interval"]
        if scores:
            columns.append("factor score")
        for col in columns:
            per.add_column(col, justify="left" if col == "scenario" else "right", no_wrap=True)
        for name, s in result.scenarios.items():
            row = [name, str(s.n_given), f"{s.value:.3f}", f"{s.low:.3f} … {s.high:.3f}"]
            if scores:
                factor = scores.get(name)
                row.append("—" if factor is None else f"{factor.score:+.2f} ± {factor.sd:.2f}")
            per.add_row(*row)
        stdout.print(per)
        if result.scenario_interval is not None:
            say(f"per-scenario intervals: {result.scenario_interval}")


def _generation_text(record: GenerationRecord | None) -> str:
    """The generation settings that are not the defaults, in one line ("" if none)."""
    if record is None:
        return ""
    parts = [] if record.temperature == 0.0 else [f"temperature {record.temperature:g}"]
    if record.max_tokens is not None:
        parts.append(f"max tokens {record.max_tokens}")
    if record.system_prompt is not None:
        parts.append("own system prompt" if record.system_prompt else "no system prompt")
    if record.prompt_template is not None:
        parts.append(f"template {record.prompt_template}")
    if record.few_shot:
        parts.append(f"{record.few_shot}-shot")
    if record.stop:
        parts.append(f"{len(record.stop)} stop sequence{'s' if len(record.stop) > 1 else ''}")
    if record.extra_body:
        parts.append(f"extra body {', '.join(record.extra_body)}")
    if record.endpoint == "completions":
        parts.append("raw prompt to /v1/completions")
    return "; ".join(parts)


def _neighbours(rank: Rank, theta: float) -> str:
    above = [r for r in rank.above if r.theta > theta][-1:]
    below = [r for r in rank.above if r.theta <= theta][:1]
    parts = [f"{r.subject_id}: P(above) {r.p_above:.2f}" for r in (*above, *below)]
    return "; ".join(parts) or "—"


def _note_criterion(pool: LoadedPool, criterion: CriterionName) -> None:
    """Say so when the pool's cross-fitted errors, which the interval is widened by,
    were measured under another criterion than the one asked for."""
    from cat.designs.models import multidimensional_design

    entry = pool.manifest.multidimensional
    if entry is None or pool.mirt is None:
        return
    kind = multidimensional_design(pool.mirt)
    stored = entry.criterion or DEFAULT_CRITERION.value
    if kind in (pool.manifest.design_errors or {}) and stored != criterion.value:
        say(
            f"note: the pool's {kind} errors were cross-fitted under --criterion {stored}; "
            f"the interval keeps their width (cat calibrate --criterion {criterion.value} "
            "--pool measures this one's)"
        )


def _note_idle_connections(
    ctx: typer.Context, specs: list[str], concurrency: int, batch_size: int
) -> None:
    """Say so when a --concurrency given on the command line cannot be used: a test asks
    one batch of items at a time, so live models keep at most models x --batch-size
    calls in flight."""
    live = sum(not spec.startswith(("sim:", "replay:")) for spec in specs)
    in_flight = live * batch_size
    if not live or concurrency <= in_flight:
        return
    source = ctx.get_parameter_source("concurrency")
    if source is None or source.name != "COMMANDLINE":  # the default: nothing asked for
        return
    wider = -(-concurrency // live)  # the batch that would fill the connections
    models = f"{live} model{'s' * (live > 1)}"
    say(
        f"note: --concurrency {concurrency}: {models} asking {batch_size} item"
        f"{'s' * (batch_size > 1)} at a time keep at most {in_flight} calls in flight; "
        f"--batch-size {wider} would use them (each test a little less adaptive)"
    )
