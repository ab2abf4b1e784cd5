"""What ``cat pool fit`` reports: pydantic models whose ``model_dump(mode="json")`` is
the file ``--out`` writes (scripts read its keys), and ``lay_out``, which fills them from
what the checks of ``cat.pools.fit_checks`` found."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from pydantic import BaseModel, ConfigDict

from cat.pools.fit_checks import REASONS, FitSettings, ItemFindings, ItemFlag, Reason
from cat.pools.loading import binary_params
from irt.fit.items import ItemFit
from irt.linking.drift import DriftTest
from irt.responses import ResponseMatrix
from irt.types import FloatArray
from itempool import LoadedPool

#: Above this median SE of θ the fit test's "θ known" premise is strained. It held on
#: simulated short tests (1,000 subjects x 100 items, median SE 0.25: 4.2% of fitting
#: items below p = 0.05 over nine pools, from 2% to 7% per pool), but real short tests
#: are better served by summed-score statistics (S-X², Orlando & Thissen 2000).
IMPRECISE_THETA_SE = 0.2

_FROZEN = ConfigDict(extra="forbid", frozen=True)


class PoolRef(BaseModel):
    """Which pool was checked."""

    model_config = _FROZEN

    name: str
    version: str | None
    dir: str


class SettingsUsed(BaseModel):
    """The ``FitSettings`` of the run, and whether chosen options were given."""

    model_config = _FROZEN

    alpha: float
    correction: str
    replicates: int
    seed: int
    min_responses: int
    choices: bool


class DriftSummary(BaseModel):
    """The drift test against earlier responses (``--baseline``)."""

    model_config = _FROZEN

    baseline_subjects: int
    tested: int
    scored_on_items: int  # the items the final θ was scored on: those that did not drift


class ItemRow(BaseModel):
    """One pool item: its parameters, fit statistics (None where not tested) and flags."""

    model_config = _FROZEN

    item_id: str
    n: int
    a: float
    b: float
    c: float
    outfit: float | None
    infit: float | None
    z: float | None
    p: float | None
    p_adjusted: float | None
    r_theta: float | None
    flags: list[ItemFlag]


class ItemRowWithDrift(ItemRow):
    """An ``ItemRow`` of a run with a baseline: b in each period and the drift test."""

    b_earlier: float
    b_later: float
    drift_z: float | None
    drift_p_adjusted: float | None


class PoolFitResult(BaseModel):
    """Everything ``check_pool_fit`` found: settings, method, counts per reason, and one
    row per pool item (``ItemRowWithDrift`` rows when a baseline was given)."""

    model_config = _FROZEN

    pool: PoolRef
    subjects: int
    theta_range: tuple[float, float]
    theta_median_se: float
    warning: str | None
    items: int
    items_tested: int
    items_not_in_pool: int
    settings: SettingsUsed
    method: str
    share_p_below_alpha: float | None
    flag_counts: dict[Reason, int]
    flagged: int
    drift: DriftSummary | None
    item_rows: list[ItemRowWithDrift | ItemRow]


class PoolFitReport(PoolFitResult):
    """A ``PoolFitResult`` with where it came from: what ``cat pool fit --out`` writes."""

    package_version: str
    date: str
    responses: list[str]
    baseline: list[str] | None


@dataclass(frozen=True)
class FitFindings:
    """What ``check_pool_fit`` found, for ``lay_out``."""

    wide: ResponseMatrix
    theta: FloatArray
    theta_se: FloatArray
    fit: ItemFit
    p_fit: FloatArray
    r: FloatArray
    items: list[ItemFindings]
    ignored: list[str]
    drift: DriftTest | None
    baseline_subjects: int
    choices_used: bool


def _num(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _item_rows(pool: LoadedPool, found: FitFindings) -> list[ItemRowWithDrift | ItemRow]:
    params = binary_params(pool, "cat pool fit")
    fit, drift = found.fit, found.drift
    rows: list[ItemRowWithDrift | ItemRow] = []
    for j, item_id in enumerate(params.item_ids):
        figures: dict[str, object] = {
            "item_id": item_id,
            "n": int(fit.n_responses[j]),
            "a": float(params.a[j]),
            "b": float(params.b[j]),
            "c": float(params.c[j]),
            "outfit": _num(fit.outfit[j]),
            "infit": _num(fit.infit[j]),
            "z": _num(fit.z[j]),
            "p": _num(fit.p_value[j]),
            "p_adjusted": _num(found.p_fit[j]),
            "r_theta": _num(found.r[j]),
            "flags": found.items[j].flags,
        }
        row: ItemRow
        if drift is None:
            row = ItemRow(**figures)
        else:
            row = ItemRowWithDrift(
                **figures,
                b_earlier=float(drift.b_earlier[j]),
                b_later=float(drift.b_later[j]),
                drift_z=_num(drift.z[j]),
                drift_p_adjusted=_num(drift.p_adjusted[j]),
            )
        rows.append(row)
    return rows


def lay_out(pool: LoadedPool, found: FitFindings, settings: FitSettings) -> PoolFitResult:
    """The report of a run of the checks on ``pool``."""
    fit, drift = found.fit, found.drift
    rows = _item_rows(pool, found)
    counts: dict[Reason, int] = dict.fromkeys(REASONS, 0)
    for row in rows:
        for reason in {f.reason for f in row.flags}:
            counts[reason] += 1
    tested = np.isfinite(fit.p_value)
    median_se = float(np.median(found.theta_se))
    return PoolFitResult(
        pool=PoolRef(name=pool.manifest.name, version=pool.manifest.version, dir=str(pool.dir)),
        subjects=found.wide.n_subjects,
        theta_range=(float(found.theta.min()), float(found.theta.max())),
        theta_median_se=median_se,
        warning=None
        if median_se <= IMPRECISE_THETA_SE
        else (
            f"theta is imprecise (median SE {median_se:.2f} > {IMPRECISE_THETA_SE}): the fit "
            "test takes theta as known, which suits long tests; on a short test read its "
            "p-values with care"
        ),
        items=len(rows),
        items_tested=int(tested.sum()),
        items_not_in_pool=len(found.ignored),
        settings=SettingsUsed(**asdict(settings), choices=found.choices_used),
        method=(
            "grouped chi-square (Yen's Q1 at known theta, cube root) of each item's curve "
            "refitted at the subjects' EAP theta, against "
            f"{settings.replicates} parametric-bootstrap replicates per item "
            "(Student t tail); one-sided p, "
            f"{'Benjamini-Hochberg' if settings.correction == 'bh' else 'Holm'} adjusted"
        ),
        share_p_below_alpha=float(np.mean(fit.p_value[tested] < settings.alpha))
        if tested.any()
        else None,
        flag_counts=counts,
        flagged=sum(1 for row in rows if row.flags),
        drift=None
        if drift is None
        else DriftSummary(
            baseline_subjects=found.baseline_subjects,
            tested=int(drift.tested.sum()),
            scored_on_items=drift.scored_on_items,
        ),
        item_rows=rows,
    )
