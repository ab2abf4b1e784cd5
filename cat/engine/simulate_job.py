"""Simulated adaptive tests on a calibrated pool: the job behind ``cat simulate``.

``simulate`` draws examinees θ ~ N(0, 1), gives each an adaptive test whose answers
come from the model, and scores how well θ was recovered. With Sympson-Hetter exposure
control it first sets the control parameters by simulating other examinees, round after
round, which can take far longer than the reported simulation itself: the summary gives
both times.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
from scipy.stats import kendalltau

from cat import arguments as check
from cat.arguments import PathArg, api_errors
from cat.engine.constraints import MaxExposure
from cat.engine.exposure import SympsonHetter, sympson_hetter_parameters
from cat.engine.pool_params import calibrated_params
from cat.engine.registry import (
    ESTIMATOR_NAMES,
    POLICY_NAMES,
    EstimatorName,
    PolicyName,
    make_any_estimator,
    make_policy,
)
from cat.engine.selection import PoolInfo, PoolParams, as_pool_params, is_scored
from cat.engine.simulate_result import (
    ExposureControl,
    SimulatedExaminee,
    SimulationResult,
    SimulationSettings,
    SimulationSummary,
)
from cat.engine.simulation import CATDesign, CATResult, simulate_cat
from cat.engine.stopping import POOL_EXHAUSTED, StoppingRule
from cat.errors import CatError
from cat.provenance import package_version, utc_now
from irt.types import FloatArray, IntArray
from itempool import LoadedPool, PoolFormatError
from itempool.params_check import read_pool_param_files

#: Simulated examinees per round and rounds when setting Sympson-Hetter parameters.
SH_EXAMINEES, SH_ROUNDS = 1000, 30

#: One params file, or two that make a mixed pool (0/1 or scored, and continuous).
ParamsFiles = PathArg | Sequence[PathArg]

#: Called with (what is being done, fraction done).
Progress = Callable[[str, float], None]


@api_errors
def simulate(
    params: LoadedPool | PoolParams | ParamsFiles,
    *,
    examinees: int,
    length: int = 250,
    policy: PolicyName | str = PolicyName.MFI,
    estimator: EstimatorName | str = EstimatorName.MLE,
    seed: int = 0,
    se_target: float | None = None,
    min_length: int = 0,
    randomesque_k: int = 5,
    max_exposure: float | None = None,
    sympson_hetter: float | None = None,
    batch_size: int = 1,
    progress: Progress | None = None,
) -> SimulationResult:
    """Give ``examinees`` simulated examinees (θ ~ N(0, 1), drawn from ``seed``) an
    adaptive test of at most ``length`` items from ``params``: a pool (``cat.load_pool``),
    item parameters, or a params.csv (a str or path) checked as strictly as ``cat pool
    validate`` checks it. A pool of scored
    items (``PolytomousParams``, or a params file in their layout) draws each answer's
    score from its item's category probabilities; a mixed pool (``MixedParams``, or a
    0/1 or scored file with a continuous one) draws its continuous items' scores from
    their densities.

    ``policy`` and ``estimator`` are names from ``cat.engine.registry``. The test stops
    at ``length`` items or, with ``se_target``, once the SE reaches it, but never before
    ``min_length``. Exposure is limited by a hard cap (``max_exposure``) or by
    Sympson-Hetter control at the rate ``sympson_hetter``, not both. ``batch_size``
    items are chosen per round at one estimate. ``progress`` is told what is being done.

    Raises:
        CatError: a setting out of range, an unknown name, or a params file that does
            not pass the checks (the message names its line).
    """
    start = time.perf_counter()
    examinees = check.whole(examinees, "examinees", 1)
    length = check.whole(length, "length", 1)
    min_length = check.whole(min_length, "min_length", 0)
    seed = check.seed(seed)
    se_target = check.optional_number(se_target, "se_target", above=0)
    randomesque_k = check.whole(randomesque_k, "randomesque_k", 1)
    max_exposure = check.optional_number(max_exposure, "max_exposure", above=0, at_most=1)
    sympson_hetter = check.optional_number(sympson_hetter, "sympson_hetter", above=0, at_most=1)
    batch_size = check.whole(batch_size, "batch_size", 1)
    policy = check.name(policy, "policy", POLICY_NAMES)
    estimator = check.name(estimator, "estimator", ESTIMATOR_NAMES)
    progress = check.callback(progress, "progress")
    _check_settings(length, min_length, max_exposure, sympson_hetter)
    pool_params, source = _load(params)
    rng = np.random.default_rng(seed)
    theta_true = rng.normal(size=examinees)
    chosen_policy = make_policy(policy, length, randomesque_k)
    if max_exposure is not None:
        chosen_policy = MaxExposure(chosen_policy, max_exposure)
    stopping = StoppingRule(max_items=length, se_target=se_target, min_items=min_length)
    scored = is_scored(pool_params)
    design = CATDesign(chosen_policy, make_any_estimator(estimator, scored), stopping, batch_size)
    pool = PoolInfo.build(pool_params)
    tell = progress or _quiet
    exposure_control = None
    if sympson_hetter is not None:
        design, exposure_control = _with_sympson_hetter(
            pool_params, pool, design, sympson_hetter, seed, tell
        )
    steps_before = SH_ROUNDS if sympson_hetter is not None else 0
    tell(f"simulating {examinees} examinees", steps_before / (steps_before + 1))
    result = simulate_cat(pool_params, theta_true, design, rng, pool)
    policy_name = PolicyName(policy)
    settings = SimulationSettings(
        params=source[0] if source else None,
        continuous_params=source[1] if len(source) > 1 else None,
        n_pool=pool_params.n_items,
        examinees=examinees,
        length=length,
        policy=policy_name,
        estimator=EstimatorName(estimator),
        seed=seed,
        se_target=se_target,
        batch_size=batch_size,
        max_exposure=max_exposure,
        exposure_control=exposure_control,
        min_length=min_length,
        randomesque_k=randomesque_k if policy_name is PolicyName.RANDOMESQUE else None,
        item_types=_item_types(pool_params),
        package_version=package_version(),
    )
    rows = _examinees(result, theta_true, pool_params.item_ids)
    tell("done", 1.0)
    return SimulationResult(
        summary=_summary(
            result, theta_true, pool_params.n_items, time.perf_counter() - start, length
        ),
        settings=settings,
        created=utc_now(),
        examinees=rows,
    )


def _quiet(what: str, done: float) -> None:
    """Progress that goes nowhere."""


def _check_settings(
    length: int,
    min_length: int,
    max_exposure: float | None,
    sympson_hetter: float | None,
) -> None:
    """Refuse settings that make no sense together, before any work (each alone is
    checked for its type and range first)."""
    if min_length > length:
        # Never clip: a minimum above the maximum is a mistake the user should see.
        raise CatError(
            f"the minimum length ({min_length}) is longer than the test length ({length})"
        )
    if max_exposure is not None and sympson_hetter is not None:
        raise CatError(
            "choose one of max_exposure (a hard cap) and sympson_hetter (exposure control)"
        )


def _load(params: LoadedPool | PoolParams | ParamsFiles) -> tuple[PoolParams, list[str]]:
    """The item parameters, and the files they came from (none if given in memory,
    loaded pools' included)."""
    if isinstance(params, LoadedPool):
        return calibrated_params(params), []
    in_memory = as_pool_params(params)
    if in_memory is not None:
        return in_memory, []
    paths = check.as_paths(params, "params")
    try:
        return read_pool_param_files(paths), [str(p) for p in paths]
    except PoolFormatError as exc:
        raise CatError(str(exc)) from exc


def _item_types(params: PoolParams) -> dict[str, int] | None:
    """Items per type of a scored pool (None for a binary one)."""
    if not params.scored:
        return None
    kinds = [str(t) for t in params.item_types]
    return {kind: kinds.count(kind) for kind in sorted(set(kinds))}


def _with_sympson_hetter(
    params: PoolParams,
    pool: PoolInfo,
    design: CATDesign,
    max_rate: float,
    seed: int,
    tell: Progress,
) -> tuple[CATDesign, ExposureControl]:
    """The design with Sympson-Hetter control at ``max_rate``, and how K was set."""

    def report_round(n: int, largest: float) -> None:
        tell(f"Sympson-Hetter round {n + 1}: max rate {largest:.3f}", n / (SH_ROUNDS + 1))

    k, rates = _sympson_hetter_k(params, pool, design, max_rate, seed, report_round)
    control = ExposureControl(
        max_rate=max_rate,
        n_controlled=int((k < 1).sum()),
        min_k=float(k.min()),
        calibration_max_rate=float(rates.max()),
        calibration_examinees_per_round=SH_EXAMINEES,
    )
    return replace(design, exposure=SympsonHetter(tuple(k))), control


def _sympson_hetter_k(
    params: PoolParams,
    pool: PoolInfo,
    design: CATDesign,
    max_rate: float,
    seed: int,
    progress: Callable[[int, float], None],
) -> tuple[FloatArray, FloatArray]:
    """K for the pool under this design, from new N(0, 1) examinees each round (their
    seed is derived from ``seed`` so that the examinees reported are not the ones K was
    fitted to)."""
    rng = np.random.default_rng([seed, 1])

    def run(screen: SympsonHetter) -> IntArray:
        test = replace(design, exposure=screen)
        return simulate_cat(params, rng.normal(size=SH_EXAMINEES), test, rng, pool).items

    return sympson_hetter_parameters(params.n_items, run, max_rate, SH_ROUNDS, progress)


def _summary(
    result: CATResult, theta_true: FloatArray, n_pool: int, wall_seconds: float, length: int
) -> SimulationSummary:
    err = result.theta_hat - theta_true
    n = len(err)
    tau = float(kendalltau(theta_true, result.theta_hat)[0]) if n > 1 else None
    return SimulationSummary(
        bias=float(err.mean()),
        rmse=float(np.sqrt(np.mean(err**2))),
        kendall_tau=tau,
        seconds=result.seconds,
        seconds_per_examinee=result.seconds / n,
        max_exposure=float(result.exposure(n_pool).max()),
        mean_length=float(result.n_items.mean()),
        mean_se=float(result.se.mean()),
        wall_seconds=wall_seconds,
        effective_length=min(length, n_pool),
        pool_exhausted=result.stop_reason.count(POOL_EXHAUSTED),
    )


def _examinees(
    result: CATResult, theta_true: FloatArray, item_ids: tuple[str, ...]
) -> list[SimulatedExaminee]:
    return [
        SimulatedExaminee(
            theta_true=float(theta_true[k]),
            theta_hat=float(result.theta_hat[k]),
            se=float(result.se[k]),
            items=[item_ids[j] for j in result.items[k] if j >= 0],
            n_items=int(result.n_items[k]),
            stop_reason=result.stop_reason[k],
        )
        for k in range(len(theta_true))
    ]
