"""``cat pool``: check, describe and import item pools (DESIGN.md, "Item pool")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from cat.cli.common import (
    check_writable,
    counted,
    fail,
    handle_errors,
    progress_bar,
    say,
    stdout,
)
from cat.pools.names import LANGUAGE_HELP, QUESTION_FIELDS, language_code

if TYPE_CHECKING:
    from cat.pools.diff import PoolDiff, PoolSide
    from cat.pools.importer import ImportedQuestions
    from cat.pools.summary import PoolSummary
    from itempool import PoolProtocol

pool_app = typer.Typer(
    help="Item pools: create one from a benchmark's file, list, check, describe, compare versions, "
    "test item fit, import questions "
    "or lm-eval logs.",
    no_args_is_help=True,
)
import_app = typer.Typer(
    help="Import a benchmark's questions as a pool, or lm-eval logs as responses.",
    no_args_is_help=True,
)
pool_app.add_typer(import_app, name="import")

_MAP_HELP = (
    f"field=column, repeatable. Fields: {', '.join(QUESTION_FIELDS)}. "
    "Unmapped fields are read from the columns the common benchmark shapes hold them in."
)


@pool_app.command("list")
@handle_errors
def list_pools_cmd(
    json_out: Path | None = typer.Option(None, "--json", help="Also write the list here."),
) -> None:
    """List the pools found by name, with their size, model, references and protocol.

    A pool's name (--pool NAME) is looked up in the folders of $CAT_POOL_PATH
    (separated by the system's path separator), then in the repository's item_pools/.
    Each pool is listed with its items, calibrated model, reference models and the
    protocol they were asked by, read without loading its items.

    Example:

      cat pool list --json pools.json
    """
    check_writable({"--json": json_out})
    from cat.pools.listing import list_pools

    pools = list_pools()
    if not pools:
        say("no pools found by name: put pool folders in a folder listed in $CAT_POOL_PATH")
        return
    columns = ["name", "items", "model", "references", "protocol", "language"]
    table = _table("Pools found by name", columns)
    for pool in pools:
        if pool.problem is not None:
            table.add_row(pool.name, f"unreadable: {pool.problem}", "", "", "", "")
            continue
        table.add_row(
            pool.name,
            "" if pool.n_items is None else f"{pool.n_items:,}",
            pool.model or "none",
            "" if pool.n_references is None else f"{pool.n_references:,}",
            pool.protocol or "built-in",
            pool.language or "",
        )
    stdout.print(table)
    from itempool.shipped import SHIPPED_POOLS, pool_search_path

    searched = [
        "the repository's item_pools/" if folder == SHIPPED_POOLS else _shown(folder)
        for folder in pool_search_path()
    ]
    say("searched, in order: " + ", ".join(searched))
    if json_out is not None:
        rows = [pool.model_dump(mode="json") for pool in pools]
        json_out.write_text(json.dumps(rows, indent=2, ensure_ascii=False) + "\n", "utf-8")
        say(f"list written to {json_out}")


@pool_app.command("validate", no_args_is_help=True)
@handle_errors
def validate_pool_cmd(
    pool_dir: Path = typer.Argument(
        ..., help="Pool folder (pool.json, items.jsonl, ...), or a shipped pool's name."
    ),
) -> None:
    """List every problem of a pool, one `file:line: message` a line; exit code 2 if any.

    Example:

      cat pool validate item_pools/demo
    """
    from cat.pools.check import validate_pool

    check = validate_pool(pool_dir)
    for problem in check.problems:
        say(str(problem))
    noted = f" ({counted(check.warnings, 'warning')})" if check.warnings else ""
    if not check.ok:
        say(f"pool {pool_dir}: {counted(check.errors, 'problem')}{noted}")
        raise typer.Exit(2)
    say(f"pool {pool_dir}: {counted(check.n_items or 0, 'item')}, no problems{noted}")


@pool_app.command("info", no_args_is_help=True)
@handle_errors
def pool_info(
    pool_dir: Path = typer.Argument(..., help="Pool folder, or a shipped pool's name."),
    json_out: Path | None = typer.Option(None, "--json", help="Also write the figures here."),
) -> None:
    """Describe a pool: items, parameters, test information, reference subjects.

    Items are counted per scenario and type; a, b and c are summarised when the pool is
    calibrated, with the test information at θ = -3 ... 3 and where it peaks.

    Example:

      cat pool info item_pools/demo-en --json info.json
    """
    check_writable({"--json": json_out})
    from cat.pools.loading import load_pool
    from cat.pools.summary import summarize_pool

    summary = summarize_pool(load_pool(pool_dir))
    _print_info(summary)
    if json_out is not None:
        figures = summary.model_dump(mode="json")
        json_out.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n", "utf-8")
        say(f"figures written to {json_out}")


def _print_info(summary: PoolSummary) -> None:
    pool = summary.pool
    version = f" v{pool.version}" if pool.version else ""
    model = f", {pool.model.upper()}" if pool.model else ", not calibrated"
    if pool.item_types:
        kinds = ", ".join(f"{n} {kind}" for kind, n in pool.item_types.items())
        model = f", scored items ({kinds})"
    say(f"{pool.name}{version} ({pool.language}): {counted(pool.n_items, 'item')}{model}")
    from itempool import ItemType

    columns = [*(t.value for t in ItemType), "total"]
    table = _table("Items per scenario and type", ["scenario", *columns])
    for scenario, row in summary.items.by_scenario.items():
        table.add_row(scenario or "(none)", *(str(row[t]) for t in columns))
    by_type = {**summary.items.by_type, "total": pool.n_items}
    table.add_row("all", *(str(by_type[t]) for t in columns), style="bold")
    stdout.print(table)
    if summary.parameters is not None:
        table = _table("Item parameters", ["", "mean", "sd", "min", "max"])
        for name, s in summary.parameters:
            table.add_row(name, *(f"{v:.3f}" for v in (s.mean, s.sd, s.min, s.max)))
        stdout.print(table)
    info = summary.information
    if info is not None:
        table = _table("Test information", ["θ", *(f"{t:+g}" for t in info.theta)])
        table.add_row("I(θ)", *(f"{v:.2f}" for v in info.values))
        stdout.print(table)
        say(f"maximum information {info.max_value:.2f} at θ = {info.max_theta:+.2f}")
    multi = summary.multidimensional
    if multi is not None:
        guessing = "with" if multi.guessing else "without"
        table = _table(
            f"{multi.structure.capitalize()} model ({guessing} lower asymptotes): slopes",
            ["factor", "items", "mean", "min", "max"],
        )
        for f in multi.factors:
            table.add_row(f.factor, str(f.n_items), *(f"{v:.3f}" for v in (f.mean, f.min, f.max)))
        stdout.print(table)
        fit, uni = multi.fit or {}, (multi.fit or {}).get("unidimensional") or {}
        if fit.get("aic") is not None and uni.get("aic") is not None:
            say(
                f"AIC {fit['aic']:,.1f}, BIC {fit['bic']:,.1f} "
                f"({uni['model'].upper()}: AIC {uni['aic']:,.1f}, BIC {uni['bic']:,.1f})"
            )
    if summary.protocol is not None:
        _print_protocol(summary.protocol)
    ref = summary.reference
    if ref is not None:
        # A title wider than the table wraps: the θ range goes below it.
        table = _table(
            f"Reference subjects: {ref.count:,}, the top {len(ref.top)}",
            ["subject", "θ", "se", "accuracy"],
        )
        table.caption = f"θ from {ref.theta_min:+.2f} to {ref.theta_max:+.2f}"
        for r in ref.top:
            accuracy = "-" if r.accuracy is None else f"{r.accuracy:.3f}"
            table.add_row(r.subject_id, f"{r.theta:+.2f}", f"{r.se:.2f}", accuracy)
        stdout.print(table)


def _print_protocol(protocol: PoolProtocol) -> None:
    """How the pool's references were asked and graded, which cat assess follows: one
    table for each form of the protocol."""
    for name in protocol.form_names:
        form = protocol.in_form(name)
        title = f"Protocol: {protocol.name}"
        if len(protocol.form_names) > 1:
            title += f", {name} form"
        how = "cat assess asks this way" if name == protocol.form else f"--protocol-form {name}"
        _print_form(form, f"{title} ({how})")


def _print_form(protocol: PoolProtocol, title: str) -> None:
    table = Table(title=title, show_header=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    asked = f"{protocol.mode}, {protocol.style} style"
    if protocol.mode == "generate" and protocol.endpoint == "completions":
        asked += "; one raw prompt to /v1/completions"
    if protocol.system_prompt is not None:
        asked += "; no system message" if not protocol.system_prompt else "; own system message"
    table.add_row("asked", asked)
    if protocol.template is not None:
        table.add_row("user message", protocol.template)
    if protocol.few_shot:
        source = protocol.examples or "pool items"
        how = "the first of each scenario" if protocol.few_shot_select == "first" else "drawn"
        table.add_row("examples", f"{protocol.few_shot} from {source} ({how})")
    sampling = f"temperature {protocol.temperature:g}"
    if protocol.max_tokens is not None:
        sampling += f", max tokens {protocol.max_tokens:,}"
    if protocol.stop:
        sampling += f", stop {', '.join(map(repr, protocol.stop))}"
    table.add_row("sampling", sampling)
    table.add_row("answer read by", f"{protocol.extractor}; no answer counts {protocol.no_answer}")
    if protocol.references:
        table.add_row("references", f"{len(protocol.references)}: {', '.join(protocol.references)}")
    if protocol.source is not None:
        table.add_row("source", protocol.source)
    stdout.print(table)


def _shown(folder: Path) -> str:
    """``folder`` relative to the working folder where it lies inside it."""
    try:
        return str(folder.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(folder)


def _table(title: str, columns: list[str]) -> Table:
    """A table whose first column is left-aligned and the others right-aligned."""
    table = Table(title=title)
    for k, column in enumerate(columns):
        table.add_column(column, justify="right" if k else "left")
    return table


def mapping_of(entries: list[str]) -> dict[str, str]:
    """The fields --map names; the importer finds the others (a file in pool form, or
    in a common benchmark's shape, needs none)."""
    mapping: dict[str, str] = {}
    for entry in entries:
        field, sep, column = entry.partition("=")
        if not sep or not field.strip() or not column.strip():
            raise fail(f"--map takes field=column, got {entry!r}")
        mapping[field.strip()] = column.strip()
    return mapping


@import_app.command("questions", no_args_is_help=True)
@handle_errors
def import_questions_cmd(
    file: Path = typer.Argument(
        ...,
        help="Questions: .csv, .jsonl or .json (optionally .gz), .parquet or .arrow, or a "
        "dataset folder (datasets' save_to_disk, or a folder of Parquet files).",
    ),
    out: Path = typer.Option(..., "--out", help="New pool folder to create."),
    language: str = typer.Option(
        ..., "--language", parser=language_code, metavar="CODE", help=LANGUAGE_HELP
    ),
    name: str | None = typer.Option(None, "--name", help="Pool name (default: the folder's)."),
    maps: list[str] = typer.Option([], "--map", help=_MAP_HELP),
    split: str | None = typer.Option(
        None,
        "--split",
        help="The split of a dataset dict folder (save_to_disk of several); default: test.",
    ),
    merge_duplicates: bool = typer.Option(
        False,
        "--merge-duplicates",
        help="Keep one copy of a question the file holds more than once (the same text and "
        "options); without it the copies are kept and reported.",
    ),
    protocol: Path | None = typer.Option(
        None,
        "--protocol",
        help="How the benchmark's reference results were asked and graded (pool.json's "
        "protocol: JSON, its template and examples files beside it, or the "
        "RESPONSES.protocol.json of cat synth); cat assess then asks the same way.",
    ),
) -> None:
    r"""Make a pool (items.jsonl, pool.json) from a benchmark's questions. The folder
    is created, with its parents; it must not hold a pool already.

    The columns of the common shapes are found without --map (MMLU, MMLU-Pro, ARC,
    CMMLU, C-Eval, MedQA, MedMCQA: question, options or choices or A..D columns, the key
    as a letter, a 0-based position or the option's text, the id, the subject or
    category as the scenario); --map names any other. Options are one column holding a
    list (lettered A, B, C, ...) or object, or several columns (--map
    options=opa,opb,opc,opd). Without an id column each item's id is made from its
    question and options (the same on every import). Questions the file holds twice
    are reported (--merge-duplicates keeps one copy).

    Examples:

      cat pool import questions test.parquet --out pools/mmlu --language en

      cat pool import questions items.csv.gz --out pools/mmlu-pro --language en \
          --map id=question_id --map scenario=category
    """
    from cat.errors import CatError
    from cat.pools.importer import import_questions
    from itempool import PoolFormatError
    from itempool.protocol_bundle import install_protocol, read_protocol_file

    check_writable(folders={"--out": out})
    try:
        bundle = None if protocol is None else read_protocol_file(protocol)  # before writing
        given = mapping_of(maps)
        done = import_questions(
            file,
            given,
            out,
            name or out.name,
            language,
            split=split,
            merge_duplicates=merge_duplicates,
        )
        if bundle is not None:
            install_protocol(out, bundle)
            say(f"protocol {bundle.protocol.name} from {protocol}")
    except PoolFormatError as exc:
        raise CatError(str(exc)) from exc
    print_imported(done, given, file, out, next_step=f"cat pool validate {out}")


@import_app.command("lm-eval", no_args_is_help=True)
@handle_errors
def import_lm_eval_cmd(
    files: list[Path] = typer.Argument(
        ..., help="lm-eval samples_<task>_<date>.jsonl files, or folders holding them."
    ),
    out: Path = typer.Option(
        ..., "--out", help="Response matrix to write (.jsonl or .csv); folders are created."
    ),
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
    from cat.pools.importer import import_lm_eval

    check_writable({"--out": out}, makes_folders=True)
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
    title = (
        f"{counted(matrix.n_subjects, 'subject')} x {counted(matrix.n_items, 'item')} ({metric})"
    )
    table = _table(title, ["subject", "answered", "accuracy"])
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

    Example, the demo pool against the new version that cat recalibrate --out demo-v2
    made of it:

      cat pool diff item_pools/demo demo-v2
    """
    check_writable({"--json": json_out})
    from cat.pools.diff import diff_pools
    from cat.pools.loading import load_pool

    diff = diff_pools(load_pool(old_dir), load_pool(new_dir))
    if json_out is not None:
        figures = diff.model_dump(mode="json")
        json_out.write_text(json.dumps(figures, indent=1, ensure_ascii=False) + "\n")
    _print_diff(diff)


def _label(side: PoolSide) -> str:
    version = f" v{side.version}" if side.version else " (no version)"
    return f"{side.name}{version} ({counted(side.n_items, 'item')})"


def _print_diff(diff: PoolDiff) -> None:
    items, refs = diff.items, diff.references
    say(f"{_label(diff.old)} → {_label(diff.new)}")
    shift = items.mean_b_shift
    say(
        f"items: {items.shared} in both, {len(items.added)} added, "
        f"{len(items.dropped)} dropped; {len(items.moved)} moved beyond their SEs"
        + (f"; mean b shift {shift:+.3f}" if shift is not None else "")
    )
    if items.moved:
        columns = ["item", "b old", "b new", "z", "a old", "a new"]
        table = _table("Items that moved (largest |z| first)", columns)
        for c in items.moved[:20]:
            numbers = (f"{c.b_old:+.3f}", f"{c.b_new:+.3f}", f"{c.z_b:+.2f}")
            table.add_row(c.item_id, *numbers, f"{c.a_old:.3f}", f"{c.a_new:.3f}")
        stdout.print(table)
    if refs.shared and refs.mean_theta_change is not None:
        say(
            f"reference subjects: {refs.shared} in both, {len(refs.added)} added; "
            f"θ changed by {refs.mean_theta_change:+.3f} on average, "
            f"at most {refs.max_abs_theta_change or 0.0:.3f}"
        )


def print_imported(
    done: ImportedQuestions,
    given: dict[str, str],
    file: Path,
    out: Path,
    next_step: str | None = None,
) -> None:
    """What an import found and wrote: the columns it found (those not ``given``), the
    ids it made, the copies; then ``next_step``, the command to run next."""
    found = {k: v for k, v in done.mapping.items() if k not in given}
    if found:
        say("columns found: " + ", ".join(f"{k}={v}" for k, v in found.items()))
    if done.ids_made:
        say("ids made from each question and its options (the file has no id column)")
    if done.duplicates:
        copies = sum(len(group) - 1 for group in done.duplicates)
        example = " = ".join(done.duplicates[0])
        what = (
            "dropped (--merge-duplicates)" if done.merged else "kept: --merge-duplicates drops them"
        )
        copy = "copy of a question" if copies == 1 else "copies of questions"
        say(
            f"note: {copies:,} {copy} the file holds already (same text and options; "
            f"e.g. {example}), {what}"
        )
    imported = counted(done.count, "question")
    then = "" if next_step is None else f"; next: {next_step}"
    say(f"imported {imported} from {file} into {out}{then}")
