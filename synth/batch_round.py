"""A run through batch files (``cat synth --batch-out DIR`` / ``--batch-in PATH``): the
offline path of ``vllm run-batch`` or any engine that reads and writes OpenAI batch
lines (``synth.batch_files``).

The run goes round by round, because a stage needs the reply of the stage before it
(debate the generation's, reflection the debate's). In each round the ordinary runner
walks every job against a backend that answers nothing (``DeferringBackend``): a job
whose calls are all in the store is graded and stored as online; the first call it
lacks is deferred, and so is each judge's call (``--judge-model``) on an answer stored
by then. The deferred calls are the round's requests: recorded in the store
(``batch_requests``) before their files are written, so that a result line finds its
request by its ``custom_id`` alone. Results are imported in one transaction, and the
next walk defers the following stage. A walk that defers nothing has answered the run:
the responses are written as an online run writes them.

A request whose result is an error is asked again in the next round, up to
``max_batch_attempts`` times; then it is recorded as failed, as an online call that
spends its retries (its answer stays missing). A request without a result line (an
expired or cut batch) is simply asked again. A judge's score refused (out of range) is
asked again with the seed moved on, up to ``max_batch_attempts`` times too.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from synth.backend import CallDeferred, ChatReply, ChatRequest
from synth.batch_files import (
    MAX_REQUESTS,
    BatchResult,
    read_results,
    result_files,
    write_request_files,
)
from synth.errors import SynthError
from synth.job import OnProgress, RunPlan, finish_run, run_with
from synth.report import SynthesisReport
from synth.runner import JUDGE_ROLE, DeferredCall, RunProgress, call_prompt_version
from synth.store import RunStore

__all__ = [
    "BatchRound",
    "DeferringBackend",
    "check_batch_run",
    "import_results",
    "next_round",
    "remaining_by_stage",
    "results_by_key",
    "run_batch_round",
    "stages_text",
    "walk",
]

#: Errors a request may get back from batches before it is recorded as failed.
MAX_BATCH_ATTEMPTS = 3
#: The stages in the order a job goes through them, then the judge's scoring.
STAGES = ("generation", "debate", "reflection", JUDGE_ROLE)
_ROUND = "batch_round"


class DeferringBackend:
    """A backend that answers nothing: each request is deferred to a batch, unless
    batches have already failed it ``budget`` times (then it fails, with their last
    error)."""

    def __init__(self, failures: Mapping[str, tuple[int, str]], budget: int) -> None:
        self.failures, self.budget = failures, budget

    async def complete(self, request: ChatRequest) -> ChatReply:
        count, last = self.failures.get(request.key, (0, ""))
        if count >= self.budget:
            raise SynthError(f"{request.model}: failed in {count} batch rounds ({last})")
        raise CallDeferred()

    async def close(self) -> None:
        return None


@dataclass(frozen=True)
class BatchRound:
    """What a round did: results imported (answers, errors, lines matching no call
    still to be made), the calls still to be made per stage, and the request files
    written for them (none once the run is answered, when ``report`` holds the run's
    report)."""

    imported: int
    errors: int
    unmatched: int
    remaining: dict[str, int]
    files: list[Path] = field(default_factory=list)
    round: int = 0
    report: SynthesisReport | None = None

    @property
    def n_remaining(self) -> int:
        return sum(self.remaining.values())


def check_batch_run(max_batch_attempts: int) -> None:
    """Refuse an attempt budget below 1."""
    if max_batch_attempts < 1:
        raise SynthError(f"max batch attempts must be at least 1, got {max_batch_attempts}")


def run_batch_round(
    plan: RunPlan,
    *,
    batch_in: Path | None,
    batch_out: Path | None,
    max_batch_attempts: int = MAX_BATCH_ATTEMPTS,
    max_requests: int = MAX_REQUESTS,
    progress: OnProgress | None = None,
) -> BatchRound:
    """Import the results in ``batch_in`` (a result file or a folder of them) into the
    plan's store, then write the requests of the calls still to be made into
    ``batch_out`` (at most ``max_requests`` a file; the folder is made, with its
    parents, if missing), or, when none is left, the run's responses and report. The
    plan may come from ``prepare_run(..., offline=True)``: no call is made, so no agent
    needs a URL.

    Raises ``SynthError`` before touching the store on bad input (an unreadable result
    file, a ``batch_out`` that cannot be a folder), and after importing when calls
    remain but there is no ``batch_out`` to write them to."""
    check_batch_run(max_batch_attempts)
    results = _read(batch_in) if batch_in is not None else {}
    if batch_out is not None:
        _make_folder(batch_out)
    t0 = time.perf_counter()
    with RunStore(plan.store) as store:
        plan.record_in(store)
        with store.transaction():
            imported, errors, unmatched = import_results(plan, store, results)
        counts, deferred = walk(plan, store, max_batch_attempts, progress)
        remaining = remaining_by_stage(deferred)
        if not deferred:
            report = finish_run(plan, store, counts, t0)
            return BatchRound(imported, errors, unmatched, remaining, report=report)
        if batch_out is None:
            raise SynthError(
                f"{len(deferred):,} calls remain ({stages_text(remaining)}); give --batch-out DIR "
                "to write their requests"
            )
        n = next_round(store)
        # Recorded before the files exist: every line written can find its request.
        store.put_batch_requests(((c.request, c.role) for c in deferred.values()), n)
        files = write_request_files(
            [c.request for c in deferred.values()], batch_out, f"round{n:02d}", max_requests
        )
    return BatchRound(imported, errors, unmatched, remaining, files, n)


def _make_folder(folder: Path) -> None:
    """Make the ``--batch-out`` folder and its parents, unless it is there already."""
    if folder.exists() and not folder.is_dir():
        raise SynthError(f"--batch-out {folder}: not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SynthError(
            f"--batch-out {folder}: cannot make the folder ({exc.strerror or exc})"
        ) from exc


def import_results(
    plan: RunPlan, store: RunStore, results: Mapping[str, BatchResult]
) -> tuple[int, int, int]:
    """Store every result that answers a batch request still open (call inside the
    import's transaction, so that an import cut short stores nothing); counts of
    replies, errors and lines that answer no open request."""
    imported = errors = unmatched = 0
    for key, result in results.items():
        asked = store.batch_request(key)
        if asked is None or store.get_call(key) is not None:
            unmatched += 1
        elif result.reply is not None:
            request, role = asked
            cost = (
                None
                if plan.prices is None
                else plan.prices.cost(request.model, result.reply, batch=True)
            )
            store.put_call(request, result.reply, cost, call_prompt_version(role))
            imported += 1
        else:
            store.put_batch_error(key, result.error or "error", result.where)
            errors += 1
    return imported, errors, unmatched


def _read(path: Path) -> dict[str, BatchResult]:
    return results_by_key(read_results(result_files(path)))


def results_by_key(results: Iterable[BatchResult]) -> dict[str, BatchResult]:
    """Every result by call key: a reply wins over an error, and a later line over an
    earlier one of the same kind."""
    out: dict[str, BatchResult] = {}
    for result in results:
        earlier = out.get(result.key)
        if earlier is None or result.reply is not None or earlier.reply is None:
            out[result.key] = result
    return out


def walk(
    plan: RunPlan, store: RunStore, budget: int, progress: OnProgress | None
) -> tuple[RunProgress, dict[str, DeferredCall]]:
    """One pass of the runner with nothing answered live: the counts, and the calls
    deferred to a batch by key (a call that batches failed ``budget`` times fails)."""
    failures = store.batch_errors()
    seen: dict[str, DeferredCall] = {}

    def backends() -> dict[str, DeferringBackend]:
        return {url: DeferringBackend(failures, budget) for url in plan.urls}

    counts = run_with(
        plan,
        store,
        backends,
        progress,
        on_runner=lambda r: seen.update(r.deferred),
        judge_attempts=budget,
    )
    return counts, seen


def remaining_by_stage(deferred: Mapping[str, DeferredCall]) -> dict[str, int]:
    """The deferred calls counted per stage (every stage named, 0 when none)."""
    remaining = {stage: 0 for stage in STAGES}
    remaining.update(Counter(call.role for call in deferred.values()))
    return remaining


def next_round(store: RunStore) -> int:
    """The next round's number, recorded at once (a round cut short leaves a gap)."""
    n = int(store.get_meta(_ROUND) or 0) + 1
    store.set_meta(_ROUND, n)
    return n


def stages_text(remaining: Mapping[str, int]) -> str:
    """The stages with calls left, as "generation 12, debate 4"."""
    return ", ".join(f"{stage} {n:,}" for stage, n in remaining.items() if n)
