"""Pool health: which items misfit, which look broken, which drifted (``cat pool fit``).

``fit_pool`` runs everything the command does on files and returns a ``PoolFitReport``;
``check_pool_fit`` does the same on a loaded pool and responses. The checks live in
``cat.pools.fit_checks``, the report's models in ``cat.pools.fit_report``.

Every reason an item is flagged is one of ``REASONS``; the statistics behind them:

- ``misfit``: a grouped chi-square given θ with bootstrap p-values, adjusted for the
  number of items (``irt.fit.items`` states the method);
- ``low_discrimination``: the pool's slope a below ``LOW_SLOPE`` (or negative);
- ``c_at_prior_edge``: the pool's c outside the central 99% of the calibration's prior
  on c: the data pushed it to where only the prior holds it;
- ``all_right`` / ``all_wrong``: every subject who answered got it right (wrong);
- ``key_suspect``: with the subjects' chosen options (``--choices``), one distractor
  drew at least half of the strongest third and more of them than the key; and, with or
  without them, right answers go with *lower* θ (point-biserial r < 0, one-sided test,
  adjusted);
- ``easier`` / ``harder``: with earlier responses, b moved beyond chance (``irt.linking.drift``;
  two-sided z-test, adjusted). ``easier`` for later, new models only is the
  contamination signal.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from cat import arguments as check
from cat.arguments import PathArg, api_errors
from cat.errors import CatError
from cat.pools.fit_checks import (
    LOW_SLOPE,
    REASONS,
    Choices,
    FitSettings,
    ItemFindings,
    ItemFlag,
    Reason,
    flag_distractors,
    flag_drift,
    flag_extremes,
    flag_misfit,
    flag_parameters,
    flag_reversed_key,
    item_theta_correlation,
)
from cat.pools.fit_report import (
    DriftSummary,
    FitFindings,
    ItemRow,
    ItemRowWithDrift,
    PoolFitReport,
    PoolFitResult,
    PoolRef,
    SettingsUsed,
    lay_out,
)
from cat.pools.jsonl import read_json_lines
from cat.pools.loading import as_pool, binary_params
from cat.pools.recalibration import merge_responses
from cat.provenance import package_version, utc_now
from irt.errors import IRTError
from irt.fit.items import adjust_p_values, item_fit
from irt.models import ItemParams
from irt.priors import ItemPriors
from irt.responses import ResponseMatrix
from irt.scoring import AbilityMethod, score_abilities
from itempool import LoadedPool
from itempool.formats.responses import read_responses

__all__ = [
    "LOW_SLOPE",
    "REASONS",
    "Choices",
    "DriftSummary",
    "FitSettings",
    "ItemFlag",
    "ItemRow",
    "ItemRowWithDrift",
    "PoolFitReport",
    "PoolFitResult",
    "PoolRef",
    "Reason",
    "SettingsUsed",
    "check_pool_fit",
    "fit_pool",
    "pool_priors",
    "read_choices",
]

Progress = Callable[[int, int], None]  # (bootstrap replicates done, of total)


def read_choices(path: Path) -> Choices:
    """Chosen options, JSONL: ``{"subject_id": ..., "choices": {item: "B", ...}}`` per line
    (what ``cat synth`` writes beside its responses)."""
    out: Choices = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise CatError(f"cannot read {path}: {exc.strerror or exc}") from exc
    for number, row in read_json_lines(str(path), lines):
        try:
            subject, choices = str(row["subject_id"]), row["choices"]
            if not isinstance(choices, dict):
                raise TypeError("choices is not an object")
        except (KeyError, TypeError) as exc:
            raise CatError(
                f"{path}:{number}: expected {{'subject_id': ..., 'choices': {{item: option}}}}"
                f" ({exc})"
            ) from exc
        out[subject] = {str(k): str(v) for k, v in choices.items() if v is not None}
    return out


def pool_priors(pool: LoadedPool, params: ItemParams) -> ItemPriors:
    """The priors the pool was calibrated with (its provenance), else the defaults."""
    described = (pool.manifest.calibration or {}).get("priors")
    if isinstance(described, dict):
        try:
            return ItemPriors.from_description(described)
        except IRTError as exc:
            raise CatError(f"{pool.dir}/pool.json: {exc}") from exc
    return ItemPriors.default_for(params.model)


def check_pool_fit(
    pool: LoadedPool,
    responses: ResponseMatrix,
    settings: FitSettings,
    *,
    baseline: ResponseMatrix | None = None,
    choices: Choices | None = None,
    progress: Progress | None = None,
) -> PoolFitResult:
    """Every test of the module on ``responses`` (and ``baseline``, the earlier period):
    settings, method, counts per reason, and one row per pool item."""
    if pool.params is None:
        raise CatError(f"pool {pool.dir} has no parameters (params.csv); calibrate it first")
    params = binary_params(pool, "cat pool fit")
    known = set(params.item_ids)
    ignored = [i for i in responses.item_ids if i not in known]
    if len(ignored) == responses.n_items:
        raise CatError("none of the responses' items is in the pool")
    wide = responses.on_items(params.item_ids)
    priors = pool_priors(pool, params)
    abilities = score_abilities(wide, params, AbilityMethod.EAP)
    theta = abilities.theta
    right = (wide.values == 1).astype(np.float64)
    observed = wide.observed.astype(np.float64)
    try:
        fit = item_fit(
            right,
            observed,
            theta,
            params,
            priors,
            theta_se=abilities.se,
            replicates=settings.replicates,
            seed=settings.seed,
            min_responses=settings.min_responses,
            progress=progress,
        )
    except IRTError as exc:
        raise CatError(str(exc)) from exc
    items = [ItemFindings() for _ in params.item_ids]
    p_fit = adjust_p_values(fit.p_value, settings.correction)
    flag_misfit(items, fit, p_fit, settings.alpha)
    flag_parameters(items, params, priors)
    flag_extremes(items, right, observed)
    r, p_key = item_theta_correlation(right, observed, theta, settings)
    if choices:
        if not set(choices) & set(wide.subject_ids):
            raise CatError(
                "no subject of the chosen options is among the responses' subjects: "
                "give the choices file written with these responses"
            )
        flag_distractors(items, pool, wide, theta, choices)
    flag_reversed_key(items, r, p_key, settings.alpha)
    drift = None
    if baseline is not None:
        drift = flag_drift(items, priors, params, wide, baseline, settings)
    found = FitFindings(
        wide=wide,
        theta=theta,
        theta_se=abilities.se,
        fit=fit,
        p_fit=p_fit,
        r=r,
        items=items,
        ignored=ignored,
        drift=drift,
        baseline_subjects=baseline.n_subjects if baseline is not None else 0,
        choices_used=bool(choices),
    )
    return lay_out(pool, found, settings)


@api_errors
def fit_pool(
    pool_dir: LoadedPool | PathArg,
    responses: PathArg | Sequence[PathArg],
    *,
    baseline: PathArg | Sequence[PathArg] | None = None,
    choices: PathArg | None = None,
    settings: FitSettings | None = None,
    progress: Progress | None = None,
) -> PoolFitReport:
    """``cat pool fit``: read the pool in ``pool_dir`` (or take it loaded), the response
    files (one path or several, merged; the ``baseline`` files likewise) and the chosen
    options, run ``check_pool_fit``, and record where the report came from (package
    version, date, the files). Paths may be str or ``os.PathLike``."""
    pool = as_pool(pool_dir, "pool_dir")
    responses = check.as_paths(responses, "responses")
    baseline = check.as_paths(baseline, "baseline") if baseline else None  # [] is none too
    choices = check.as_optional_path(choices, "choices")
    progress = check.callback(progress, "progress")
    if settings is not None and not isinstance(settings, FitSettings):
        raise CatError(f"settings must be a FitSettings, got {type(settings).__name__}")
    settings = settings or FitSettings()
    if pool.params is not None:
        binary_params(pool, "cat pool fit")  # before reading scores as 0/1 answers
    try:
        matrix = merge_responses([read_responses(p) for p in responses])
        earlier = merge_responses([read_responses(p) for p in baseline]) if baseline else None
    except IRTError as exc:
        raise CatError(str(exc)) from exc
    chosen = read_choices(choices) if choices is not None else None
    result = check_pool_fit(
        pool, matrix, settings, baseline=earlier, choices=chosen, progress=progress
    )
    return PoolFitReport(
        **dict(result),
        package_version=package_version(),
        date=utc_now(),
        responses=[str(p) for p in responses],
        baseline=[str(p) for p in baseline] if baseline else None,
    )
