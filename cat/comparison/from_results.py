"""``cat compare --results A.json B.json``: the comparison of two models that were each
assessed already (``cat assess``) on the same pool, from their recorded answers.

Each model's θ is estimated again from all its recorded answers by the pool's default
estimator, and its accuracy predicted as ``cat assess``'s IRT design predicts it; Δ̂'s
interval takes each model's own length (the conformal half-width of reference pairs with
errors at length n_A for one and n_B for the other, ``cat.comparison.interval``). The
decision is the stopping rule's at one look, the stored width scaled by the two models'
disagreements where the pool stores the references' own. The items both answered give
the plain paired difference beside it, which describes those items only.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from cat import arguments as check
from cat.arguments import PathArg, api_errors
from cat.assessment.result import ProtocolUse
from cat.comparison.assemble import assemble, side
from cat.comparison.context import PoolContext
from cat.comparison.plugin import (
    INCONCLUSIVE,
    ModelAccuracy,
    PlugIn,
    decide,
    design_accuracy,
    difference,
)
from cat.comparison.predictors import MIXTURE, PairMixture, choose_predictor
from cat.comparison.result import CompareItem, CompareResult, CompareRunSettings
from cat.comparison.settings import DEFAULT_MARGIN, DEFAULT_MIN_LENGTH, CompareSettings
from cat.engine.registry import DEFAULT_ESTIMATOR, make_estimator
from cat.engine.selection import PoolInfo
from cat.engine.simulation import estimation
from cat.errors import CatError
from cat.pools.loading import as_pool, recorded_pool
from cat.provenance import package_version
from cat.results import output_kind
from itempool import LoadedPool
from itempool.problems import describe_errors


class _Loose(BaseModel):
    # Only the keys read here: RESULT.json gains keys across versions.
    model_config = ConfigDict(extra="ignore")


class _Pool(_Loose):
    name: str
    version: str | None = None
    n_items: int
    path: str
    scored: bool = False


class _Item(_Loose):
    id: str
    response: float | None


class _Truth(_Loose):
    accuracy: float


class _Settings(_Loose):
    protocol: ProtocolUse | None = None


class _Result(_Loose):
    """The part of a RESULT.json a comparison reads."""

    model: str
    pool: _Pool
    items: list[_Item]
    truth: _Truth | None = None
    settings: _Settings = _Settings()


def read_result(path: Path) -> _Result:
    """The model, pool and answers of a RESULT.json; ``CatError`` naming the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CatError(f"{path}: cannot read it ({exc.strerror or exc})") from exc
    except json.JSONDecodeError as exc:
        raise CatError(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from exc
    try:
        return _Result.model_validate(data)
    except ValidationError as exc:
        kind = output_kind(data)
        if kind is not None and "cat assess" not in kind:
            raise CatError(f"{path}: {kind}, not a RESULT.json of cat assess") from exc
        raise CatError(f"{path}: not a RESULT.json of cat assess ({describe_errors(exc)})") from exc


@api_errors
def compare_results(
    result_a: PathArg,
    result_b: PathArg,
    *,
    pool: LoadedPool | PathArg | None = None,
    margin: float = DEFAULT_MARGIN,
    min_length: int = DEFAULT_MIN_LENGTH,
    predictor: str = "auto",
) -> CompareResult:
    """Compare the models of two RESULT.json files (``cat assess``) on ``pool`` (default:
    the pool the first names): Δ̂ of their predicted accuracies with its 95% interval,
    and the decision (as ``cat.compare``'s at one look: none below ``min_length``
    answers of either model, "equivalent" inside ±``margin``), each model's accuracy
    predicted by ``predictor`` as ``cat.compare`` predicts it.

    Raises:
        CatError: a file that is not a RESULT.json, results from another pool (or
            another version of it) than ``pool``, or a pool ``cat compare`` cannot use.
    """
    paths = (check.as_path(result_a, "result_a"), check.as_path(result_b, "result_b"))
    if paths[0].resolve() == paths[1].resolve():
        raise CatError(f"{paths[0]} twice: compare the results of two runs")
    results = (read_result(paths[0]), read_result(paths[1]))
    first = results[0].pool
    context = PoolContext.of(
        recorded_pool(first.path, first.name, first.version, str(paths[0]))
        if pool is None
        else as_pool(pool)
    )
    manifest = context.pool.manifest
    for path, result in zip(paths, results, strict=True):
        if (result.pool.name, result.pool.version) != (manifest.name, manifest.version):
            raise CatError(
                f"{path}: assessed on pool {result.pool.name} (version {result.pool.version}), "
                f"not on {manifest.name} (version {manifest.version}) of {context.pool.dir}"
            )
    index = {item: j for j, item in enumerate(context.params.item_ids)}
    answers = [_answers(path, r, index) for path, r in zip(paths, results, strict=True)]
    lengths = (len(answers[0]), len(answers[1]))
    try:
        # The longer test's length stands as the maximum: nothing more was asked.
        longest = max(*lengths, check.whole(min_length, "min_length", 0))
        settings = CompareSettings.model_validate(
            {
                "margin": margin,
                "min_length": min_length,
                "max_length": longest,
                "looks": (longest,),
                "predictor": predictor,
            }
        )
    except ValidationError as exc:
        raise CatError(describe_errors(exc)) from exc
    plug_in = PlugIn(context.params, context.offset)
    info = PoolInfo.build(context.params)
    estimate = estimation(context.params, info, make_estimator(DEFAULT_ESTIMATOR.value))
    fitted = []
    for given in answers:
        positions = np.array(list(given), dtype=np.int_)
        right = np.array(list(given.values()), dtype=np.float64)
        theta, se = estimate(positions[None, :], right[None, :], np.zeros(1))
        mask = np.zeros(context.params.n_items, dtype=bool)
        mask[positions] = True
        fitted.append((float(theta[0]), float(se[0]), mask, float(right.sum())))
    chosen = choose_predictor(context.pool, context.params, min(lengths), settings.predictor)
    plug_ins = tuple(plug_in.terms(t, mask, n_right) for t, _, mask, n_right in fitted)
    terms = plug_ins
    disagreements = None
    if chosen.references is not None:  # the mixture: the prediction, or the companion
        mixture = PairMixture(chosen.references, context.params.n_items)
        for m, given in enumerate(answers):
            for j, x in given.items():
                mixture.record_one(m, j, x)
        mixed = mixture.terms()
        a, b = (abs(plug_ins[m].value - mixed[m].value) for m in (0, 1))
        disagreements = (a, b)
        if chosen.name == MIXTURE:
            terms = mixed
    shared = [j for j in answers[0] if j in answers[1]]
    # Not joined with the shared answers' interval, as ``cat.compare`` joins it: each
    # model took its own test, and the items both happened to answer are few and no
    # choice of either.
    d = difference(
        (terms[0], terms[1]),
        (fitted[0][1], fitted[1][1]),
        lengths,
        chosen.errors,
        settings.look_level,  # one look: the level itself
        n=len(shared),
        disagreements=disagreements,
    )
    decision = (decide(d, settings.margin) if min(lengths) >= min_length else None) or INCONCLUSIVE

    def accuracy(m: int) -> ModelAccuracy:
        theta, se, mask, n_right = fitted[m]
        if chosen.name == MIXTURE:
            return design_accuracy(terms[m], theta, se, lengths[m], chosen.errors, settings.level)
        return plug_in.accuracy(theta, se, mask, n_right, chosen.errors, settings.level)

    sides = tuple(
        side(
            results[m].model,
            accuracy(m),
            lengths[m],
            settings.level,
            context,
            truth=_truth(results[m]),
            result=str(paths[m]),
            protocol=results[m].settings.protocol,
        )
        for m in (0, 1)
    )
    ids = context.params.item_ids
    items = [
        CompareItem(
            id=ids[j],
            scenario=context.scenario_of.get(ids[j]),
            response_a=int(answers[0][j]),
            response_b=int(answers[1][j]),
        )
        for j in shared
    ]
    return assemble(
        context,
        CompareRunSettings(**settings.model_dump(), package_version=package_version()),
        chosen.name,
        "results",
        d,
        decision,
        None,
        (sides[0], sides[1]),
        [answers[0][j] - answers[1][j] for j in shared],
        0,
        items,
    )


def _answers(path: Path, result: _Result, index: dict[str, int]) -> dict[int, float]:
    """Pool position → 0/1 answer of every item the result answered, in its order."""
    out: dict[int, float] = {}
    for item in result.items:
        if item.response is None:
            continue
        if item.id not in index:
            raise CatError(f"{path}: item {item.id!r} is not in the pool")
        if item.response not in (0, 1):
            raise CatError(f"{path}: item {item.id!r} has a score {item.response}, not 0/1")
        out[index[item.id]] = float(item.response)
    if not out:
        raise CatError(f"{path}: the model answered no item")
    return out


def _truth(result: _Result) -> float | None:
    return None if result.truth is None else result.truth.accuracy
