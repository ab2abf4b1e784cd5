"""``cat.leaderboard``: runs of ``cat assess`` on one pool in one table, best first.

Rows are sorted by predicted full-pool accuracy (a reference model, where asked for, by
its observed accuracy, which the prediction is calibrated to). Beside each row is the
probability that it is above the next one down, from both θ and their standard errors
under a normal approximation, as ``cat assess`` gives P(above) for the references: a
reader sees which gaps the test has resolved and which it has not.

Runs on different pools are refused: θ is on each pool's own calibrated scale and the
accuracy is of a different set of questions, so no row of one would mean anything beside
a row of the other. A model run twice is kept twice (two runs are two measurements, often
with different settings, which the table shows), labelled by its file.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Sequence

from pydantic import JsonValue

from cat.arguments import PathArg, api_errors, as_optional_path, flag
from cat.assessment.result import AssessmentResult, PoolReference
from cat.errors import CatError
from cat.leaderboards.reading import Run, read_runs
from cat.leaderboards.result import Leaderboard, LeaderboardRow
from cat.pools.loading import as_pool, recorded_pool
from cat.provenance import package_version, utc_now
from itempool import LoadedPool
from synth.pricing import Prices

__all__ = ["leaderboard", "p_above"]

Inputs = PathArg | AssessmentResult | Sequence[PathArg | AssessmentResult]


@api_errors
def leaderboard(
    results: Inputs,
    *,
    references: bool = False,
    pool: LoadedPool | PathArg | None = None,
    prices: PathArg | None = None,
) -> Leaderboard:
    """Rank runs of ``cat assess`` on one pool.

    ``results``: RESULT.json files, folders of them (every ``*.json`` inside that is
    one), ``AssessmentResult`` objects, or a list mixing them. ``references``: add the
    pool's reference models as rows with their observed accuracy, read from the pool at
    the results' ``pool.path`` or from ``pool`` (a loaded pool, a folder or a pool's name;
    giving it implies ``references``). ``prices``: a JSON file of prices per million
    tokens by model name (``synth.pricing``) for the cost of live runs.

    ``CatError`` when nothing is given, a file is not a RESULT.json (naming it and its
    first problem), the runs are on different pools, or the pool found for the
    references is another pool."""
    notes: list[str] = []
    references = flag(references, "references")
    prices_file = as_optional_path(prices, "prices")
    inputs: Sequence[object]
    if isinstance(results, str | os.PathLike | AssessmentResult):
        inputs = [results]
    elif isinstance(results, Sequence):
        inputs = results
    else:
        raise CatError(
            "results must be RESULT.json paths, folders or AssessmentResult objects (or a "
            f"list of them), got {type(results).__name__}"
        )
    runs = read_runs(inputs, notes)
    _one_pool(runs)
    price_list = None if prices_file is None else Prices.read(prices_file)
    labels = _labels(runs, notes)
    settings = [_flat(run.result.settings.model_dump(mode="json")) for run in runs]
    differing = _differing(settings)
    rows = [
        _model_row(run, label, own, price_list)
        for run, label, own in zip(runs, labels, settings, strict=True)
    ]
    if references or pool is not None:
        rows += _reference_rows(runs, pool, notes)
    rows.sort(key=lambda r: (-r.accuracy, -r.theta, r.label))
    for k, row in enumerate(rows):
        row.rank = k + 1
        if k + 1 < len(rows):
            below = rows[k + 1]
            row.p_above_next = p_above(
                row.accuracy, _accuracy_sd(row), below.accuracy, _accuracy_sd(below)
            )
    first = runs[0].result
    return Leaderboard(
        pool=first.pool,
        measure="score" if first.pool.scored else "accuracy",
        rows=rows,
        differing_settings=differing,
        common_settings={k: v for k, v in settings[0].items() if k not in differing},
        notes=notes,
        sources=[str(run.source) for run in runs if run.source is not None],
        prices=None if prices_file is None else str(prices_file),
        package_version=package_version(),
        created=utc_now(),
    )


#: The normal quantile of a run's 90% interval: its half-width over this is the SD the
#: comparison of neighbouring rows takes.
_Z90 = 1.6448536269514722


def _accuracy_sd(row: LeaderboardRow) -> float:
    """The uncertainty of a row's accuracy, as a normal SD: a run's from its 90% interval;
    0 for a reference, whose accuracy is observed on the whole pool."""
    if row.low is None or row.high is None:
        return 0.0
    return (row.high - row.low) / (2 * _Z90)


def p_above(theta: float, se: float, other_theta: float, other_se: float) -> float | None:
    """P(θ > θ_other) with both estimates normal and independent; None where a figure is
    not finite. Two exact estimates (both SEs 0) give 1, 0 or ½."""
    if not all(math.isfinite(v) for v in (theta, se, other_theta, other_se)):
        return None
    spread = math.hypot(se, other_se)
    if spread == 0.0:
        return 0.5 if theta == other_theta else float(theta > other_theta)
    # Φ by erf: the same figure as scipy's norm.cdf, without loading scipy.stats
    return 0.5 * (1.0 + math.erf((theta - other_theta) / (spread * math.sqrt(2.0))))


def _pool_text(pool: PoolReference | LoadedPool) -> str:
    name, version = (
        (pool.name, pool.version)
        if isinstance(pool, PoolReference)
        else (pool.manifest.name, pool.manifest.version)
    )
    return name if version is None else f"{name} v{version}"


def _where(run: Run) -> str:
    return str(run.source) if run.source is not None else f"the result of {run.result.model}"


def _one_pool(runs: list[Run]) -> None:
    first = runs[0]
    for run in runs[1:]:
        a, b = first.result.pool, run.result.pool
        if (a.name, a.version) != (b.name, b.version):
            raise CatError(
                f"the results are from different pools: {_where(first)} is on "
                f"{_pool_text(a)}, {_where(run)} on {_pool_text(b)} (θ and accuracy are "
                "each on their own pool's scale; make one leaderboard per pool)"
            )


def _labels(runs: list[Run], notes: list[str]) -> list[str]:
    """Each run's label: its model's name, with its file where another run has the name."""
    counts = Counter(run.result.model for run in runs)
    names = Counter(run.source.name for run in runs if run.source is not None)
    labels = []
    for k, run in enumerate(runs):
        model, source = run.result.model, run.source
        if counts[model] == 1:
            labels.append(model)
        elif source is None:
            labels.append(f"{model} (#{k + 1})")
        else:
            labels.append(f"{model} ({source.stem if names[source.name] == 1 else source})")
    for model, count in counts.items():
        if count > 1:
            twins = [run for run in runs if run.result.model == model]
            same = len({json.dumps(run.result.settings.model_dump(mode="json")) for run in twins})
            how = "the same settings: repeated runs" if same == 1 else "different settings"
            notes.append(
                f"{model} has {count} runs, all kept as separate rows (labelled by file), "
                f"with {how}"
            )
    return labels


def _flat(settings: dict[str, JsonValue], prefix: str = "") -> dict[str, JsonValue]:
    """``settings`` with nested objects spread into dotted keys (``generation.temperature``),
    so that a change inside a group shows as that one key, not as the whole group."""
    flat: dict[str, JsonValue] = {}
    for key, value in settings.items():
        if isinstance(value, dict) and value:
            flat.update(_flat(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _differing(settings: list[dict[str, JsonValue]]) -> list[str]:
    """Settings keys whose values are not the same in every run, in the order the runs
    list them: new keys need no code here. An absent key counts as null (unset): a run
    from before a setting existed, or a group that does not apply to a simulated model
    (``generation``: null beside another run's ``generation.temperature``: null), does
    not differ from one that leaves it unset."""
    keys = list(dict.fromkeys(key for own in settings for key in own))
    return [
        key
        for key in keys
        if len({json.dumps(own.get(key), sort_keys=True) for own in settings}) > 1
    ]


def _model_row(
    run: Run, label: str, settings: dict[str, JsonValue], prices: Prices | None
) -> LeaderboardRow:
    result = run.result
    acc, usage = result.predicted_accuracy, result.usage
    cost = None
    if usage is not None and prices is not None:
        cost = prices.token_cost(result.model, usage.prompt_tokens, usage.completion_tokens)
    return LeaderboardRow(
        rank=0,
        kind="model",
        label=label,
        model=result.model,
        source=None if run.source is None else str(run.source),
        accuracy=acc.value,
        low=acc.low,
        high=acc.high,
        true_accuracy=None if result.truth is None else result.truth.accuracy,
        theta=result.theta,
        se=result.se,
        p_above_next=None,
        n_items=result.n_items,
        stop_reason=result.stop_reason,
        flags=_flags(result),
        calls=None if usage is None else usage.calls,
        calls_from_store=None if usage is None else usage.calls_from_store,
        prompt_tokens=None if usage is None else usage.prompt_tokens,
        completion_tokens=None if usage is None else usage.completion_tokens,
        cost=cost,
        seed=result.seed,
        package_version=result.settings.package_version,
        settings=settings,
    )


def _flags(result: AssessmentResult) -> list[str]:
    """What ``cat assess`` flagged about the answers (``LeaderboardRow.flags``)."""
    flags = ["person fit"] if result.person_fit.flagged else []
    check = result.difficulty_check
    if check is not None and check.flagged:
        flags.append("difficulty")
    unlike = result.unlike_references
    if unlike is not None and unlike.flagged:
        flags.append("unlike the references")
    if result.fallback is not None:
        flags.append("fallback")
    protocol = result.settings.protocol
    if protocol is not None and not protocol.followed:
        flags.append("off protocol")
    return flags


def _reference_rows(
    runs: list[Run], pool: LoadedPool | PathArg | None, notes: list[str]
) -> list[LeaderboardRow]:
    first = runs[0]
    recorded = first.result.pool
    loaded = (
        recorded_pool(recorded.path, recorded.name, recorded.version, _where(first))
        if pool is None
        else as_pool(pool)
    )
    expected = first.result.pool
    if (loaded.manifest.name, loaded.manifest.version) != (expected.name, expected.version):
        raise CatError(
            f"the references' pool {loaded.dir} is {_pool_text(loaded)}, but the results "
            f"are on {_pool_text(expected)}"
        )
    with_accuracy = [r for r in loaded.references if r.accuracy is not None]
    if not loaded.references:
        notes.append(f"the pool {_pool_text(loaded)} has no reference models")
    elif len(with_accuracy) < len(loaded.references):
        left = len(loaded.references) - len(with_accuracy)
        notes.append(f"{left} reference models left out: their accuracy is not recorded")
    return [
        LeaderboardRow(
            rank=0,
            kind="reference",
            label=ref.subject_id,
            model=ref.subject_id,
            source=None,
            accuracy=float(ref.accuracy),
            low=None,
            high=None,
            true_accuracy=None,
            theta=ref.theta,
            se=ref.se,
            p_above_next=None,
            n_items=ref.n_answered,
            stop_reason=None,
            flags=[],
            calls=None,
            calls_from_store=None,
            prompt_tokens=None,
            completion_tokens=None,
            cost=None,
            seed=None,
            package_version=None,
            settings=None,
        )
        for ref in with_accuracy
        if ref.accuracy is not None
    ]
