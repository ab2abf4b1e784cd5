"""``cat assess``: rank one model against a calibrated pool after ~250 adaptive items."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import typer
from rich.table import Table

from cat.assess import build_result, current_rank, run_assessment
from cat.cli.common import (
    check_writable,
    fail,
    handle_errors,
    package_version,
    progress_bar,
    stdout,
)
from cat.cli.simulate import EstimatorName, PolicyName
from cat.errors import CatError
from cat.examinees import (
    EndpointExaminee,
    Examinee,
    ReplayExaminee,
    SimulatedExaminee,
    parse_model_spec,
)
from cat.pool_format import LoadedPool, load_pool
from cat.report import Reference
from cat.scenarios import scenarios_of
from cat.session import AssessmentSession, SessionConfig

if TYPE_CHECKING:
    from synth.store import RunStore


@handle_errors
def assess(
    pool_dir: Path = typer.Option(..., "--pool", help="Calibrated item pool folder."),
    model: str = typer.Option(
        ...,
        "--model",
        help="A model name at --base-url, sim:THETA (simulated), or replay:FILE#SUBJECT.",
    ),
    base_url: str | None = typer.Option(
        None, "--base-url", help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1."
    ),
    length: int = typer.Option(250, "--length", min=1, help="Maximum number of items."),
    out: Path | None = typer.Option(None, "--out", help="Write RESULT.json here."),
    report: Path | None = typer.Option(
        None, "--report", help="Write an HTML report with plots into this folder."
    ),
    batch_size: int = typer.Option(1, "--batch-size", min=1, help="Items asked at once."),
    se_target: float | None = typer.Option(
        None, "--se-target", min=0.0, help="Also stop once the SE of θ reaches this."
    ),
    min_length: int = typer.Option(0, "--min-length", min=0, help="Never stop before this."),
    policy: PolicyName = typer.Option(PolicyName.MFI, "--policy", help="Item selection."),
    estimator: EstimatorName = typer.Option(
        EstimatorName.MLE, "--estimator", help="Ability estimator."
    ),
    no_balance: bool = typer.Option(
        False, "--no-content-balancing", help="Do not keep the pool's mix of scenarios."
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
) -> None:
    """Give a model an adaptive test on a calibrated pool: each item the most
    informative at its current ability estimate. Prints θ with its interval, the
    predicted accuracy on the whole pool, the rank among the pool's reference models
    with P(above) for the neighbours, and per-scenario predictions.

    Examples:

      cat assess --pool item_pools/demo --model sim:0.5 --out result.json

      cat assess --pool item_pools/demo --model qwen2.5:7b --base-url http://localhost:11434/v1
                 --out result.json --report report/
    """
    check_writable(out, report)
    pool = load_pool(pool_dir)
    if pool.params is None:
        raise fail(f"pool {pool_dir} has no params.csv: calibrate it first (cat calibrate --pool)")
    params = pool.params
    kind, spec = parse_model_spec(model)
    config = SessionConfig.model_validate(
        {
            "policy": policy.value,
            "estimator": estimator.value,
            "max_items": length,
            "se_target": se_target,
            "min_items": min_length,
            "content_balancing": not no_balance,
            "seed": seed,
        }
    )
    codes = scenarios_of(pool.items, params.item_ids)
    scenario, scenario_names = codes.codes, list(codes.names)
    scenario_of = {item.id: item.scenario for item in pool.items}
    references = [Reference(r.subject_id, r.theta, r.se, r.accuracy) for r in pool.references]
    header: dict[str, Any] = {
        "model": model,
        "pool": {
            "name": pool.manifest.name,
            "version": pool.manifest.version,
            "n_items": params.n_items,
            "path": str(pool_dir),
        },
        "settings": {
            **config.model_dump(),
            "batch_size": batch_size,
            "base_url": base_url,
            "package_version": package_version(),
        },
        "seed": seed,
    }
    store = None
    examinee: Examinee
    if kind == "sim":
        examinee = SimulatedExaminee(float(spec), params, np.random.default_rng([seed, 1]))
    elif kind == "replay":
        path, subject = spec
        examinee = ReplayExaminee(path, subject, params.item_ids)
    else:
        store, examinee = _endpoint(
            str(spec), base_url, pool, store_path, api_key_env, timeout, max_attempts, seed
        )
    try:
        session, log = _start(store, model, pool, params, config, scenario, resume)
        log = _run(session, examinee, batch_size, log, scenario_of, references, store, model, pool)
    finally:
        if isinstance(examinee, EndpointExaminee):
            examinee.close()
    result = build_result(
        session, log, references, scenario_names, header, pool.manifest.prediction_errors
    )
    truth = examinee.truth()
    if truth is not None:
        result["truth"] = {"accuracy": truth}
    usage = examinee.usage()
    if usage is not None:
        result["usage"] = {**usage, "pool_items": params.n_items}
    if store is not None:
        store.close()
    if out is not None:
        out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if report is not None:
        from cat.report_html import write_report

        write_report(result, params, report)
    _print(result)
    if out is not None:
        stdout.print(f"result written to {out}")
    if report is not None:
        stdout.print(f"report written to {report / 'index.html'}")


def _endpoint(
    model: str,
    base_url: str | None,
    pool: LoadedPool,
    store_path: Path,
    api_key_env: str,
    timeout: float,
    max_attempts: int,
    seed: int,
) -> tuple[RunStore, EndpointExaminee]:
    from synth.backend import OpenAIBackend, RetryPolicy, api_key, check_reachable
    from synth.store import RunStore

    if base_url is None:
        raise fail(f"model {model!r} needs --base-url (or use sim:THETA / replay:FILE#SUBJECT)")
    api_key(base_url, api_key_env)
    check_reachable(base_url)
    check_writable(store_path)
    backend = OpenAIBackend(
        base_url, api_key_env, timeout, RetryPolicy(max_attempts=max_attempts), seed=seed
    )
    store = RunStore(store_path)
    items = {item.id: item for item in pool.items}
    examinee = EndpointExaminee(model, backend, store, items, pool.manifest.language, seed=seed)
    return store, examinee


def _session_key(model: str, pool: LoadedPool) -> str:
    return f"assess:{model}:{pool.manifest.name}:{pool.manifest.version}"


def _start(
    store: RunStore | None,
    model: str,
    pool: LoadedPool,
    params: Any,
    config: SessionConfig,
    scenario: tuple[int, ...],
    resume: bool,
) -> tuple[AssessmentSession, list[dict[str, Any]]]:
    saved = store.get_meta(_session_key(model, pool)) if store is not None else None
    if saved is not None and not saved.get("finished") and not resume:
        raise CatError(
            f"an unfinished assessment of {model} is in {store.path if store else ''}: add "
            "--resume to continue it (its answered items cost nothing again)"
        )
    if resume and saved is not None and not saved.get("finished"):
        if saved["config"] != config.model_dump():
            raise CatError("--resume needs the same settings as the interrupted run")
        session = AssessmentSession.from_json(saved["session"], params, scenario)
        stdout.print(f"resuming after {len(session.given)} items")
        return session, list(saved["items"])
    return AssessmentSession(params, config, scenario), []


def _run(
    session: AssessmentSession,
    examinee: Examinee,
    batch_size: int,
    log: list[dict[str, Any]],
    scenario_of: dict[str, str],
    references: list[Reference],
    store: RunStore | None,
    model: str,
    pool: LoadedPool,
) -> list[dict[str, Any]]:
    key = _session_key(model, pool)

    def checkpoint(s: AssessmentSession, items: list[dict[str, Any]]) -> None:
        if store is not None:
            store.set_meta(
                key,
                {
                    "session": s.to_json(),
                    "items": items,
                    "config": s.config.model_dump(),
                    "finished": s.done,
                },
            )

    with progress_bar("assessing", total=session.config.max_items) as update:

        def show(s: AssessmentSession, items: list[dict[str, Any]]) -> None:
            rank = current_rank(s.theta, references)
            where = f" · rank {rank}/{len(references) + 1}" if references else ""
            update(
                completed=len(s.given),
                description=f"{len(s.given)} items · θ {s.theta:+.2f} ± {s.se:.2f}{where}",
            )

        return run_assessment(session, examinee, batch_size, log, scenario_of, show, checkpoint)


def _print(result: dict[str, Any]) -> None:
    acc = result["predicted_accuracy"]
    ci = result["theta_interval"]
    table = Table(title=f"{result['model']} on {result['pool']['name']}", show_header=False)
    table.add_column(style="bold")
    table.add_column()
    table.add_row("θ", f"{result['theta']:+.3f}  (90%: {ci['low']:+.3f} … {ci['high']:+.3f})")
    table.add_row(
        "predicted accuracy",
        f"{acc['value']:.3f}  (90%: {acc['low']:.3f} … {acc['high']:.3f})",
    )
    widened = result.get("accuracy_interval", {}).get("half_width")
    if widened is not None:
        info = result["accuracy_interval"]
        table.add_row(
            "interval from",
            f"the references' cross-fitted errors (±{widened:.3f}; {info['references']} "
            f"models, {info['folds']} folds, {info['length']} items)",
        )
    if "truth" in result:
        table.add_row("true accuracy", f"{result['truth']['accuracy']:.3f}")
    rank = result.get("rank")
    if rank:
        table.add_row("rank", f"{rank['position']} of {rank['of']}")
        table.add_row("neighbours", _neighbours(rank, result["theta"]))
    fit = result.get("person_fit") or {}
    if fit.get("lz") is not None:
        note = "  flagged: the answers fit the model poorly" if fit["flagged"] else ""
        table.add_row("person fit (lz)", f"{fit['lz']:+.2f}{note}")
    items = f"{result['n_items']} of {result['pool']['n_items']:,}"
    if result.get("n_skipped"):
        items += f" ({result['n_skipped']} skipped)"
    table.add_row("items", f"{items}; stopped: {result['stop_reason']}")
    usage = result.get("usage")
    if usage:
        tokens = usage["prompt_tokens"] + usage["completion_tokens"]
        table.add_row(
            "calls",
            f"{usage['calls']} new, {usage['calls_from_store']} from the store; {tokens:,} tokens",
        )
    stdout.print(table)
    scenarios = result.get("scenarios")
    if scenarios:
        per = Table(title="Predicted accuracy per scenario")
        for col in ("scenario", "items given", "predicted", "90% interval"):
            per.add_column(col, justify="left" if col == "scenario" else "right")
        for name, s in scenarios.items():
            per.add_row(
                name, str(s["n_given"]), f"{s['value']:.3f}", f"{s['low']:.3f} … {s['high']:.3f}"
            )
        stdout.print(per)


def _neighbours(rank: dict[str, Any], theta: float) -> str:
    above = [r for r in rank["above"] if r["theta"] > theta][-1:]
    below = [r for r in rank["above"] if r["theta"] <= theta][:1]
    parts = [f"{r['subject_id']}: P(above) {r['p_above']:.2f}" for r in (*above, *below)]
    return "; ".join(parts) or "—"
