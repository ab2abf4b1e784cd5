"""``cat recalibrate`` as one call: read the responses, recalibrate, write the new version.

``recalibrate_pool`` reads the pool and the new response files, recalibrates
(``cat.pools.recalibration.recalibrate``), and writes a new pool folder: the manifest
with the next version and the old one's calibration in its ``history``, the old items
followed by the new ones (taken from ``items``), ``params.csv`` and ``reference.jsonl``,
and the provenance of the recalibration in ``pool.json``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from cat import arguments as check
from cat.arguments import PathArg, api_errors
from cat.errors import CatError
from cat.pools.calibration import record_calibration
from cat.pools.loading import as_pool, binary_params
from cat.pools.recalibration import Method, Recalibration, merge_responses, recalibrate
from cat.provenance import package_version, utc_now
from itempool import MANIFEST, LoadedPool, PoolItem, items_file
from itempool.formats.responses import read_responses
from itempool.item_files import read_text, write_text
from itempool.problems import describe_errors, split_lines


class _Result(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LinkingConstants(_Result):
    """``--method concurrent``: θ_pool = A θ_new + B, from linking over shared items."""

    A: float
    B: float
    method: str
    n_anchors: int


class NewGroupScale(_Result):
    """``--method anchor``: the new subjects' mean and SD of θ on the pool's scale."""

    latent_mean: float | None
    latent_sd: float | None


class RecalibratedPool(_Result):
    """What ``recalibrate_pool`` wrote: the new version and how it was made."""

    out: str
    version: str
    previous_version: str | None
    method: Method
    n_subjects: int  # in the new responses
    n_items: int  # in the new version
    new_items: tuple[str, ...]
    thin_items: tuple[str, ...]  # new items answered by fewer than min_responses
    n_references: int
    scale: LinkingConstants | NewGroupScale


@api_errors
def recalibrate_pool(
    responses: PathArg | Sequence[PathArg],
    pool_dir: LoadedPool | PathArg,
    out: PathArg,
    method: Method | str = Method.ANCHOR,
    items: PathArg | None = None,
    min_responses: int = 30,
) -> RecalibratedPool:
    """Recalibrate the pool in ``pool_dir`` (or the pool loaded from it) with the
    response files ``responses`` (one path or several) and write the new version to
    ``out`` (a new or empty folder, created with its parents). Paths may be str or
    ``os.PathLike``.

    Items the responses hold that the pool does not are new: their items.jsonl lines
    must be in ``items``. ``CatError`` before anything is written if the input is wrong.
    """
    files = check.as_paths(responses, "responses")
    out = check.as_path(out, "out")
    items = check.as_optional_path(items, "items")
    min_responses = check.whole(min_responses, "min_responses", 1)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CatError(f"{out} exists and is not empty: choose a new folder for the new version")
    pool = as_pool(pool_dir, "pool_dir")
    pool_dir = pool.dir
    if pool.params is not None:
        binary_params(pool, "cat recalibrate")  # before reading scores as 0/1 answers
    matrix = merge_responses([read_responses(p) for p in files])
    result = recalibrate(pool, matrix, method, min_responses)
    new_lines = new_item_lines(items, result.new_items)
    manifest = json.loads((pool_dir / MANIFEST).read_text(encoding="utf-8-sig"))
    previous = {"version": manifest.get("version"), "calibration": manifest.get("calibration")}
    manifest["version"] = next_version(manifest.get("version"))
    manifest["history"] = [*manifest.get("history", []), previous]
    added = _new_scenarios(manifest, new_lines)
    if added:
        # A new item may open a scenario: list it, or the new pool would fail its check.
        manifest["scenarios"] = [*manifest.get("scenarios", []), *added]
    out.mkdir(parents=True, exist_ok=True)
    (out / MANIFEST).write_text(
        json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    # The new version keeps the old one's form: items.jsonl, or items.jsonl.gz.
    old_path = items_file(pool_dir)
    old_items = read_text(old_path)
    if old_items and not old_items.endswith("\n"):  # else the first new item joins the last
        old_items += "\n"
    write_text(out / old_path.name, old_items + "".join(line + "\n" for line in new_lines))
    provenance = {
        "method": f"recalibration ({result.method})",
        "from": {"pool": str(pool_dir), "version": previous["version"]},
        "responses": [str(p) for p in files],
        "n_subjects": matrix.n_subjects,
        "scale": result.constants(),
        "new_items": len(result.new_items),
        "new_scenarios": added,
        "thin_items": list(result.thin_items),
        "min_responses": min_responses,
        "package_version": package_version(),
        "date": utc_now(),
    }
    record_calibration(out, result.params, result.references, provenance)
    return RecalibratedPool(
        out=str(out),
        version=manifest["version"],
        previous_version=None if previous["version"] is None else str(previous["version"]),
        method=result.method,
        n_subjects=matrix.n_subjects,
        n_items=result.params.n_items,
        new_items=result.new_items,
        thin_items=result.thin_items,
        n_references=len(result.references),
        scale=_scale(result),
    )


def new_item_lines(path: Path | None, new_items: tuple[str, ...]) -> list[str]:
    """The items.jsonl lines of ``new_items`` from the file ``path``, each checked, in
    the file's order; ``CatError`` naming the file and line of a bad item."""
    if not new_items:
        return []
    if path is None:
        count = f"{len(new_items)} item{'s are' if len(new_items) != 1 else ' is'}"
        raise CatError(
            f"{count} not in the pool (e.g. {new_items[0]}): "
            "give their questions with --items FILE.jsonl"
        )
    try:
        lines = split_lines(Path(path).read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeError) as exc:
        raise CatError(f"cannot read {path} ({exc})") from exc
    found: dict[str, str] = {}
    for n, line in enumerate(lines, start=1):
        if line.strip():
            try:
                item = PoolItem.model_validate_json(line)
            except ValidationError as exc:
                raise CatError(
                    f"{path.name}:{n}: not a valid item ({describe_errors(exc)})"
                ) from exc
            found[item.id] = item.model_dump_json()
    missing = [i for i in new_items if i not in found]
    if missing:
        count = f"{len(missing)} new item{'s' * (len(missing) != 1)}"
        raise CatError(f"{path.name} lacks {count} (e.g. {missing[0]})")
    wanted = set(new_items)
    return [line for item_id, line in found.items() if item_id in wanted]


def _new_scenarios(manifest: dict[str, Any], lines: list[str]) -> list[str]:
    """The scenarios of the new items that the manifest does not list yet, in order."""
    # A scenario is listed by its id, or as an object with one.
    listed = {e.get("id") if isinstance(e, dict) else e for e in manifest.get("scenarios") or []}
    added: list[str] = []
    for line in lines:
        scenario = json.loads(line).get("scenario")
        if scenario and scenario not in listed and scenario not in added:
            added.append(scenario)
    return added if manifest.get("scenarios") else []


def next_version(version: Any) -> str:
    """The version after ``version``: "2" after "1" (or none), "v2.1" after "v2"."""
    text = str(version) if version is not None else "1"
    return str(int(text) + 1) if text.isdigit() else f"{text}.1"


def _scale(result: Recalibration) -> LinkingConstants | NewGroupScale:
    if result.linking is not None:
        link = result.linking
        return LinkingConstants(A=link.A, B=link.B, method=link.method, n_anchors=link.n_anchors)
    return NewGroupScale(latent_mean=result.latent_mean, latent_sd=result.latent_sd)
