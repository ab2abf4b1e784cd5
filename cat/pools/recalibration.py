"""Recalibrate a pool with new responses without moving its scale.

Two ways (DESIGN.md, issue 6):

- ``anchor``: the pool's items keep their parameters; items new to the pool and the new
  subjects are estimated on the pool's scale (``irt.linking.anchored``);
- ``concurrent``: every item is re-estimated from the new responses on their own scale,
  which Stocking–Lord linking over the items shared with the pool then moves onto the
  pool's scale (``irt.linking.scale``); the linking constants are reported.

Pool items the new responses do not cover keep their old parameters either way.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from cat.errors import CatError
from cat.pools.loading import binary_params
from cat.pools.names import Method as Method
from irt.em import EMCalibrator
from irt.errors import ConvergenceWarning
from irt.linking.anchored import calibrate_with_anchors
from irt.linking.scale import Linking, stocking_lord, transform
from irt.models import ItemParams
from irt.responses import MISSING, ResponseMatrix
from irt.scoring import AbilityMethod, score_abilities
from itempool import LoadedPool

#: The methods' names, as ``--method`` takes them.
METHODS = tuple(m.value for m in Method)


@dataclass(frozen=True)
class Recalibration:
    """The new pool's parameters (pool items first, then new ones), what was done."""

    params: ItemParams
    method: Method
    new_items: tuple[str, ...]
    thin_items: tuple[str, ...]  # new items answered by fewer than the minimum
    references: list[dict[str, Any]]
    linking: Linking | None = None
    latent_mean: float | None = None
    latent_sd: float | None = None

    def constants(self) -> dict[str, Any]:
        """What moved the new calibration onto the pool's scale, for the provenance."""
        if self.linking is not None:
            link = self.linking
            return {"A": link.A, "B": link.B, "method": link.method, "n_anchors": link.n_anchors}
        return {"latent_mean": self.latent_mean, "latent_sd": self.latent_sd}


def merge_responses(matrices: list[ResponseMatrix]) -> ResponseMatrix:
    """One matrix from several: items in order of first appearance, subjects stacked
    (a subject in two files is an error)."""
    if not matrices:
        raise CatError("give at least one response file")
    items: dict[str, int] = {}
    for m in matrices:
        for item in m.item_ids:
            items.setdefault(item, len(items))
    subjects = [s for m in matrices for s in m.subject_ids]
    seen: set[str] = set()
    for s in subjects:
        if s in seen:
            raise CatError(f"subject {s!r} appears in more than one response file")
        seen.add(s)
    values = np.full((len(subjects), len(items)), MISSING, dtype=np.int8)
    row = 0
    for m in matrices:
        cols = [items[i] for i in m.item_ids]
        values[row : row + m.n_subjects][:, cols] = m.values
        row += m.n_subjects
    return ResponseMatrix(subject_ids=tuple(subjects), item_ids=tuple(items), values=values)


def recalibrate(
    pool: LoadedPool,
    responses: ResponseMatrix,
    method: Method | str = Method.ANCHOR,
    min_responses: int = 30,
) -> Recalibration:
    """Recalibrate ``pool`` with ``responses`` by ``method``; see the module notes."""
    if pool.params is None:
        raise CatError(f"pool {pool.dir} has no parameters to keep the scale of")
    if method not in METHODS:
        raise CatError(f"unknown method {method!r}; choose from {', '.join(METHODS)}")
    method = Method(method)
    old = binary_params(pool, "cat recalibrate")
    in_pool = set(old.item_ids)
    shared = [i for i in responses.item_ids if i in in_pool]
    if len(shared) < 2:
        raise CatError(
            f"the responses share {len(shared)} items with the pool; at least 2 are needed"
        )
    new_items = tuple(i for i in responses.item_ids if i not in in_pool)
    counts = responses.observed.sum(axis=0)
    column = {item: j for j, item in enumerate(responses.item_ids)}
    thin = tuple(i for i in new_items if counts[column[i]] < min_responses)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if method is Method.ANCHOR:
            fit = calibrate_with_anchors(responses, old, old.model)
            fitted, link, mean, sd = fit.params, None, fit.latent_mean, fit.latent_sd
        else:
            own = EMCalibrator(old.model).fit(responses).params_
            link = stocking_lord(old, own)
            fitted, mean, sd = transform(own, link.A, link.B), None, None
    params = _combine(old, fitted, new_items)
    references = _references(pool, responses, params)
    return Recalibration(params, method, new_items, thin, references, link, mean, sd)


def _combine(old: ItemParams, fitted: ItemParams, new_items: tuple[str, ...]) -> ItemParams:
    """Pool items (re-estimated where the responses cover them), then the new items."""
    where = {item: j for j, item in enumerate(fitted.item_ids)}
    order = list(old.item_ids) + list(new_items)

    def column(name: str) -> np.ndarray:
        old_values = getattr(old, name)
        new_values = getattr(fitted, name)
        if old_values is None and new_values is None:
            return np.full(len(order), np.nan)
        out = []
        for k, item in enumerate(order):
            if item in where and new_values is not None:
                out.append(new_values[where[item]])
            elif k < old.n_items and old_values is not None:
                out.append(old_values[k])
            else:
                out.append(np.nan)
        return np.array(out, dtype=np.float64)

    return replace(
        old,
        item_ids=tuple(order),
        a=column("a"),
        b=column("b"),
        c=column("c"),
        d=column("d"),
        se_a=column("se_a"),
        se_b=column("se_b"),
        se_c=column("se_c"),
    )


def _references(
    pool: LoadedPool, responses: ResponseMatrix, params: ItemParams
) -> list[dict[str, Any]]:
    """The pool's references, re-scored where the responses hold their answers, and
    every new subject, scored (EAP) on the final parameters."""
    wide = responses.on_items(params.item_ids)
    abilities = score_abilities(wide, params, AbilityMethod.EAP)
    accuracy = responses.accuracy()
    scored = {
        sid: {
            "subject_id": sid,
            "theta": float(abilities.theta[k]),
            "se": float(abilities.se[k]),
            "accuracy": None if np.isnan(accuracy[k]) else float(accuracy[k]),
            "n_answered": int(abilities.n_answered[k]),
        }
        for k, sid in enumerate(responses.subject_ids)
    }
    rows = [scored.pop(r.subject_id, r.model_dump()) for r in pool.references]
    return rows + list(scored.values())
