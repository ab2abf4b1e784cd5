"""The whole run through a Batch API (``cat synth --batch``): OpenAI's, or any
provider's that speaks it (``/v1/files``, ``/v1/batches``), through the ``openai``
client.

The run goes in rounds, as the offline path does (``synth.batch_round``): each round
walks the runner against a backend that answers nothing, and the calls it defers (the
next stage of every job) become the round's batches: one file per endpoint and model,
split at the API's limits (``synth.batch_files``). Each file is uploaded, a batch is
created from it, the batches are polled until each ends, and their output and error
files are imported into the run store. The next walk then defers the following stage,
until a walk defers nothing and the responses are written as online.

Crash safety: the store's ``batches`` table records each batch's call keys before its
file is uploaded, its file id once uploaded, and its batch id once created; a batch's
import and the mark that it is imported are one transaction. A run killed at any point
and started again polls the batches it created and submits nothing twice:

- keys recorded, no file id: no batch can exist (a batch is created only from a
  recorded file), so the file is uploaded (again: an orphan upload costs nothing);
- file id recorded, no batch id: the batch may exist (the process died between the
  create call and recording its answer), so the batches are listed first and one
  whose metadata names this batch is taken over; only if none does is it created;
- batch id recorded: polled;
- ended but not imported: downloaded and imported again.

A batch is created with no retry by the client: a create whose answer was lost is
looked up by its name before another is tried, never blindly sent twice.

A request whose line comes back as an error, or with no line at all (a failed,
expired or cancelled batch, a line left out), is asked again in the next round, up to
``max_batch_attempts`` times; then it is recorded as failed, as an online call that
spends its retries. A batch the provider refuses for its limit of requests in flight
(OpenAI's enqueued-token limit, ``token_limit_exceeded``) spends no attempt while
another batch of the same model and endpoint got answers in the round.
"""

from __future__ import annotations

import os
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import openai

from synth.backend import DEFAULT_KEY_ENV, api_key, check_reachable
from synth.batch_files import (
    MAX_BYTES,
    MAX_REQUESTS,
    BatchResult,
    model_slug,
    parse_results,
    request_line,
    split_lines,
)
from synth.batch_round import (
    MAX_BATCH_ATTEMPTS,
    check_batch_run,
    import_results,
    next_round,
    results_by_key,
    walk,
)
from synth.errors import SynthError
from synth.job import OnProgress, RunPlan, finish_run
from synth.report import SynthesisReport
from synth.runner import DeferredCall
from synth.store import RunStore, StoredBatch

__all__ = ["ENDED", "BatchApiRun", "BatchProgress", "cancel_batches", "run_batch_api"]

#: A batch's statuses once it will change no more.
ENDED = ("completed", "failed", "expired", "cancelled")
#: Seconds between two polls of the batches in flight.
POLL_SECONDS = 30.0
#: The error code of a batch refused for the provider's enqueued-token limit.
LIMIT_CODE = "token_limit_exceeded"
#: The metadata key naming a batch (its row in the store).
METADATA_KEY = "cat_synth"
_RUN_ID = "batch_run_id"
# How much older than its file a batch may look (clocks of a provider's servers).
_SLACK_SECONDS = 3600
# Tries of a create whose answer did not arrive (each after a look-up by name).
_CREATE_TRIES = 5


@dataclass(frozen=True)
class BatchProgress:
    """Where a round stands. ``phase`` is "uploading" (``done`` of its ``batches``
    created so far), "submitted" (all created), "waiting" (``done`` ended) or "ended"
    (all ended and imported). Of its ``requests`` (``stages``: how many of each
    stage), ``answered`` have a result line (the batches' ``request_counts``: completed
    and failed); ``statuses`` counts the batches by their last status; ``imported``
    and ``errors`` count the result lines imported so far in the round; ``refused``
    the batches the provider refused for its limit of requests in flight."""

    round: int
    phase: str
    batches: int
    done: int
    requests: int
    answered: int
    statuses: dict[str, int]
    stages: dict[str, int]
    imported: int = 0
    errors: int = 0
    refused: int = 0


@dataclass(frozen=True)
class BatchApiRun:
    """What ``run_batch_api`` did: rounds run, batches created and requests submitted
    by this process, batches taken over from an earlier one (``resumed``), result
    lines imported as replies and as errors, and the run's report."""

    rounds: int
    batches: int
    submitted: int
    resumed: int
    imported: int
    errors: int
    report: SynthesisReport


OnBatches = Callable[[BatchProgress], None]


def run_batch_api(
    plan: RunPlan,
    *,
    api_key_env: str = DEFAULT_KEY_ENV,
    timeout: float = 600.0,
    max_batch_attempts: int = MAX_BATCH_ATTEMPTS,
    poll_seconds: float = POLL_SECONDS,
    max_requests: int = MAX_REQUESTS,
    max_bytes: int = MAX_BYTES,
    progress: OnProgress | None = None,
    on_batches: OnBatches | None = None,
) -> BatchApiRun:
    """Answer the plan's every call through the Batch API of its endpoints, round by
    round, and write the responses and report as an online run does.

    ``poll_seconds`` is the wait between polls; ``max_requests`` and ``max_bytes``
    bound each file (the API's limits by default). ``progress`` sees each round's walk,
    ``on_batches`` each poll. Raises ``SynthError`` before any upload on bad input or an
    endpoint that does not answer; an API error later stops the run with everything
    done so far kept (run again to resume)."""
    check_batch_run(max_batch_attempts)
    if poll_seconds < 0:
        raise SynthError(f"poll seconds must be 0 or more, got {poll_seconds}")
    clients = _Clients(plan.urls, api_key_env, timeout)
    t0 = time.perf_counter()
    with RunStore(plan.store) as store:
        plan.record_in(store)
        run_id = store.get_meta(_RUN_ID)
        if run_id is None:
            run_id = uuid.uuid4().hex[:12]  # names this store's batches on a shared account
            store.set_meta(_RUN_ID, run_id)
        driver = _Driver(plan, store, clients, max_batch_attempts, poll_seconds, on_batches)
        rounds = 0
        while True:
            pending = store.open_batches()
            lines: dict[str, list[str]] = {}
            if pending:
                driver.resumed += sum(b.batch_id is not None for b in pending)
            else:
                counts, deferred = walk(plan, store, max_batch_attempts, progress)
                if not deferred:
                    report = finish_run(plan, store, counts, t0)
                    break
                pending, lines = _plan_batches(
                    store, deferred, str(run_id), max_requests, max_bytes
                )
            rounds += 1
            driver.submit(pending, lines)
            driver.wait(pending)
    return BatchApiRun(
        rounds=rounds,
        batches=driver.created,
        submitted=driver.submitted,
        resumed=driver.resumed,
        imported=driver.imported,
        errors=driver.errors,
        report=report,
    )


def cancel_batches(
    plan: RunPlan, *, api_key_env: str = DEFAULT_KEY_ENV, timeout: float = 600.0
) -> list[tuple[str, str]]:
    """Cancel the run's batches still in flight at the provider (a batch whose creation
    was sent but not recorded is looked up first); (name, status) of each batch asked
    to cancel. Their rows stay open: a later ``run_batch_api`` imports what they
    answered before the cancel and asks the rest again."""
    clients = _Clients(plan.urls, api_key_env, timeout)
    cancelled: list[tuple[str, str]] = []
    with RunStore(plan.store) as store:
        driver = _Driver(plan, store, clients, MAX_BATCH_ATTEMPTS, 0.0, None)
        for batch in store.open_batches():
            status = driver.cancel(batch)
            if status is not None:
                cancelled.append((batch.name, status))
    return cancelled


class _Clients:
    """An ``openai`` client per endpoint, made on first use (a missing key or an
    endpoint that does not answer fails then): the plan's endpoints at once, before
    any upload, and that of a batch made by an earlier run with other endpoints."""

    def __init__(self, urls: Iterable[str], api_key_env: str, timeout: float) -> None:
        self.api_key_env, self.timeout = api_key_env, timeout
        self._made: dict[str, openai.OpenAI] = {}
        for url in urls:
            self.get(url)

    def get(self, url: str) -> openai.OpenAI:
        if url not in self._made:
            key = api_key(url, self.api_key_env)
            check_reachable(url)
            self._made[url] = openai.OpenAI(
                api_key=key, base_url=url, timeout=self.timeout, max_retries=5
            )
        return self._made[url]

    def secrets(self) -> list[str]:
        """What error messages must never show: the key from the environment."""
        key = os.environ.get(self.api_key_env, "")
        return [key] if key else []


def _plan_batches(
    store: RunStore,
    deferred: Mapping[str, DeferredCall],
    run_id: str,
    max_requests: int,
    max_bytes: int,
) -> tuple[list[StoredBatch], dict[str, list[str]]]:
    """Record the round's requests and batches (keys before any upload); the batches
    and their lines by name."""
    n = next_round(store)
    store.put_batch_requests(((c.request, c.role) for c in deferred.values()), n)
    by_file: dict[tuple[str, str], list[DeferredCall]] = {}
    for call in deferred.values():
        by_file.setdefault((call.base_url, call.request.model), []).append(call)
    batches: list[StoredBatch] = []
    lines: dict[str, list[str]] = {}
    for (url, model), calls in sorted(by_file.items()):
        keys = [c.request.key for c in calls]
        start = 0
        for chunk in split_lines([request_line(c.request) for c in calls], max_requests, max_bytes):
            name = f"cat-synth-{run_id}-r{n:02d}-{len(batches) + 1:03d}-{model_slug(model)}"
            batches.append(
                StoredBatch(name, url, model, n, tuple(keys[start : start + len(chunk)]))
            )
            lines[name] = chunk
            start += len(chunk)
    store.put_batches(batches)
    return batches, lines


class _Driver:
    """Uploads, creates, polls and imports the batches of a run, recording each step."""

    def __init__(
        self,
        plan: RunPlan,
        store: RunStore,
        clients: _Clients,
        budget: int,
        poll_seconds: float,
        on_batches: OnBatches | None,
    ) -> None:
        self.plan, self.store, self.clients = plan, store, clients
        self.budget, self.poll_seconds, self.on_batches = budget, poll_seconds, on_batches
        self.created = self.submitted = self.resumed = self.imported = self.errors = 0
        # The round in hand: its requests by stage, and the counts when it began.
        self._stages: dict[str, int] = {}
        self._start = (0, 0)
        self._refused: list[tuple[StoredBatch, Any]] = []
        self._answered: set[tuple[str, str]] = set()  # (endpoint, model) with replies

    # --- submitting -------------------------------------------------------------------
    def submit(self, batches: list[StoredBatch], lines: Mapping[str, list[str]]) -> None:
        """Upload and create every batch not created yet, recording each step."""
        self._stages = self.store.batch_stages(batches[0].round)
        self._start = (self.imported, self.errors)
        for k, batch in enumerate(batches):
            if batch.batch_id is not None:
                continue
            self._report(batches, "uploading", k)
            file_id = batch.file_id
            if file_id is None:
                text = lines.get(batch.name) or self._lines(batch)
                file_id = self._upload(batch, text)
                self.store.update_batch(batch.name, file_id=file_id, status="uploaded")
            found = self._find(batch, file_id) if batch.file_id is not None else None
            if found is not None:
                self.resumed += 1
            else:
                found = self._create(batch, file_id)
                self.created += 1
                self.submitted += len(batch.keys)
            self.store.update_batch(batch.name, batch_id=found.id, status=found.status)
            batches[k] = replace(batch, file_id=file_id, batch_id=found.id, status=found.status)
        self._report(batches, "submitted", len(batches))

    def _lines(self, batch: StoredBatch) -> list[str]:
        """A planned batch's lines again, from the requests the store recorded."""
        out = []
        for key in batch.keys:
            asked = self.store.batch_request(key)
            if asked is None:
                raise SynthError(f"the run store lost batch request {key} of {batch.name}")
            out.append(request_line(asked[0]))
        return out

    def _upload(self, batch: StoredBatch, lines: list[str]) -> str:
        content = "".join(line + "\n" for line in lines).encode("utf-8")
        with self._api(batch, "upload") as client:
            made = client.files.create(file=(f"{batch.name}.jsonl", content), purpose="batch")
        return str(made.id)

    def _create(self, batch: StoredBatch, file_id: str) -> Any:
        client = self.clients.get(batch.base_url).with_options(max_retries=0)
        for attempt in range(1, _CREATE_TRIES + 1):
            try:
                return client.batches.create(
                    input_file_id=file_id,
                    endpoint="/v1/chat/completions",  # CHAT_URL, as the API's type spells it
                    completion_window="24h",
                    metadata={METADATA_KEY: batch.name},
                )
            except (openai.APIConnectionError, openai.InternalServerError) as exc:
                # The batch may exist all the same: look before sending it again.
                found = self._find(batch, file_id)
                if found is not None:
                    return found
                if attempt == _CREATE_TRIES:
                    raise self._stopped(batch, "create", exc) from exc
            except openai.RateLimitError as exc:
                if attempt == _CREATE_TRIES:
                    raise self._stopped(batch, "create", exc) from exc
            except openai.APIError as exc:
                raise self._stopped(batch, "create", exc) from exc
            time.sleep(min(2.0**attempt, 60.0))
        raise AssertionError("unreachable")

    def _find(self, batch: StoredBatch, file_id: str) -> Any | None:
        """The batch created from this row's file by an earlier attempt, if any."""
        with self._api(batch, "list") as client:
            # No batch made before its file was uploaded can be it: the listing (newest
            # first, page by page) stops there, with an hour's slack.
            since = client.files.retrieve(file_id).created_at - _SLACK_SECONDS
            for found in client.batches.list(limit=100):
                if (found.metadata or {}).get(METADATA_KEY) == batch.name and (
                    found.input_file_id == file_id
                ):
                    return found
                if found.created_at < since:
                    break
        return None

    def cancel(self, batch: StoredBatch) -> str | None:
        """Ask the provider to cancel the batch if it exists and has not ended; its
        new status, or None when there was nothing to cancel."""
        batch_id = batch.batch_id
        if batch_id is None and batch.file_id is not None:
            found = self._find(batch, batch.file_id)
            if found is not None:
                batch_id = found.id
                self.store.update_batch(batch.name, batch_id=batch_id, status=found.status)
        if batch_id is None:
            return None
        with self._api(batch, "cancel") as client:
            if client.batches.retrieve(batch_id).status in ENDED:
                return None  # providers refuse to cancel an ended batch
            status = str(client.batches.cancel(batch_id).status)
        self.store.update_batch(batch.name, status=status)
        return status

    # --- waiting and importing --------------------------------------------------------
    def wait(self, batches: list[StoredBatch]) -> None:
        """Poll until every batch has ended, importing each as it ends."""
        live = {b.name: b for b in batches}
        counts: dict[str, tuple[int, int, str]] = {
            b.name: (0, len(b.keys), b.status) for b in batches
        }
        first = True
        while live:
            if not first and self.poll_seconds:
                time.sleep(self.poll_seconds)
            first = False
            for name, batch in list(live.items()):
                assert batch.batch_id is not None
                with self._api(batch, "poll") as client:
                    found = client.batches.retrieve(batch.batch_id)
                rc = found.request_counts
                answered = (rc.completed + rc.failed) if rc is not None else 0
                counts[name] = (answered, len(batch.keys), found.status)
                if found.status in ENDED:
                    self._import(batch, found)
                    del live[name]
                elif found.status != batch.status:
                    self.store.update_batch(name, status=found.status)
                    live[name] = replace(batch, status=found.status)
            answered = sum(a for a, _, _ in counts.values())
            statuses = dict(Counter(s for *_, s in counts.values()))
            done = len(batches) - len(live)
            refused = len(self._refused)
            if not live:
                self._settle_refused()
            self._report(batches, "waiting" if live else "ended", done, answered, statuses, refused)

    def _import(self, batch: StoredBatch, found: Any) -> None:
        """Store an ended batch's results and mark it imported, in one transaction;
        each key without a result line counts as an error of this batch."""
        results: list[BatchResult] = []
        for file_id, kind in ((found.output_file_id, "output"), (found.error_file_id, "errors")):
            if file_id:
                with self._api(batch, "download") as client:
                    text = client.files.content(file_id).text
                results.extend(parse_results(text.splitlines(), f"{found.id} {kind}"))
        by_key = results_by_key(results)
        refused = _over_limit(found)
        with self.store.transaction():
            imported, errors, _ = import_results(self.plan, self.store, by_key)
            if refused:
                self._refused.append((batch, found))  # charged at the round's end, or not
            else:
                errors += self._charge_missing(batch, found, by_key)
            self.store.mark_batch_imported(batch.name, found.status)
        if imported:
            self._answered.add((batch.base_url, batch.model))
        self.imported += imported
        self.errors += errors

    def _charge_missing(
        self, batch: StoredBatch, found: Any, results: Mapping[str, BatchResult]
    ) -> int:
        """Count an error for each of the batch's keys without a result line."""
        why = _why_missing(found)
        missing = [key for key in batch.keys if key not in results]
        for key in missing:
            self.store.put_batch_error(key, why, f"{found.id} missing")
        return len(missing)

    def _settle_refused(self) -> None:
        """Batches the provider refused for its limit of requests in flight (OpenAI's
        enqueued-token limit) cost their requests no attempt while other batches of the
        same model and endpoint got answers in the round: they are simply asked again,
        with fewer in flight. When none did, the refusals count, so that a run cannot go
        round for ever."""
        with self.store.transaction():
            for batch, found in self._refused:
                if (batch.base_url, batch.model) not in self._answered:
                    self.errors += self._charge_missing(batch, found, {})
        self._refused.clear()
        self._answered.clear()

    # --- helpers ----------------------------------------------------------------------
    @contextmanager
    def _api(self, batch: StoredBatch, what: str) -> Iterator[openai.OpenAI]:
        """The batch's client; an API error inside stops the run, saying how to resume."""
        try:
            yield self.clients.get(batch.base_url)
        except openai.APIError as exc:
            raise self._stopped(batch, what, exc) from exc

    def _stopped(self, batch: StoredBatch, what: str, exc: BaseException) -> SynthError:
        return _stopped(batch, what, exc, self.clients.secrets())

    def _report(
        self,
        batches: list[StoredBatch],
        phase: str,
        done: int,
        answered: int = 0,
        statuses: dict[str, int] | None = None,
        refused: int = 0,
    ) -> None:
        if self.on_batches is None:
            return
        self.on_batches(
            BatchProgress(
                round=batches[0].round,
                phase=phase,
                batches=len(batches),
                done=done,
                requests=sum(len(b.keys) for b in batches),
                answered=answered,
                statuses=statuses or dict(Counter(b.status for b in batches)),
                stages=self._stages,
                imported=self.imported - self._start[0],
                errors=self.errors - self._start[1],
                refused=refused,
            )
        )


def _over_limit(found: Any) -> bool:
    """Did the provider refuse the batch for its limit of requests in flight?"""
    data = getattr(getattr(found, "errors", None), "data", None) or []
    codes = {getattr(e, "code", None) for e in data}
    return found.status == "failed" and codes == {LIMIT_CODE}


def _why_missing(found: Any) -> str:
    """The error a request without a result line gets: the batch's own, if it gave one."""
    errors = getattr(found, "errors", None)
    data = getattr(errors, "data", None) or []
    detail = next((e.message for e in data if getattr(e, "message", None)), None)
    base = f"no result line in batch {found.id} ({found.status})"
    return f"{base}: {detail}" if detail else base


def _stopped(
    batch: StoredBatch, what: str, exc: BaseException, secrets: Iterable[str]
) -> SynthError:
    status = getattr(exc, "status_code", None)
    message = str(getattr(exc, "message", "") or exc).splitlines()[0][:200]
    for secret in secrets:  # some servers echo the key back in an error
        message = message.replace(secret, "***")
    code = f" {status}" if status else ""
    return SynthError(
        f"batch {batch.name} at {batch.base_url}: {what} failed ({type(exc).__name__}{code}: "
        f"{message}); everything so far is in the run store: run the same command again "
        "to resume"
    )
