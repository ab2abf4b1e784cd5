"""``cat pool create``: a benchmark's file to a calibrated pool in one command
(``cat.pools.creation``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from cat.cli.common import (
    MODEL_NAMES,
    ModelChoice,
    counted,
    fail,
    handle_errors,
    model_choice,
    progress_bar,
    say,
)
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
from cat.pools.names import LANGUAGE_HELP, language_code
from synth.names import DEFAULT_KEY_ENV, KINDS

if TYPE_CHECKING:
    from cat.pools.creation import CreatedPool, PoolRecipe


@handle_errors
def create_pool_cmd(
    file: Path = typer.Argument(
        ...,
        help="Questions: .csv, .jsonl or .json (optionally .gz), .parquet or .arrow, or a "
        "dataset folder (datasets' save_to_disk, or a folder of Parquet files).",
    ),
    out: Path = typer.Option(
        ..., "--out", help="The pool folder to make (or to go on with: rerun to resume)."
    ),
    language: str = typer.Option(
        ..., "--language", parser=language_code, metavar="CODE", help=LANGUAGE_HELP
    ),
    reference_models: Path = typer.Option(
        ...,
        "--reference-models",
        help="A text file naming the reference models, one a line: MODEL (on --base-url) "
        "or MODEL@URL; # starts a comment.",
    ),
    base_url: str | None = typer.Option(
        None,
        "--base-url",
        help="OpenAI-compatible endpoint of the models listed without @URL.",
    ),
    name: str | None = typer.Option(None, "--name", help="Pool name (default: the folder's)."),
    maps: list[str] = typer.Option(
        [], "--map", help="field=column, as cat pool import questions takes it; repeatable."
    ),
    split: str | None = typer.Option(
        None, "--split", help="The split of a dataset dict folder; default: test."
    ),
    merge_duplicates: bool = typer.Option(
        False, "--merge-duplicates", help="Keep one copy of a question the file holds twice."
    ),
    participants: str = typer.Option(
        ",".join(KINDS),
        "--participants",
        help="Who answers, comma-separated: singles (each reference alone), pairs (each "
        "ordered pair by generation -> debate -> reflection: more subjects to calibrate on).",
    ),
    model: ModelChoice = typer.Option(
        ModelChoice.THREE_PL,
        "--model",
        metavar="MODEL",
        parser=model_choice,
        help=f"IRT model of the calibration, one of {MODEL_NAMES} (see cat calibrate).",
    ),
    seed: int = typer.Option(
        0, "--seed", help="Sent with every request; the cross-fit's folds; recorded."
    ),
    concurrency: int = CONCURRENCY,
    api_key_env: str = typer.Option(
        DEFAULT_KEY_ENV, "--api-key-env", help="Environment variable holding the API key."
    ),
    timeout: float = typer.Option(60.0, "--timeout", min=0.1, help="Seconds per request."),
    max_attempts: int = typer.Option(6, "--max-attempts", min=1, help="Tries per call."),
    prices: Path | None = typer.Option(
        None,
        "--prices",
        help='Prices per million tokens: {"model": {"input": x, "output": y}}.',
    ),
    temperature: float | None = TEMPERATURE,
    max_tokens: int | None = MAX_TOKENS,
    system_prompt: str | None = SYSTEM_PROMPT,
    prompt_template: Path | None = SYNTH_PROMPT_TEMPLATE,
    few_shot: int | None = SYNTH_FEW_SHOT,
    stop: list[str] | None = STOP,
    extra_body: str | None = EXTRA_BODY,
    dry_run: bool = typer.Option(
        False,
        "--dry-run",
        help="Make no call and write nothing: print the calls the references would be asked, "
        "their tokens and, with --prices, their cost (every prompt rendered as it would "
        "be sent).",
    ),
) -> None:
    r"""Make a calibrated pool from a benchmark's file in one command.

    It imports the questions (as cat pool import questions), asks every reference model
    every question (as cat synth; how they were asked becomes the pool's protocol) and
    calibrates the pool on their answers (as cat calibrate --pool, with its cross-fit).
    Then cat assess ranks a new model on it.

    Everything is kept in the pool folder: the questions, the references' calls
    (references/run.db, every reply stored as it arrives), their answers
    (references/responses.jsonl) and the calibration. Killed or stopped at any point,
    the same command goes on where it stopped and asks no stored call again; run again
    with a reference added, it asks only the new calls and calibrates again.

    Examples:

      cat pool create test.parquet --out pools/my-bench --language en \
          --reference-models models.txt --base-url http://localhost:8000/v1

      cat pool create questions.jsonl --out pools/my-bench --language zh \
          --reference-models models.txt --base-url http://localhost:8000/v1 \
          --participants singles --map scenario=department
    """
    from cat.cli.pool import mapping_of
    from cat.cli.synth import comma_list
    from cat.pools.creation import PoolRecipe, create_pool, read_reference_models

    kinds = comma_list(participants, KINDS, "--participants")
    references = read_reference_models(reference_models)
    if base_url is None and any("@" not in r for r in references):
        bare = next(r for r in references if "@" not in r)
        raise fail(f"give --base-url, or MODEL@URL in {reference_models} ({bare} has no URL)")
    recipe = PoolRecipe(
        source=file,
        out=out,
        language=language,
        references=references,
        base_url=base_url,
        name=name,
        mapping=mapping_of(maps),
        split=split,
        merge_duplicates=merge_duplicates,
        participants=tuple(kinds),
        generation=generation_settings(
            temperature=temperature,
            max_tokens=max_tokens,
            system_prompt=system_prompt,
            prompt_template=prompt_template,
            few_shot=few_shot,
            stop=stop,
            extra_body=extra_body,
        ),
        model=model.value,
        seed=seed,
    )
    if dry_run:
        from cat.cli.synth import print_synthesis_estimate
        from cat.pools.creation import estimate_creation

        estimate = estimate_creation(recipe, prices)
        print_synthesis_estimate(estimate, f"cat pool create {out}")
        say("then the calibration, which makes no call")
        return
    with progress_bar("making the pool", total=None) as update:

        def show(description: str, completed: float | None, total: float | None) -> None:
            update(description=description, completed=completed or 0, total=total)

        made = create_pool(
            recipe,
            concurrency=concurrency,
            api_key_env=api_key_env,
            timeout=timeout,
            max_attempts=max_attempts,
            prices=prices,
            progress=show,
        )
    _print(made, recipe)


def _print(made: CreatedPool, recipe: PoolRecipe) -> None:
    from cat.cli.calibrate_render import render
    from cat.cli.pool import print_imported
    from cat.cli.synth import print_report

    if made.imported is None and made.answered is None:
        say(f"pool {made.folder} is made already from {recipe.source}: nothing to do")
        return
    if made.resumed:
        say(f"going on with {made.folder} (begun by an earlier run)")
    if made.imported is not None:
        print_imported(made.imported, recipe.mapping, recipe.source, made.folder)
    if made.answered is not None:
        print_report(made.answered)
    if made.calibrated is not None:
        render(made.calibrated, out=None, continuous_out=None, pool=made.folder, no_cross_fit=False)
    refs = counted(len(recipe.references), "reference model")
    say(
        f"pool {made.folder} made from {recipe.source} ({refs}); "
        f"next: cat assess --pool {made.folder} --model MODEL --base-url URL"
    )
