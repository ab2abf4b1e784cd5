"""What changed between two versions of a pool: items that moved beyond their standard
errors, items added or dropped, and how the reference subjects' θ changed."""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict

from cat.arguments import PathArg, api_errors
from cat.errors import CatError
from cat.pools.loading import as_pool, binary_params
from itempool import LoadedPool

#: |z| beyond this marks an item as moved (two-sided 5% if the SEs were exact).
Z_MOVED = 1.96


class _Figures(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PoolSide(_Figures):
    """One of the two versions compared: its name, version and number of items."""

    name: str
    version: str | None
    n_items: int


class ItemChange(_Figures):
    """One item in both versions: its parameters then and now, and b's z-score."""

    item_id: str
    a_old: float
    a_new: float
    b_old: float
    b_new: float
    z_b: float  # (b_new − b_old) / √(se_old² + se_new²); NaN without standard errors


class ItemDiff(_Figures):
    """Items in both versions, added and dropped; those whose b moved beyond their
    standard errors (largest |z| first); the mean change of b over the shared items."""

    shared: int
    added: list[str]
    dropped: list[str]
    moved: list[ItemChange]
    no_standard_errors: int  # shared items whose z cannot be computed
    mean_b_shift: float | None


class ThetaChange(_Figures):
    """How far one reference subject's θ moved from the old version to the new."""

    subject_id: str
    change: float


class ReferenceDiff(_Figures):
    """Reference subjects in both versions, those added, and how their θ changed."""

    shared: int
    added: list[str]
    max_abs_theta_change: float | None
    mean_theta_change: float | None
    largest: list[ThetaChange]  # the five largest changes


class PoolDiff(_Figures):
    """What ``cat pool diff`` shows; ``model_dump(mode="json")`` is its ``--json`` file."""

    old: PoolSide
    new: PoolSide
    items: ItemDiff
    references: ReferenceDiff
    z_moved: float


@api_errors
def diff_pools(old: LoadedPool | PathArg, new: LoadedPool | PathArg) -> PoolDiff:
    """Compare two calibrated versions of a pool, each loaded or its folder (``CatError``
    if either has no params)."""
    old, new = as_pool(old, "old"), as_pool(new, "new")
    if old.params is None or new.params is None:
        raise CatError("both pools need parameters (params.csv) to be compared")
    po, pn = binary_params(old, "cat pool diff"), binary_params(new, "cat pool diff")
    index_new = {item: j for j, item in enumerate(pn.item_ids)}
    changes: list[ItemChange] = []
    for k, item in enumerate(po.item_ids):
        j = index_new.get(item)
        if j is None:
            continue
        se_old = po.se_b[k] if po.se_b is not None else np.nan
        se_new = pn.se_b[j] if pn.se_b is not None else np.nan
        spread = float(np.sqrt(np.nansum([se_old**2, se_new**2])))
        diff = float(pn.b[j] - po.b[k])
        z = diff / spread if spread > 0 else (0.0 if diff == 0 else float("nan"))
        changes.append(
            ItemChange(
                item_id=item,
                a_old=float(po.a[k]),
                a_new=float(pn.a[j]),
                b_old=float(po.b[k]),
                b_new=float(pn.b[j]),
                z_b=z,
            )
        )
    moved = sorted(
        (c for c in changes if np.isfinite(c.z_b) and abs(c.z_b) > Z_MOVED),
        key=lambda c: -abs(c.z_b),
    )
    ref_old = {r.subject_id: r.theta for r in old.references}
    shifts = {
        r.subject_id: r.theta - ref_old[r.subject_id]
        for r in new.references
        if r.subject_id in ref_old
    }
    values = np.array(list(shifts.values())) if shifts else np.zeros(0)
    old_ids = set(po.item_ids)
    return PoolDiff(
        old=PoolSide(name=old.manifest.name, version=old.manifest.version, n_items=po.n_items),
        new=PoolSide(name=new.manifest.name, version=new.manifest.version, n_items=pn.n_items),
        items=ItemDiff(
            shared=len(changes),
            added=[i for i in pn.item_ids if i not in old_ids],
            dropped=[i for i in po.item_ids if i not in index_new],
            moved=moved,
            no_standard_errors=sum(1 for c in changes if not np.isfinite(c.z_b)),
            mean_b_shift=float(np.mean([c.b_new - c.b_old for c in changes])) if changes else None,
        ),
        references=ReferenceDiff(
            shared=len(shifts),
            added=[r.subject_id for r in new.references if r.subject_id not in ref_old],
            max_abs_theta_change=float(np.abs(values).max()) if values.size else None,
            mean_theta_change=float(values.mean()) if values.size else None,
            largest=[
                ThetaChange(subject_id=s, change=float(v))
                for s, v in sorted(shifts.items(), key=lambda kv: -abs(kv[1]))[:5]
            ],
        ),
        z_moved=Z_MOVED,
    )
