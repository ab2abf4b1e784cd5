"""``cat pool``: check, describe and import item pools (DESIGN.md, "Item pool")."""

from __future__ import annotations

import json
from collections import Counter
from enum import StrEnum
from pathlib import Path
from typing import Any

import numpy as np
import typer
from rich.table import Table

from cat.cli.common import check_writable, fail, handle_errors, progress_bar, say, stdout
from cat.pool_format import LoadedPool, check_pool, load_pool
from cat.pool_import import QUESTION_FIELDS, import_lm_eval, import_questions
from irt.fit import parameter_summary
from irt.models import ItemParams, test_information
from synth.items import ItemType

pool_app = typer.Typer(
    help="Item pools: check, describe, compare versions, test item fit, import questions "
    "or lm-eval logs.",
    no_args_is_help=True,
)
import_app = typer.Typer(
    help="Import a benchmark's questions as a pool, or lm-eval logs as responses.",
    no_args_is_help=True,
)
pool_app.add_typer(import_app, name="import")

#: θ where the test information curve is shown.
CURVE_THETA = tuple(float(t) for t in range(-3, 4))
# The maximum is searched more widely than the curve is shown: a hard pool peaks above 3.
_SEARCH_THETA = np.round(np.arange(-6.0, 6.0 + 1e-9, 0.05), 2)
_TOP_REFERENCES = 5
_MAP_HELP = (
    f"field=column, repeatable. Fields: {', '.join(QUESTION_FIELDS)}. "
    "Unmapped id, question, options, answer are read from columns of that name."
)


class Language(StrEnum):
    """The languages prompts exist for."""

    ZH = "zh"
    EN = "en"


@pool_app.command("validate", no_args_is_help=True)
@handle_errors
def validate_pool(
    pool_dir: Path = typer.Argument(..., help="Pool folder (pool.json, items.jsonl, ...)."),
) -> None:
    """List every problem of a pool, one `file:line: message` a line; exit code 2 if any.

    Example:

      cat pool validate item_pools/climedbench
    """
    problems = check_pool(pool_dir)
    for problem in problems:
        say(str(problem))
    errors = sum(not p.warning for p in problems)
    warnings = len(problems) - errors
    noted = f" ({warnings} warning{'s' * (warnings != 1)})" if warnings else ""
    if errors:
        say(f"pool {pool_dir}: {errors} problem{'s' * (errors != 1)}{noted}")
        raise typer.Exit(2)
    pool = load_pool(pool_dir)
    say(f"pool {pool_dir}: {len(pool.items)} items, no problems{noted}")


@pool_app.command("info", no_args_is_help=True)
@handle_errors
def pool_info(
    pool_dir: Path = typer.Argument(..., help="Pool folder."),
    json_out: Path | None = typer.Option(None, "--json", help="Also write the figures here."),
) -> None:
    """Describe a pool: items, parameters, test information, reference subjects.

    Items are counted per scenario and type; a, b and c are summarised when the pool is
    calibrated, with the test information at θ = -3 ... 3 and where it peaks.

    Example:

      cat pool info item_pools/climedbench --json info.json
    """
    check_writable(json_out)
    pool = load_pool(pool_dir)
    figures = pool_figures(pool)
    _print_info(figures)
    if json_out is not None:
        json_out.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n", "utf-8")
        say(f"figures written to {json_out}")


def pool_figures(pool: LoadedPool) -> dict[str, Any]:
    """What ``cat pool info`` shows, as JSON-ready data."""
    counts = Counter((item.scenario, item.type.value) for item in pool.items)
    order = list(pool.manifest.scenarios) + sorted({s for s, _ in counts})
    by_scenario: dict[str, dict[str, int]] = {}
    for scenario in dict.fromkeys(order):
        row = {t.value: counts[scenario, t.value] for t in ItemType}
        if any(row.values()):
            by_scenario[scenario] = {**row, "total": sum(row.values())}
    kinds = Counter(item.type.value for item in pool.items)
    by_type = {t.value: kinds[t.value] for t in ItemType}
    return {
        "pool": {
            "dir": str(pool.dir),
            "name": pool.manifest.name,
            "version": pool.manifest.version,
            "language": pool.manifest.language,
            "model": None if pool.params is None else pool.params.model.value,
            "n_items": len(pool.items),
        },
        "items": {"by_scenario": by_scenario, "by_type": by_type},
        "parameters": None if pool.params is None else _parameters(pool.params),
        "information": None if pool.params is None else _information(pool.params),
        "reference": _reference(pool) if pool.references else None,
    }


def _parameters(params: ItemParams) -> dict[str, dict[str, float]]:
    summary = parameter_summary(params)
    return {name: summary[name] for name in ("a", "b", "c")}


def _information(params: ItemParams) -> dict[str, Any]:
    # In slices of θ: the (θ x items) array of a 30,000-item pool would not fit at once.
    chunks = [_SEARCH_THETA[k : k + 32] for k in range(0, _SEARCH_THETA.size, 32)]
    values = np.concatenate([test_information(theta, params) for theta in chunks])
    at = {float(t): float(v) for t, v in zip(_SEARCH_THETA, values, strict=True)}
    peak = int(np.argmax(values))
    return {
        "theta": list(CURVE_THETA),
        "values": [at[t] for t in CURVE_THETA],
        "max_theta": float(_SEARCH_THETA[peak]),
        "max_value": float(values[peak]),
    }


def _reference(pool: LoadedPool) -> dict[str, Any]:
    rows = sorted(pool.references, key=lambda r: r.theta, reverse=True)
    return {
        "count": len(rows),
        "theta_min": rows[-1].theta,
        "theta_max": rows[0].theta,
        "top": [
            {"subject_id": r.subject_id, "theta": r.theta, "se": r.se, "accuracy": r.accuracy}
            for r in rows[:_TOP_REFERENCES]
        ],
    }


def _print_info(figures: dict[str, Any]) -> None:
    pool = figures["pool"]
    version = f" v{pool['version']}" if pool["version"] else ""
    model = f", {pool['model'].upper()}" if pool["model"] else ", not calibrated"
    say(f"{pool['name']}{version} ({pool['language']}): {pool['n_items']} items{model}")
    types = [t.value for t in ItemType]
    table = Table(title="Items per scenario and type")
    table.add_column("scenario")
    for name in [*types, "total"]:
        table.add_column(name, justify="right")
    for scenario, row in figures["items"]["by_scenario"].items():
        table.add_row(scenario or "(none)", *(str(row[t]) for t in [*types, "total"]))
    by_type = figures["items"]["by_type"]
    table.add_row("all", *(str(by_type[t]) for t in types), str(pool["n_items"]), style="bold")
    stdout.print(table)
    if figures["parameters"] is not None:
        table = Table(title="Item parameters")
        for col in ("", "mean", "sd", "min", "max"):
            table.add_column(col, justify="right" if col else "left")
        for name, s in figures["parameters"].items():
            table.add_row(name, *(f"{s[k]:.3f}" for k in ("mean", "sd", "min", "max")))
        stdout.print(table)
    info = figures["information"]
    if info is not None:
        table = Table(title="Test information")
        table.add_column("θ", justify="left")
        for theta in info["theta"]:
            table.add_column(f"{theta:+g}", justify="right")
        table.add_row("I(θ)", *(f"{v:.2f}" for v in info["values"]))
        stdout.print(table)
        say(f"maximum information {info['max_value']:.2f} at θ = {info['max_theta']:+.2f}")
    ref = figures["reference"]
    if ref is not None:
        table = Table(
            title=f"Reference subjects: {ref['count']}, θ from {ref['theta_min']:+.2f} "
            f"to {ref['theta_max']:+.2f}; the top {len(ref['top'])}"
        )
        for col in ("subject", "θ", "se", "accuracy"):
            table.add_column(col, justify="left" if col == "subject" else "right")
        for r in ref["top"]:
            accuracy = "-" if r["accuracy"] is None else f"{r['accuracy']:.3f}"
            table.add_row(r["subject_id"], f"{r['theta']:+.2f}", f"{r['se']:.2f}", accuracy)
        stdout.print(table)


def _mapping(entries: list[str]) -> dict[str, str]:
    # Our own field names by default, so a file already in pool form needs no --map.
    mapping = {"id": "id", "question": "question", "options": "options", "answer": "answer"}
    for entry in entries:
        field, sep, column = entry.partition("=")
        if not sep or not field.strip() or not column.strip():
            raise fail(f"--map takes field=column, got {entry!r}")
        mapping[field.strip()] = column.strip()
    if "answer_index" in mapping and not any(e.startswith("answer=") for e in entries):
        del mapping["answer"]
    return mapping


@import_app.command("questions", no_args_is_help=True)
@handle_errors
def import_questions_cmd(
    file: Path = typer.Argument(..., help="Questions: .csv or .jsonl, optionally .gz."),
    out: Path = typer.Option(..., "--out", help="New pool folder to create."),
    language: Language = typer.Option(..., "--language", help="Language of the questions."),
    name: str | None = typer.Option(None, "--name", help="Pool name (default: the folder's)."),
    maps: list[str] = typer.Option(
        [],
        "--map",
        help=_MAP_HELP,
    ),
) -> None:
    r"""Make a pool (items.jsonl, pool.json) from a benchmark's questions.

    Options are one column holding a JSON list (lettered A, B, C, ...) or object, or
    several columns (--map options=opa,opb,opc,opd). The key is letters (--map
    answer=COL) or a 0-based position (--map answer_index=COL).

    Example:

      cat pool import questions items.csv.gz --out pools/mmlu-pro --language en \
          --map id=question_id --map scenario=category
    """
    check_writable(out)
    count = import_questions(file, _mapping(maps), out, name or out.name, language.value)
    say(f"imported {count} questions from {file} into {out}; next: cat pool validate {out}")


@import_app.command("lm-eval", no_args_is_help=True)
@handle_errors
def import_lm_eval_cmd(
    files: list[Path] = typer.Argument(
        ..., help="lm-eval samples_<task>_<date>.jsonl files, or folders holding them."
    ),
    out: Path = typer.Option(..., "--out", help="Response matrix to write (.jsonl or .csv)."),
    metric: str = typer.Option("acc", "--metric", help="The 0/1 score to read, e.g. exact_match."),
    subject: str | None = typer.Option(
        None, "--subject", help="Subject name (default: each file's folder, lm-eval's model)."
    ),
    filter_name: str | None = typer.Option(
        None, "--filter", help="Keep samples of this lm-eval filter (tasks with several)."
    ),
) -> None:
    """Make a response matrix from lm-evaluation-harness --log_samples output.

    Items are named <task>/<doc_id>; each model folder is one subject.

    Example:

      cat pool import lm-eval results/*/samples_*.jsonl --out responses.jsonl --metric acc
    """
    check_writable(out)
    total = None if any(f.is_dir() for f in files) else len(files)
    with progress_bar("reading samples", total=total) as update:
        matrix = import_lm_eval(
            files,
            out,
            metric,
            subject,
            filter_name=filter_name,
            progress=lambda done: update(completed=done),
        )
    table = Table(title=f"{matrix.n_subjects} subjects x {matrix.n_items} items ({metric})")
    for col in ("subject", "answered", "accuracy"):
        table.add_column(col, justify="left" if col == "subject" else "right")
    answered = matrix.observed.sum(axis=1)
    for sid, n, acc in zip(matrix.subject_ids, answered, matrix.accuracy(), strict=True):
        table.add_row(sid, str(int(n)), f"{acc:.3f}")
    stdout.print(table)
    say(f"responses written to {out}")


@pool_app.command("diff", no_args_is_help=True)
@handle_errors
def pool_diff(
    old_dir: Path = typer.Argument(..., help="The earlier pool version."),
    new_dir: Path = typer.Argument(..., help="The later pool version."),
    json_out: Path | None = typer.Option(None, "--json", help="Also write the figures as JSON."),
) -> None:
    """Compare two versions of a pool: items whose difficulty moved beyond their
    standard errors (|z| > 1.96), items added or dropped, and how the reference
    subjects' θ changed.

    Example:

      cat pool diff item_pools/demo demo-v2
    """
    from cat.pool_diff import diff_pools

    check_writable(json_out)
    figures = diff_pools(load_pool(old_dir), load_pool(new_dir))
    if json_out is not None:
        json_out.write_text(json.dumps(figures, indent=1, ensure_ascii=False) + "\n")
    items, refs = figures["items"], figures["references"]
    old, new = figures["old"], figures["new"]

    def label(side: dict[str, Any]) -> str:
        version = f" v{side['version']}" if side["version"] else " (no version)"
        return f"{side['name']}{version} ({side['n_items']} items)"

    say(f"{label(old)} → {label(new)}")
    shift = items["mean_b_shift"]
    say(
        f"items: {items['shared']} in both, {len(items['added'])} added, "
        f"{len(items['dropped'])} dropped; {len(items['moved'])} moved beyond their SEs"
        + (f"; mean b shift {shift:+.3f}" if shift is not None else "")
    )
    if items["moved"]:
        table = Table(title="Items that moved (largest |z| first)")
        for col in ("item", "b old", "b new", "z", "a old", "a new"):
            table.add_column(col, justify="left" if col == "item" else "right")
        for c in items["moved"][:20]:
            table.add_row(
                c["item_id"],
                f"{c['b_old']:+.3f}",
                f"{c['b_new']:+.3f}",
                f"{c['z_b']:+.2f}",
                f"{c['a_old']:.3f}",
                f"{c['a_new']:.3f}",
            )
        stdout.print(table)
    if refs["shared"]:
        say(
            f"reference subjects: {refs['shared']} in both, {len(refs['added'])} added; "
            f"θ changed by {refs['mean_theta_change']:+.3f} on average, "
            f"at most {refs['max_abs_theta_change']:.3f}"
        )
