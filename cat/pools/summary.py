"""What a pool holds, in figures: ``cat pool info`` prints them and ``--json`` writes them.

``summarize_pool`` counts the items per scenario and type, summarises a, b and c when
the pool is calibrated, traces the test information at θ = -3 … 3 with its maximum, and
lists the strongest reference subjects. ``PoolSummary.model_dump(mode="json")`` is the
JSON file.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from cat.arguments import PathArg, api_errors
from cat.engine.score_table import ScoreTable
from cat.engine.selection import PoolParams, model_name, pool_information
from cat.pools.loading import as_pool
from irt.estimation.methods import parameter_summary
from irt.mixed import MixedParams
from irt.polytomous import PolytomousParams
from itempool import ItemType, LoadedPool, PoolProtocol

#: θ where the test information curve is shown.
CURVE_THETA = tuple(float(t) for t in range(-3, 4))
#: How many reference subjects (the highest θ first) the summary lists.
TOP_REFERENCES = 5
# The maximum is searched more widely than the curve is shown: a hard pool peaks above 3.
_SEARCH_THETA = np.round(np.arange(-6.0, 6.0 + 1e-9, 0.05), 2)
# θ values per slice: the (θ x items) array of a 30,000-item pool would not fit at once.
_CHUNK = 32


class _Figures(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PoolHeader(_Figures):
    """Which pool: folder, name, version, language, the fitted model, how many items."""

    dir: str
    name: str
    version: str | None
    language: str
    # "3pl" and the like; for scored items their type ("graded") or "mixed"; None: not
    # calibrated.
    model: str | None
    n_items: int
    # A pool of scored items: how many of each type (graded, gpcm, sequential, 2PL, 3PL).
    item_types: dict[str, int] | None = None


class ItemCounts(_Figures):
    """Items per scenario (each row by type, plus ``total``) and per type over the pool.

    Scenarios follow the manifest's order, then any others alphabetically; a scenario
    without items is left out. The keys of a row are the ``ItemType`` values."""

    by_scenario: dict[str, dict[str, int]]
    by_type: dict[str, int]


class ParameterStats(_Figures):
    """Mean, standard deviation, minimum and maximum of one item parameter."""

    mean: float
    sd: float
    min: float
    max: float


class ParameterSummary(_Figures):
    """a, b and c across the pool's items, as read from ``params.csv``."""

    a: ParameterStats
    b: ParameterStats
    c: ParameterStats


class InformationCurve(_Figures):
    """Test information at ``theta`` (``CURVE_THETA``), and its maximum over θ in [-6, 6]."""

    theta: list[float]
    values: list[float]
    max_theta: float
    max_value: float


class ReferenceEntry(_Figures):
    """One reference subject as listed: θ, its SE, observed accuracy (None: unknown)."""

    subject_id: str
    theta: float
    se: float
    accuracy: float | None


class ReferenceSummary(_Figures):
    """How many reference subjects, their range of θ, and the ``TOP_REFERENCES`` highest."""

    count: int
    theta_min: float
    theta_max: float
    top: list[ReferenceEntry]


class FactorLoadings(_Figures):
    """One factor of a multidimensional pool: how many items load on it and their
    slopes' mean and range."""

    factor: str
    n_items: int
    mean: float
    min: float
    max: float


class MultidimensionalSummary(_Figures):
    """A multidimensional pool's model (``mirt_params.csv``): structure, lower
    asymptotes or not, each factor's loadings, and the fit's figures beside the
    unidimensional model's where recorded."""

    structure: str
    guessing: bool
    factors: list[FactorLoadings]
    fit: dict[str, Any] | None = None


class PoolSummary(_Figures):
    """What ``cat pool info`` shows; the parts that need a calibration are None without."""

    pool: PoolHeader
    items: ItemCounts
    parameters: ParameterSummary | None
    information: InformationCurve | None
    reference: ReferenceSummary | None
    multidimensional: MultidimensionalSummary | None = None
    # How the references were asked and graded; None: the built-in way (no record).
    protocol: PoolProtocol | None = None


@api_errors
def summarize_pool(pool: LoadedPool | PathArg) -> PoolSummary:
    """The figures of a pool: loaded (``cat.pools.loading.load_pool``), or its folder."""
    pool = as_pool(pool)
    params = pool.params
    # Counted for a pool of scored items only, as the header has always shown them.
    kinds = (
        None
        if params is None or params.family != "polytomous"
        else dict(sorted(Counter(t.value for t in params.item_types).items()))
    )
    return PoolSummary(
        pool=PoolHeader(
            dir=str(pool.dir),
            name=pool.manifest.name,
            version=pool.manifest.version,
            language=pool.manifest.language,
            model=None if params is None else model_name(params),
            n_items=len(pool.items),
            item_types=kinds,
        ),
        items=count_items(pool),
        parameters=None if params is None else summarize_parameters(params),
        information=None if params is None else information_curve(params),
        reference=summarize_references(pool) if pool.references else None,
        multidimensional=None if pool.mirt is None else summarize_mirt(pool),
        protocol=pool.protocol.spec if pool.protocol.recorded else None,
    )


def summarize_mirt(pool: LoadedPool) -> MultidimensionalSummary:
    """The loadings of each factor of the pool's multidimensional model."""
    mirt = pool.mirt
    assert mirt is not None
    factors = []
    for k, name in enumerate(mirt.factors):
        slopes = mirt.slopes[mirt.pattern[:, k], k]
        factors.append(
            FactorLoadings(
                factor=name,
                n_items=int(slopes.size),
                mean=float(slopes.mean()) if slopes.size else 0.0,
                min=float(slopes.min()) if slopes.size else 0.0,
                max=float(slopes.max()) if slopes.size else 0.0,
            )
        )
    entry = pool.manifest.multidimensional
    return MultidimensionalSummary(
        structure=mirt.structure.value,
        guessing=mirt.guessing,
        factors=factors,
        fit=None if entry is None else entry.fit,
    )


def count_items(pool: LoadedPool) -> ItemCounts:
    """Items per scenario and type (see ``ItemCounts``)."""
    counts = Counter((item.scenario, item.type.value) for item in pool.items)
    order = list(pool.manifest.scenarios) + sorted({s for s, _ in counts})
    by_scenario: dict[str, dict[str, int]] = {}
    for scenario in dict.fromkeys(order):
        row = {t.value: counts[scenario, t.value] for t in ItemType}
        if any(row.values()):
            by_scenario[scenario] = {**row, "total": sum(row.values())}
    kinds = Counter(item.type.value for item in pool.items)
    return ItemCounts(by_scenario=by_scenario, by_type={t.value: kinds[t.value] for t in ItemType})


def summarize_parameters(params: PoolParams) -> ParameterSummary:
    """a, b and c as they are in ``params`` (c is 0 for 1PL and 2PL pools). A scored
    item's b is its location, where its expected score is half its top score
    (``ScoreTable.locations``)."""
    if params.scored:
        return _scored_parameters(params)
    stats = parameter_summary(params)
    return ParameterSummary(
        a=ParameterStats(**stats["a"]),
        b=ParameterStats(**stats["b"]),
        c=ParameterStats(**stats["c"]),
    )


def _scored_parameters(params: PolytomousParams | MixedParams) -> ParameterSummary:
    def stats(values: np.ndarray) -> ParameterStats:
        return ParameterStats(
            mean=float(values.mean()),
            sd=float(values.std()),
            min=float(values.min()),
            max=float(values.max()),
        )

    parts = MixedParams.of(params)  # a continuous item has no lower asymptote
    discrete_c = [parts.discrete.c] if parts.discrete is not None else []
    c = np.concatenate([*discrete_c, np.zeros(len(parts.continuous_ids))])
    return ParameterSummary(
        a=stats(params.a), b=stats(ScoreTable.build(params).locations), c=stats(c)
    )


def information_curve(params: PoolParams) -> InformationCurve:
    """The test information at ``CURVE_THETA`` and where, on a 0.05 grid, it peaks."""
    chunks = [_SEARCH_THETA[k : k + _CHUNK] for k in range(0, _SEARCH_THETA.size, _CHUNK)]
    values = np.concatenate([pool_information(params, theta) for theta in chunks])
    at = {float(t): float(v) for t, v in zip(_SEARCH_THETA, values, strict=True)}
    peak = int(np.argmax(values))
    return InformationCurve(
        theta=list(CURVE_THETA),
        values=[at[t] for t in CURVE_THETA],
        max_theta=float(_SEARCH_THETA[peak]),
        max_value=float(values[peak]),
    )


def summarize_references(pool: LoadedPool) -> ReferenceSummary:
    """The pool's reference subjects, highest θ first; the pool must have some."""
    rows = sorted(pool.references, key=lambda r: r.theta, reverse=True)
    return ReferenceSummary(
        count=len(rows),
        theta_min=rows[-1].theta,
        theta_max=rows[0].theta,
        top=[
            ReferenceEntry(subject_id=r.subject_id, theta=r.theta, se=r.se, accuracy=r.accuracy)
            for r in rows[:TOP_REFERENCES]
        ],
    )
