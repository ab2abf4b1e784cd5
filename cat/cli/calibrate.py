"""``cat calibrate``: fit item parameters to a response matrix."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer

from cat.cli.common import (
    MODEL_NAMES,
    ModelChoice,
    check_writable,
    fail,
    handle_errors,
    model_choice,
    progress_bar,
)
from cat.engine.names import CriterionName
from irt.names import AbilityMethod, CalibrationMethod, ModelGroup, model_names


class StandardErrorChoice(StrEnum):
    """``--standard-errors`` (``cat.pools.graded_calibration.SE_CHOICES``)."""

    AUTO = "auto"
    OAKES = "oakes"
    XPD = "xpd"
    NONE = "none"


#: ``--continuous-model`` (``cat.pools.mixed_calibration.CONTINUOUS_CHOICES``): auto,
#: or a model for scores in [0, 1] of ``irt.names.MODELS``.
ContinuousModelChoice = StrEnum(  # type: ignore[misc]
    "ContinuousModelChoice",
    [("AUTO", "auto")] + [(name.upper(), name) for name in model_names(ModelGroup.CONTINUOUS)],
)
#: ``--continuous-model``'s default: fit both, keep the better.
_AUTO = ContinuousModelChoice("auto")


@handle_errors
def calibrate(
    responses: Path = typer.Argument(
        ...,
        help="Response matrix: .jsonl or wide .csv (optionally .gz); 0/1 answers, or scores "
        "0..m for --model graded|gpcm|sequential|nominal.",
        show_default=False,
    ),
    model: ModelChoice = typer.Option(
        ModelChoice.THREE_PL,
        "--model",
        metavar="MODEL",
        parser=model_choice,
        help=f"IRT model, one of {MODEL_NAMES}. bifactor: a general factor plus one specific "
        "factor per scenario (from --groups or the --pool's items); mirt: --dims K "
        "exploratory factors, or one correlated factor per scenario. Either is fitted "
        "beside the 3PL, which the pool keeps in params.csv. graded, gpcm, sequential, "
        "nominal: for scores 0..m (0/1 items become 2PL, or 3PL with --guessing), "
        "written in the polytomous params.csv layout (item_id,type,a,d1..dM,c; nominal "
        "items add their scoring values ak1..akM). crm, beta: for scores in [0, 1] "
        "(e.g. ROUGE-L), written as item_id,type,a,d,sigma,tau,epsilon; --out only. "
        "An item family registered from outside the package (an irt.families entry "
        "point) is taken by its name and fitted as graded is.",
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        help="Write item parameters here (params.csv format; mirt_params.csv format for "
        "--model bifactor|mirt; item_id,type,a,d1..dM,c for graded|gpcm|sequential|nominal).",
    ),
    groups: Path | None = typer.Option(
        None,
        "--groups",
        help="--model bifactor: a questions file (CSV: first column the item id; or JSONL "
        "with 'id') naming each item's scenario in --group-column; each scenario becomes a "
        "specific factor. Default: the --pool's items.jsonl scenarios.",
    ),
    group_column: str = typer.Option(
        "scenario", "--group-column", help="Column of --groups holding the scenario."
    ),
    dims: int | None = typer.Option(
        None,
        "--dims",
        min=1,
        max=5,
        show_default=False,
        help="--model mirt: K exploratory factors (1-5; unrotated, identified as R mirt "
        "does). Without it, --model mirt fits one correlated factor per scenario (two or "
        "more scenarios).",
    ),
    guessing: bool | None = typer.Option(
        None,
        "--guessing/--no-guessing",
        show_default=False,
        help="A lower asymptote c per item (3PL) or none (2PL): for every item of --model "
        "bifactor|mirt (default: with c), for the 0/1 items of --model "
        "graded|gpcm|sequential|nominal (default: without).",
    ),
    criterion: CriterionName | None = typer.Option(
        None,
        "--criterion",
        help="--model bifactor|mirt with --pool: how that design picks items in the "
        "cross-fit and, recorded in the pool, in cat assess (see cat assess --help). "
        "Default: d-optimal.",
    ),
    report: Path | None = typer.Option(None, "--report", help="Write a JSON fit report here."),
    device: str = typer.Option(
        "cpu",
        "--device",
        metavar="DEVICE",
        help="Where the EM cycles of a 1pl-4pl, graded, gpcm, sequential or nominal fit "
        "run: cpu (numpy on this machine's processors), cuda or cuda:K (torch on that GPU), "
        "auto (a GPU when torch sees one, else cpu; other models run on the cpu), torch:cpu "
        "(the torch path on the processors, to test it). The GPU needs torch and "
        'array-api-compat: pip install -e ".[gpu]".',
    ),
    method: CalibrationMethod = typer.Option(
        CalibrationMethod.EM, "--method", help="em: marginal ML / Bayes modal; bayes: pyro SVI."
    ),
    abilities: Path | None = typer.Option(
        None, "--abilities", help="Write each subject's θ and SE here (CSV)."
    ),
    scoring: AbilityMethod = typer.Option(
        AbilityMethod.EAP,
        "--scoring",
        help="Ability estimator for --abilities and --pool (graded models: eap or map).",
    ),
    pool: Path | None = typer.Option(
        None,
        "--pool",
        help="Item-pool folder: write params.csv, reference.jsonl and the references' "
        "answers (reference_answers.csv.gz) there and record the calibration in its "
        "pool.json.",
    ),
    cross_fit: int | None = typer.Option(
        None,
        "--cross-fit",
        min=2,
        show_default=False,
        help="With --pool (done by default, K = 5, or K = the number of references, "
        "leave-one-out, when fewer than 10): replay each reference model with the "
        "pool calibrated on the other K-1 folds under each design (irt, mixture, "
        "low-rank) and store the predicted-accuracy errors, so that cat assess runs the "
        "design that erred least and sizes its interval by them (costs K more "
        "calibrations).",
    ),
    no_cross_fit: bool = typer.Option(
        False,
        "--no-cross-fit",
        help="With --pool: store no cross-fitted errors (cat assess then runs the IRT "
        "design with an interval from theta alone, which misses misfit).",
    ),
    cross_fit_lengths: str = typer.Option(
        "100,250",
        "--cross-fit-lengths",
        help="Test lengths of the --cross-fit replays (cut to the pool's size; a pool "
        "smaller than every length is also replayed at half its size).",
    ),
    seed: int = typer.Option(
        0, "--seed", help="Random seed (Bayesian fits, --cross-fit folds); recorded."
    ),
    # Three states: None leaves the model's default (on for 3PL, 4PL and graded models,
    # off for 1PL and 2PL, as R mirt), which neither flag can say.
    priors: bool | None = typer.Option(
        None,
        "--priors/--no-priors",
        show_default=False,
        help="Priors on the item parameters (on by default for 3PL, 4PL and graded "
        "models): --priors puts a ~ lognormal(0, 0.5) and b ~ normal(0, 2) on 1PL/2PL "
        "items too, which keeps estimates from running off on few subjects; "
        "--no-priors is plain marginal ML.",
    ),
    max_iter: int = typer.Option(500, "--max-iter", min=1, help="EM cycle cap."),
    tol: float = typer.Option(1e-4, "--tol", min=0.0, help="EM tolerance on parameter change."),
    quad_points: int = typer.Option(61, "--quad-points", min=5, help="Quadrature points."),
    id_column: bool = typer.Option(
        True,
        " /--no-id-column",
        show_default=False,
        help="CSV has no subject-id column (ids s0001, s0002, ...).",
    ),
    standard_errors: StandardErrorChoice = typer.Option(
        StandardErrorChoice.AUTO,
        "--standard-errors",
        help="--model graded|gpcm|sequential|nominal|crm|beta: standard errors from the observed "
        "information (oakes, slow beyond ~100 items), the cross-product of scores "
        "(xpd; not for crm, beta) or none; auto: up to 2,000 free parameters xpd where "
        "there are more subjects than parameters, else oakes (always oakes for crm, beta); "
        "none beyond.",
    ),
    continuous: Path | None = typer.Option(
        None,
        "--continuous",
        help="With --model graded|gpcm|sequential|nominal: a second response file of scores in "
        "[0, 1] (e.g. ROUGE-L) on other items, fitted together with RESPONSES on one "
        "theta (a mixed pool). Needs --continuous-out.",
    ),
    continuous_model: ContinuousModelChoice = typer.Option(
        _AUTO,
        "--continuous-model",
        help="With --continuous: the continuous items' model; auto fits crm and beta and "
        "keeps the one with the lower AIC (the report keeps both).",
    ),
    continuous_out: Path | None = typer.Option(
        None,
        "--continuous-out",
        help="With --continuous: write the continuous items' parameters here "
        "(item_id,type,a,d,sigma,tau,epsilon); --out gets the scored items'.",
    ),
    collapse_scores: bool = typer.Option(
        False,
        "--collapse-scores",
        help="--model graded|gpcm|sequential|nominal: renumber each item's observed scores 0, 1, "
        "2, ... as R mirt does (1..4 become 0..3; a score nobody gave is closed up); the "
        "report lists the original scores.",
    ),
) -> None:
    """Fit an IRT model to RESPONSES and write its item parameters.

    Examples, on the simulated models that ship in examples/: 0/1 answers, scores 0..m,
    similarity scores in [0, 1], and the last two together (a mixed pool):

      cat calibrate examples/responses.jsonl --model 3pl --out params.csv \\
          --report fit.json

      cat calibrate examples/scored_responses.jsonl --model graded \\
          --out params.csv --abilities theta.csv

      cat calibrate examples/similarity.jsonl --model beta --out params.csv \\
          --report fit.json

      cat calibrate examples/scored_responses.jsonl --model graded \\
          --continuous examples/similarity.jsonl \\
          --out params.csv --continuous-out continuous_params.csv

    On files of your own: a wide CSV by plain marginal ML, a bifactor model with one
    specific factor per scenario of items.csv, and R mirt's Science data (scores 1..4,
    no subject ids) by partial credit:

      cat calibrate responses.csv --model 2pl --no-priors --out params.csv

      cat calibrate responses.jsonl --model bifactor --groups items.csv \\
          --out mirt.csv

      cat calibrate Science.csv --model gpcm --no-id-column --collapse-scores \\
          --out p.csv
    """
    check_writable(
        {
            "--out": out,
            "--report": report,
            "--abilities": abilities,
            "--continuous-out": continuous_out,
        }
    )
    lengths = _lengths(cross_fit_lengths)
    if no_cross_fit and cross_fit is not None:
        raise fail("give --cross-fit K or --no-cross-fit, not both")
    # The default folds give way to leave-one-out on few subjects; folds asked for do not.
    if out is None and pool is None:
        raise fail(_no_destination(model, continuous is not None))
    from cat.cli.calibrate_render import render
    from cat.pools.calibration_job import DEFAULT_CROSS_FIT_FOLDS
    from cat.pools.calibration_job import calibrate as run_calibration

    fallback = cross_fit is None
    if cross_fit is None and pool is not None and not no_cross_fit:
        cross_fit = DEFAULT_CROSS_FIT_FOLDS

    with progress_bar(_title(model, continuous is not None), total=1.0) as update:

        def progress(done: float, status: str) -> None:
            update(completed=done, description=status)

        def cross_fitting(what: str, done: float) -> None:
            update(completed=done, description=f"cross-fit: {what}")

        outcome = run_calibration(
            responses,
            model=model.value,
            method=method,
            out=out,
            report=report,
            abilities=abilities,
            scoring=scoring,
            pool=pool,
            cross_fit=cross_fit,
            cross_fit_lengths=lengths,
            seed=seed,
            # --priors: every prior the model has a parameter for (ItemPriors.for_model);
            # neither flag: the model's default.
            priors="all" if priors else priors is not False,
            max_iter=max_iter,
            tol=tol,
            quad_points=quad_points,
            id_column=id_column,
            progress=progress,
            cross_fit_progress=cross_fitting,
            groups=groups,
            group_column=group_column,
            guessing=guessing,
            dims=dims,
            criterion=None if criterion is None else criterion.value,
            cross_fit_fallback=fallback,
            standard_errors=standard_errors.value,
            collapse_scores=collapse_scores,
            continuous=continuous,
            continuous_model=continuous_model.value,
            continuous_out=continuous_out,
            score_subjects=False,
            device=device,
        )
    render(outcome, out=out, continuous_out=continuous_out, pool=pool, no_cross_fit=no_cross_fit)


def _no_destination(model: ModelChoice, continuous: bool) -> str:
    """The error of a command that would write nothing (the library would return the fit)."""
    if continuous:
        return (
            "say where both parts' parameters go: --out PARAMS.csv --continuous-out CONTINUOUS.csv"
        )
    if model.continuous:
        return "say where the parameters go: --out PARAMS.csv"
    return "say where the parameters go: --out PARAMS.csv and/or --pool DIR"


def _title(model: ModelChoice, continuous: bool) -> str:
    """The progress bar's first words, until the fit says what it is doing."""
    if continuous:
        return f"calibrating {model.value} + continuous"
    if model.graded or model.continuous:
        return f"calibrating {model.value}"
    # The multidimensional models are fitted after the 3PL beside them.
    return f"calibrating {'3PL' if model.multidimensional else model.value.upper()}"


def _lengths(text: str) -> list[int]:
    try:
        lengths = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise fail(f"--cross-fit-lengths takes whole numbers like 100,250, got {text!r}") from None
    if not lengths or min(lengths) < 1:
        raise fail(f"--cross-fit-lengths takes positive whole numbers, got {text!r}")
    return lengths
