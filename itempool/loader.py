"""The one strict reader of a pool folder (DESIGN.md, "Item pool").

A pool is ``pool.json`` (manifest) and ``items.jsonl`` (questions; or ``items.jsonl.gz``,
the same gzipped, ``itempool.item_files``), plus, once
calibrated, ``params.csv`` (item parameters), ``reference.jsonl`` (the calibration
subjects) and, for a multidimensional pool, ``mirt_params.csv``. ``check_pool`` reads
all of it and lists every problem with its file and line, so that a pool from a stranger
can be fixed in one pass; ``load_pool`` refuses a pool with any problem. Every command
that reads a pool (``cat synth``, ``cat calibrate``, ``cat assess``, ``cat pool ...``)
goes through ``load_pool``. A pool may be given by name (``mmlu-pro``) where no folder
of that name is at hand: ``itempool.shipped`` finds it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from irt.errors import IRTError
from irt.mirt_model import MirtParams
from irt.mixed import MixedParams
from irt.models import ItemParams
from irt.polytomous import PolytomousParams
from itempool.checks import (
    MANIFEST,
    REFERENCE,
    check_items,
    check_manifest,
    check_references,
)
from itempool.errors import PoolFormatError
from itempool.formats.continuous_params import read_continuous_params
from itempool.formats.params import read_params
from itempool.formats.polytomous_params import read_polytomous_params
from itempool.item_files import ITEMS, ITEMS_GZ, items_problem
from itempool.items import PoolItem, QuestionSet
from itempool.manifest import PoolManifest, ReferenceRow
from itempool.mirt_file import check_mirt_params
from itempool.params_check import (
    CONTINUOUS_PARAMS,
    PARAMS,
    binary_as_scored,
    check_continuous_params,
    check_params,
    is_scored_params,
)
from itempool.problems import Problem
from itempool.protocol import LoadedProtocol, check_protocol
from itempool.shipped import resolve_pool, unknown_pool_note

#: The protocol of a pool that records none.
BUILTIN = LoadedProtocol()


@dataclass(frozen=True)
class LoadedPool:
    """A pool that passed ``check_pool``; ``params`` (if calibrated) and ``mirt`` (the
    multidimensional model, if it has one) follow item order."""

    dir: Path
    manifest: PoolManifest
    items: tuple[PoolItem, ...]
    # A pool of scored items (graded, partial-credit, sequential and 0/1 mixed) has
    # PolytomousParams: params.csv in the layout of itempool.formats.polytomous_params.
    # A pool with continuous items (open items scored in [0, 1]) has MixedParams: its
    # scored items' params.csv and its continuous items' continuous_params.csv, in that
    # order (not item order; look items up by id).
    params: ItemParams | PolytomousParams | MixedParams | None
    references: list[ReferenceRow]
    mirt: MirtParams | None = None
    # How the references were asked and graded, with its files read.
    protocol: LoadedProtocol = BUILTIN

    def questions(self) -> QuestionSet:
        """The pool's name, language and questions: what asking a model needs."""
        return QuestionSet(
            name=self.manifest.name, language=self.manifest.language, items=self.items
        )


@dataclass
class _Contents:
    manifest: PoolManifest | None = None
    items: list[PoolItem] | None = None
    item_lines: dict[str, int] | None = None
    references: list[ReferenceRow] | None = None
    mirt: MirtParams | None = None
    protocol: LoadedProtocol | None = None


def check_pool(pool_dir: str | Path) -> list[Problem]:
    """Every problem of the pool in ``pool_dir`` (a folder, or a pool's name:
    ``itempool.shipped``), in file order; empty when it is sound."""
    return _inspect(resolve_pool(pool_dir))[1]


def load_pool(pool_dir: str | Path) -> LoadedPool:
    """Read the pool in ``pool_dir`` (a folder, or a pool's name: ``itempool.shipped``)
    for use; ``PoolFormatError`` naming the first problem if there is any."""
    folder = resolve_pool(pool_dir)
    contents, problems = _inspect(folder)
    _refuse(folder, problems)
    assert contents.manifest is not None and contents.items is not None  # no errors
    params: ItemParams | PolytomousParams | MixedParams | None = None
    file = folder / PARAMS
    discrete = [item.id for item in contents.items if not item.continuous]
    continuous = [item.id for item in contents.items if item.continuous]
    if file.is_file() or (continuous and (folder / CONTINUOUS_PARAMS).is_file()):
        try:
            raw: ItemParams | PolytomousParams | None = None
            if file.is_file():
                raw = (
                    read_polytomous_params(file)
                    if is_scored_params(file)
                    else read_params(file, contents.manifest.model)
                )
                position = {item_id: j for j, item_id in enumerate(raw.item_ids)}
                raw = raw.subset([position[item] for item in discrete])
            params = raw
            if continuous:
                cont = read_continuous_params(folder / CONTINUOUS_PARAMS).subset(continuous)
                # 0/1 items join continuous ones in the scored layout.
                scored = binary_as_scored(raw) if raw is not None and not raw.scored else raw
                params = MixedParams(discrete=scored, continuous=cont)
        except (IRTError, KeyError) as exc:  # check_pool should have caught it
            raise PoolFormatError(f"{file}: {exc}") from exc
    return LoadedPool(
        dir=folder,
        manifest=contents.manifest,
        items=tuple(contents.items),
        params=params,
        references=contents.references or [],
        mirt=contents.mirt,
        protocol=contents.protocol or BUILTIN,
    )


def read_questions(pool_dir: str | Path) -> QuestionSet:
    """The questions of the pool in ``pool_dir`` (a folder or a pool's name):
    ``pool.json`` and ``items.jsonl`` (or ``.gz``) under ``load_pool``'s checks.
    ``params.csv`` and ``reference.jsonl`` are not read, so a pool can be asked (``cat
    synth``) and calibrated before it has them, and recalibrated over stale ones."""
    folder = resolve_pool(pool_dir)
    contents, problems = _inspect(folder, questions_only=True)
    _refuse(folder, problems)
    manifest, items = contents.manifest, contents.items
    assert manifest is not None and items is not None  # no errors
    return QuestionSet(name=manifest.name, language=manifest.language, items=tuple(items))


def pool_folder_problem(folder: Path) -> str | None:
    """Why ``folder`` cannot hold a pool at all (it is missing, or a file), or None when it
    is a folder; what is in the folder is ``check_pool``'s business."""
    if folder.is_dir():
        return None
    if folder.exists():
        # The usual slip is a pool's file (or a CSV of questions) given for its folder.
        what = f"a file, not a pool folder (a pool folder holds {MANIFEST} and {ITEMS})"
        if folder.name in (MANIFEST, ITEMS, ITEMS_GZ):
            return f"{what}; give its folder {folder.parent}"
        return what
    return "no such folder"


def _refuse(folder: Path, problems: list[Problem]) -> None:
    missing = pool_folder_problem(folder)
    if missing is not None:
        # No folder to look into: "run cat pool validate" would only say the same again.
        raise PoolFormatError(f"{folder}: {_with_names(missing, folder)}")
    errors = [p for p in problems if not p.warning]
    if errors:
        count = f"{len(errors)} problem{'s' if len(errors) > 1 else ''}"
        raise PoolFormatError(
            f"pool {folder} has {count}; the first: {errors[0]}; run `cat pool validate {folder}`"
        )


def _inspect(folder: Path, questions_only: bool = False) -> tuple[_Contents, list[Problem]]:
    """What the folder holds and every problem of it; ``questions_only`` stops after the
    manifest and the items."""
    contents = _Contents()
    problems: list[Problem] = []
    missing = pool_folder_problem(folder)
    if missing is not None:
        return contents, [Problem(str(folder), None, _with_names(missing, folder))]
    contents.manifest = check_manifest(folder / MANIFEST, problems)
    scenarios = contents.manifest.scenarios if contents.manifest else ()
    both = items_problem(folder)
    if both is not None:
        problems.append(Problem(f"{ITEMS}, {ITEMS_GZ}", None, both))
    # With both there, the plain file is checked so that its other problems show too.
    items_path = folder / (ITEMS_GZ if both is None and (folder / ITEMS_GZ).is_file() else ITEMS)
    items_name = items_path.name
    contents.items, contents.item_lines = check_items(items_path, scenarios, problems)
    if contents.manifest is not None:
        contents.protocol = check_protocol(folder, contents.manifest.protocol, problems)
    if questions_only:
        return contents, problems
    items = contents.items or []
    continuous = {item.id for item in items if item.continuous}
    lines = contents.item_lines or {}
    if (folder / PARAMS).is_file():
        model = contents.manifest.model if contents.manifest else None
        top = {item.id: item.max_score for item in items if item.id not in continuous}
        discrete_lines = {k: v for k, v in lines.items() if k not in continuous}
        problems.extend(
            check_params(folder / PARAMS, model, discrete_lines, items_name, max_scores=top)
        )
    if continuous and (folder / CONTINUOUS_PARAMS).is_file():
        own = {k: v for k, v in lines.items() if k in continuous}
        problems.extend(check_continuous_params(folder / CONTINUOUS_PARAMS, own, items_name))
    elif continuous and (folder / PARAMS).is_file():
        problems.append(
            Problem(
                CONTINUOUS_PARAMS,
                None,
                f"missing: {len(continuous)} item(s) of {items_name} are continuous, and "
                f"{PARAMS} holds the others only (cat calibrate --pool writes both)",
            )
        )
    if (folder / REFERENCE).is_file():
        contents.references = check_references(folder / REFERENCE, problems)
    if contents.manifest is not None:
        ids = [item.id for item in contents.items] if contents.items is not None else None
        contents.mirt, mirt_problems = check_mirt_params(
            folder, contents.manifest.multidimensional, ids
        )
        problems.extend(mirt_problems)
    return contents, problems


def _with_names(missing: str, folder: Path) -> str:
    """``missing`` and, for a bare name that named no pool, the pools there are."""
    note = unknown_pool_note(folder)
    return missing if note is None else f"{missing}, {note}"
