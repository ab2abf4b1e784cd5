"""Several models' adaptive tests in one run: ``cat assess --model a --model b ...``.

    import cat
    runs = cat.assess_many("item_pools/demo-en", [
        cat.EndpointExaminee("llm-a", "http://127.0.0.1:8000/v1", store="run.db"),
        cat.EndpointExaminee("llm-b", "http://127.0.0.1:8000/v1", store="run.db"),
    ], length=60, concurrency=16)

Each model's test runs in a thread of its own, with its own event loop, client and
run-store connection (SQLite in WAL mode takes one writer at a time from any number of
connections, each used by one thread only); the models may share one store file. One
``synth.budget.RequestBudget`` holds all their calls to ``concurrency`` in flight at once.
A model that fails (a name the endpoint lacks, an endpoint that is down) ends with its
one-line error; the others still finish.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cat import arguments as check
from cat.arguments import PathArg, api_errors
from cat.assessment.assess import assess, checkpoint_key
from cat.assessment.endpoint import EndpointExaminee
from cat.assessment.examinees import Examinee
from cat.assessment.result import AssessmentResult, ItemRecord
from cat.assessment.session import AssessmentSession
from cat.errors import CatError
from cat.pools.loading import as_pool, check_output_folders
from itempool import LoadedPool
from synth.budget import RequestBudget
from synth.errors import SynthError
from synth.store import RunStore

__all__ = ["ModelRun", "ModelStep", "assess_many", "output_names", "output_paths"]

#: Called after each batch of one model's test, from that model's thread: its label, the
#: session and the items so far.
ModelStep = Callable[[str, AssessmentSession, list[ItemRecord]], None]


@dataclass(frozen=True)
class ModelRun:
    """One model's outcome: its result, or the one-line error that stopped it."""

    model: str
    result: AssessmentResult | None
    error: str | None = None


class _Stopped(Exception):  # noqa: N818 (not an error: the caller stopped the run)
    """Raised in a model's thread at its next batch once the run is interrupted."""


@api_errors
def assess_many(
    pool: LoadedPool | PathArg,
    examinees: Sequence[Examinee],
    *,
    concurrency: int = 8,
    resume: bool = False,
    on_step: ModelStep | None = None,
    **options: Any,
) -> list[ModelRun]:
    """Give every examinee the adaptive test on ``pool`` at once, each as ``cat.assess``
    would (``options`` are its keyword arguments: length, design, seed ...), and return
    their outcomes in the order given.

    Live models (``EndpointExaminee``) share one budget of ``concurrency`` calls in flight
    and may share a store file (give its path: an open ``RunStore`` cannot cross
    threads). ``resume`` continues each model's unfinished test and starts the others
    afresh (their stored answers cost nothing again). ``on_step`` is called from the
    models' threads. A ``CatError`` of one model (its endpoint, its name, its replies)
    ends that model only; Ctrl-C stops every model at its next batch, its checkpoint kept
    for ``resume``.

    Raises:
        CatError: no examinee, one named twice, a bad ``concurrency``, or an option that
            ``cat.assess`` refuses for every model alike.
    """
    examinees = list(examinees)
    if not examinees:
        raise CatError("give at least one examinee")
    labels = [e.label for e in examinees]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise CatError(f"model {twice[0]!r} is named twice")
    concurrency = check.whole(concurrency, "concurrency", 1)
    resume = check.flag(resume, "resume")
    on_step = check.callback(on_step, "on_step")
    for name in ("on_step", "resume", "model_name"):
        if name in options:
            raise CatError(f"assess_many takes no {name} for every model alike")
    pool = as_pool(pool)
    budget = RequestBudget(concurrency)
    for examinee in examinees:
        if isinstance(examinee, EndpointExaminee):
            if isinstance(examinee.store, RunStore):
                raise CatError(
                    f"{examinee.model}: give several models the store's path, not an open "
                    "RunStore (each model's thread opens its own connection)"
                )
            examinee.budget, examinee.concurrency = budget, concurrency
    _make_stores(examinees)
    stop = threading.Event()

    def one(examinee: Examinee) -> ModelRun:
        label = examinee.label

        def step(session: AssessmentSession, items: list[ItemRecord]) -> None:
            if stop.is_set():
                raise _Stopped
            if on_step is not None:
                on_step(label, session, items)

        try:
            again = resume and _unfinished(examinee, pool)
            result = assess(pool, examinee, resume=again, on_step=step, **options)
        except CatError as exc:
            return ModelRun(label, None, str(exc))
        return ModelRun(label, result)

    with ThreadPoolExecutor(len(examinees), thread_name_prefix="cat-assess") as pool_of:
        # Each thread runs in a copy of this context, so that its errors name options
        # as the caller's do (``cat.errors.command_line`` under the command line).
        futures = [pool_of.submit(copy_context().run, one, examinee) for examinee in examinees]
        try:
            return [future.result() for future in futures]
        except BaseException:
            # Ctrl-C (or a bug in one model's thread): the others stop at their next
            # batch, their checkpoints saved, before the executor's exit waits for them.
            stop.set()
            raise


def _make_stores(examinees: Sequence[Examinee]) -> None:
    """Create each store file once, before the threads open it: two connections making
    one new file's tables at the same moment could find it locked."""
    paths = {
        check.as_path(e.store, "store")
        for e in examinees
        if isinstance(e, EndpointExaminee) and not isinstance(e.store, RunStore)
    }
    for path in sorted(paths):
        check_output_folders(path)
        try:
            RunStore(path).close()
        except SynthError as exc:
            raise CatError(str(exc)) from exc


def _unfinished(examinee: Examinee, pool: LoadedPool) -> bool:
    """Whether ``examinee`` has an unfinished test on ``pool`` in its store."""
    store = getattr(examinee, "store", None)
    if not isinstance(examinee, EndpointExaminee) or isinstance(store, RunStore) or store is None:
        return False
    with RunStore(check.as_path(store, "store")) as opened:
        saved = opened.get_meta(checkpoint_key(examinee.label, pool))
    return isinstance(saved, dict) and not saved.get("finished")


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def output_names(labels: Sequence[str]) -> dict[str, str]:
    """A file name stem per model label, safe on every file system and distinct
    (``sim:0.5`` -> ``sim_0.5``, ``org/model`` -> ``org_model``; a clash gets -2, -3 ...)."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for label in labels:
        stem = _UNSAFE.sub("_", label).strip("._") or "model"
        name, k = stem, 2
        while name.lower() in taken:
            name, k = f"{stem}-{k}", k + 1
        taken.add(name.lower())
        names[label] = name
    return names


def output_paths(labels: Sequence[str], folder: Path, suffix: str = "") -> dict[str, Path]:
    """Each label's path in ``folder`` (its ``output_names`` stem and ``suffix``)."""
    return {label: folder / f"{name}{suffix}" for label, name in output_names(labels).items()}
