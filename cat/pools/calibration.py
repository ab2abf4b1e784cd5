"""Write a calibration into an item-pool folder: params.csv, reference.jsonl, pool.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cat.designs.low_rank import LowRankModel
from cat.errors import CatError
from cat.pools.reference_models import low_rank_entry
from irt.mirt_model import MirtParams
from irt.mixed import MixedParams
from irt.models import ItemParams
from irt.polytomous import PolytomousParams
from irt.polytomous_responses import PolytomousResponses
from irt.responses import ResponseMatrix
from irt.scoring import Abilities
from itempool import (
    CONTINUOUS_PARAMS,
    LOW_RANK,
    MIRT_PARAMS,
    REFERENCE_ANSWERS,
    PoolFormatError,
    items_file,
    write_low_rank,
    write_reference_answers,
)
from itempool.atomic import write_text_atomic
from itempool.formats.continuous_params import write_continuous_params
from itempool.formats.mirt_params import write_mirt_params
from itempool.formats.params import write_params
from itempool.formats.polytomous_params import write_polytomous_params
from itempool.item_files import read_text as read_items_text
from itempool.problems import split_lines


def reference_rows(responses: ResponseMatrix, abilities: Abilities) -> list[dict[str, Any]]:
    """One row per calibration subject: the models new ones are ranked against."""
    accuracy = responses.accuracy()
    return [
        {
            "subject_id": sid,
            "theta": float(abilities.theta[k]),
            "se": float(abilities.se[k]),
            "accuracy": None if accuracy[k] != accuracy[k] else float(accuracy[k]),
            "n_answered": int(abilities.n_answered[k]),
        }
        for k, sid in enumerate(responses.subject_ids)
    ]


def write_jsonl_rows(rows: list[dict[str, Any]], path: Path) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def record_calibration(
    pool_dir: Path,
    params: ItemParams | PolytomousParams | MixedParams,
    reference: list[dict[str, Any]],
    provenance: dict[str, Any],
    prediction_errors: dict[str, Any] | None = None,
    responses: ResponseMatrix | PolytomousResponses | None = None,
    design_errors: dict[str, Any] | None = None,
    low_rank: LowRankModel | None = None,
) -> None:
    """Store a calibration in ``pool_dir`` (which must hold a ``pool.json``).

    Items of the pool that the responses do not cover are reported, not silently kept
    with stale parameters: the new ``params.csv`` replaces the old one whole. The
    references' cross-fitted ``prediction_errors`` (the IRT design's) and
    ``design_errors`` (every design's) are stored when given and otherwise dropped, since
    they described the earlier calibration; so are the references' ``responses``
    (``reference_answers.csv.gz``), which the reference designs weigh answers by, and
    their ``low_rank`` model (``low_rank.csv``, its prior in pool.json).

    A pool of scored items (``PolytomousParams``) gets params.csv in their layout and
    its references' scores; its manifest names no ``model`` (the item types are in
    params.csv, the model asked for in ``calibration``). A mixed pool (``MixedParams``)
    also gets its continuous items' ``continuous_params.csv``.
    """
    manifest_path = pool_dir / "pool.json"
    if not manifest_path.is_file():
        raise CatError(f"{pool_dir} is not an item pool: it has no pool.json")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise CatError(f"{manifest_path}: cannot read the manifest ({exc})") from exc
    if not isinstance(manifest, dict):
        raise CatError(f"{manifest_path}: the manifest must be a JSON object")
    pool_items = _pool_item_ids(pool_dir)
    if pool_items is not None:
        unknown = [i for i in params.item_ids if i not in pool_items]
        if unknown:
            raise CatError(
                f"{len(unknown)} calibrated item(s) are not in {items_file(pool_dir)} "
                f"(e.g. {', '.join(unknown[:3])})"
            )
    (pool_dir / CONTINUOUS_PARAMS).unlink(missing_ok=True)
    model = _write_tables(params, pool_dir)
    if model is None:
        manifest.pop("model", None)
    else:
        manifest["model"] = model
    write_jsonl_rows(reference, pool_dir / "reference.jsonl")
    manifest["calibration"] = provenance
    # Errors measured on an earlier calibration do not describe this one.
    manifest.pop("prediction_errors", None)
    manifest.pop("design_errors", None)
    manifest.pop("low_rank", None)
    # A multidimensional model of earlier answers would no longer match these.
    if manifest.pop("multidimensional", None) is not None:
        (pool_dir / MIRT_PARAMS).unlink(missing_ok=True)
    if prediction_errors is not None:
        manifest["prediction_errors"] = prediction_errors
    if design_errors is not None:
        manifest["design_errors"] = design_errors
    for stale in (REFERENCE_ANSWERS, LOW_RANK):
        (pool_dir / stale).unlink(missing_ok=True)
    if responses is not None:
        try:
            write_reference_answers(responses, pool_dir)
        except PoolFormatError as exc:
            raise CatError(str(exc)) from exc
    if low_rank is not None:
        write_low_rank(pool_dir, params.item_ids, low_rank.intercepts, low_rank.loadings)
        manifest["low_rank"] = low_rank_entry(low_rank)
    # Atomic: a crash mid-write must not leave a truncated manifest behind.
    write_text_atomic(manifest_path, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")


def _write_tables(params: ItemParams | PolytomousParams | MixedParams, folder: Path) -> str | None:
    """Write the parameter file(s) of ``params``'s family into the pool ``folder``, and
    return the manifest's ``model``: a 0/1 pool's, None for a pool of scored items (its
    item types are in params.csv)."""
    if params.family == "binary":
        write_params(params, folder / "params.csv")
        return params.model.value
    if params.family == "polytomous":
        write_polytomous_params(params, folder / "params.csv")
        return None
    # A mixed pool: its scored items in params.csv (none, no file), its continuous items
    # in continuous_params.csv.
    if params.discrete is not None:
        write_polytomous_params(params.discrete, folder / "params.csv")
    else:
        (folder / "params.csv").unlink(missing_ok=True)
    if params.continuous is not None:
        write_continuous_params(params.continuous, folder / CONTINUOUS_PARAMS)
    return None


def record_multidimensional(pool_dir: Path, params: MirtParams, entry: dict[str, Any]) -> None:
    """Store a multidimensional model in ``pool_dir`` beside its unidimensional
    calibration: ``mirt_params.csv`` and ``pool.json``'s ``multidimensional`` entry."""
    manifest_path = pool_dir / "pool.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    write_mirt_params(params, pool_dir / MIRT_PARAMS)
    manifest["multidimensional"] = entry
    # Atomic: a crash mid-write must not leave a truncated manifest behind.
    write_text_atomic(manifest_path, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")


def _pool_item_ids(pool_dir: Path) -> set[str] | None:
    try:
        path = items_file(pool_dir)
    except PoolFormatError as exc:
        raise CatError(str(exc)) from exc
    if not path.is_file():
        return None
    try:
        lines = split_lines(read_items_text(path))
    except (OSError, UnicodeError) as exc:
        raise CatError(f"{path}: cannot read it ({exc})") from exc
    ids: set[str] = set()
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            ids.add(str(json.loads(line)["id"]))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise CatError(f"{path} line {line_no}: not an item with an 'id'") from exc
    return ids
