"""``cat recalibrate``: a new version of a pool, with new responses, on the old scale."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from cat.cli.common import fail, handle_errors, package_version, stdout
from cat.pool_calibration import record_calibration
from cat.pool_format import load_pool
from cat.recalibration import METHODS, merge_responses, recalibrate
from irt.readers import read_responses
from synth.items import PoolItem


@handle_errors
def recalibrate_pool(
    responses: list[Path] = typer.Argument(..., help="New response matrices (.jsonl / .csv)."),
    pool_dir: Path = typer.Option(..., "--pool", help="The calibrated pool to start from."),
    out: Path = typer.Option(..., "--out", help="Folder for the new version of the pool."),
    method: str = typer.Option(
        "anchor", "--method", help="anchor (pool items fixed) or concurrent (refit + link)."
    ),
    items: Path | None = typer.Option(
        None, "--items", help="items.jsonl lines of the items new to the pool."
    ),
    min_responses: int = typer.Option(
        30, "--min-responses", min=1, help="Flag new items answered by fewer subjects."
    ),
) -> None:
    """Recalibrate a pool with new responses (new models, new items) while keeping its
    θ scale, so that earlier results stay comparable. Writes a new pool version to
    --out with the provenance chain in pool.json.

    --method anchor keeps every pool item's parameters and estimates the new items and
    the new subjects on the pool's scale; --method concurrent refits every item on the
    new data and moves the result onto the pool's scale by Stocking-Lord linking (the
    constants are reported).

    Example:

      cat recalibrate new-models.jsonl --pool item_pools/demo --items new-items.jsonl --out demo-v2
    """
    if method not in METHODS:
        raise fail(f"--method takes {', '.join(METHODS)}, got {method!r}")
    if out.exists() and any(out.iterdir()):
        raise fail(f"{out} exists and is not empty: choose a new folder for the new version")
    pool = load_pool(pool_dir)
    matrix = merge_responses([read_responses(p) for p in responses])
    result = recalibrate(pool, matrix, method, min_responses)
    new_lines = _new_item_lines(items, result.new_items)
    out.mkdir(parents=True, exist_ok=True)
    manifest = json.loads((pool_dir / "pool.json").read_text(encoding="utf-8"))
    previous = {"version": manifest.get("version"), "calibration": manifest.get("calibration")}
    manifest["version"] = _next_version(manifest.get("version"))
    manifest["history"] = [*manifest.get("history", []), previous]
    (out / "pool.json").write_text(
        json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    old_items = (pool_dir / "items.jsonl").read_text(encoding="utf-8")
    (out / "items.jsonl").write_text(
        old_items + "".join(line + "\n" for line in new_lines), encoding="utf-8"
    )
    provenance = {
        "method": f"recalibration ({method})",
        "from": {"pool": str(pool_dir), "version": previous["version"]},
        "responses": [str(p) for p in responses],
        "n_subjects": matrix.n_subjects,
        "scale": result.constants(),
        "new_items": len(result.new_items),
        "thin_items": list(result.thin_items),
        "min_responses": min_responses,
        "package_version": package_version(),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    record_calibration(out, result.params, result.references, provenance)
    _print(result.constants(), method, result, manifest["version"], out)


def _new_item_lines(path: Path | None, new_items: tuple[str, ...]) -> list[str]:
    """The items.jsonl lines of the new items, each checked, in the responses' order."""
    if not new_items:
        return []
    if path is None:
        raise fail(
            f"{len(new_items)} items are not in the pool (e.g. {new_items[0]}): "
            "give their questions with --items FILE.jsonl"
        )
    found: dict[str, str] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                item = PoolItem.model_validate_json(line)
            except ValueError as exc:
                raise fail(
                    f"{path.name}:{n}: not a valid item ({str(exc).splitlines()[0]})"
                ) from exc
            found[item.id] = item.model_dump_json()
    missing = [i for i in new_items if i not in found]
    if missing:
        raise fail(f"{path.name} lacks {len(missing)} new items (e.g. {missing[0]})")
    return [found[i] for i in new_items]


def _next_version(version: Any) -> str:
    text = str(version) if version is not None else "1"
    return str(int(text) + 1) if text.isdigit() else f"{text}.1"


def _print(constants: dict[str, Any], method: str, result: Any, version: str, out: Path) -> None:
    table = Table(title=f"Recalibration ({method}) → version {version}", show_header=False)
    table.add_column(style="bold")
    table.add_column()
    if "A" in constants:
        table.add_row(
            "linking",
            f"θ_old = {constants['A']:.4f} θ_new {constants['B']:+.4f} "
            f"(Stocking-Lord, {constants['n_anchors']} anchors)",
        )
    else:
        table.add_row(
            "new group",
            f"mean {constants['latent_mean']:+.3f}, SD {constants['latent_sd']:.3f}"
            " on the pool's scale",
        )
    table.add_row("items", f"{result.params.n_items} ({len(result.new_items)} new)")
    thin = ", ".join(result.thin_items[:5]) + (" …" if len(result.thin_items) > 5 else "")
    table.add_row("thinly answered new items", f"{len(result.thin_items)} {thin}".strip())
    table.add_row("reference subjects", str(len(result.references)))
    stdout.print(table)
    stdout.print(f"new pool written to {out}")
