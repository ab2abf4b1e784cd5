"""``synth.batch_api`` (``cat synth --batch``) against the local server's Batch API,
through the real ``openai`` client: the online run's responses, imperfect batches
retried within the budget, batch prices, and a run stopped at each step of a batch's
life that resumes without submitting anything twice."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
from openai.resources.batches import Batches
from openai.resources.files import Files

from synth.batch_api import BatchApiRun, BatchProgress, cancel_batches, run_batch_api
from synth.errors import SynthError
from synth.job import RunPlan, prepare_run
from synth.local_server import LocalServer
from synth.local_server.batches import BatchFaults
from synth.store import RunStore
from tests.synth.online_run import MODELS, online_responses
from tests.synth.pools import EN_ITEMS


class Killed(BaseException):
    """Stands for the process dying at this point (no handler of ours catches it)."""


def _plan(pool: Path, tmp: Path, url: str, **options: object) -> RunPlan:
    return prepare_run(
        pool,
        "good,bad",
        base_url=url,
        store=tmp / "batch.db",
        out=tmp / "batch.jsonl",
        limit=8,
        **options,  # type: ignore[arg-type]
    )


def _run(plan: RunPlan, **options: object) -> BatchApiRun:
    return run_batch_api(plan, poll_seconds=0, **options)  # type: ignore[arg-type]


def _online(pool: Path, tmp: Path) -> Path:
    return online_responses(pool, tmp / "online")


def test_the_batch_run_gives_the_online_runs_responses(en_pool: Path, tmp_path: Path) -> None:
    seen: list[BatchProgress] = []
    with LocalServer(EN_ITEMS, MODELS) as server:
        run = _run(_plan(en_pool, tmp_path, server.base_url), on_batches=seen.append)
        submitted = server.batches.submitted
    # generation, debate, reflection: one batch per model a round.
    assert (run.rounds, run.batches, run.submitted, run.imported) == (3, 6, 48, 48)
    assert run.errors == 0 and run.report.failed_calls == 0 and run.report.n_written == 4
    assert len(submitted) == len(set(submitted)) == 48
    assert (tmp_path / "batch.jsonl").read_text() == _online(en_pool, tmp_path).read_text()
    last = seen[-1]
    assert (last.round, last.phase, last.done, last.batches) == (3, "ended", 2, 2)
    assert last.statuses == {"completed": 2} and last.answered == last.requests == 16
    assert (last.imported, last.errors, last.stages) == (16, 0, {"reflection": 16})
    phases = [(p.round, p.phase) for p in seen if p.phase in ("submitted", "ended")]
    assert phases == [(n, phase) for n in (1, 2, 3) for phase in ("submitted", "ended")]
    # Each poll moves a batch one step: validating, in_progress, then its end.
    assert [p.statuses for p in seen if p.round == 1 and p.phase == "waiting"] == [
        {"in_progress": 2}
    ]
    assert run.report.batch is not None and run.report.batch.calls == 48


def test_a_finished_run_asks_nothing_more(en_pool: Path, tmp_path: Path) -> None:
    with LocalServer(EN_ITEMS, MODELS) as server:
        _run(_plan(en_pool, tmp_path, server.base_url))
        again = _run(_plan(en_pool, tmp_path, server.base_url))
        assert len(server.batches.submitted) == 48
    assert (again.rounds, again.batches, again.submitted) == (0, 0, 0)
    assert again.report.n_written == 4


def test_files_are_split_at_the_request_limit(en_pool: Path, tmp_path: Path) -> None:
    with LocalServer(EN_ITEMS, MODELS) as server:
        run = _run(_plan(en_pool, tmp_path, server.base_url), max_requests=3)
        client = openai.OpenAI(base_url=server.base_url, api_key="x")
        sizes = [b.request_counts.total for b in client.batches.list(limit=100) if b.request_counts]
    # 8 requests a model a round: 3 + 3 + 2, for 2 models and 3 rounds.
    assert run.batches == 18 and sorted(sizes) == [2] * 6 + [3] * 12


@pytest.mark.parametrize(
    "faults",
    [
        BatchFaults(line_error_rate=0.3),
        BatchFaults(line_drop_rate=0.3),
        BatchFaults(expire_rate=0.5),
        BatchFaults(fail_rate=0.3),
    ],
)
def test_imperfect_batches_are_asked_again(
    en_pool: Path, tmp_path: Path, faults: BatchFaults
) -> None:
    with LocalServer(EN_ITEMS, MODELS, batch_faults=faults) as server:
        run = _run(_plan(en_pool, tmp_path, server.base_url), max_batch_attempts=10)
        submitted = Counter(server.batches.submitted)
    assert run.errors > 0 and run.rounds > 3
    assert run.report.failed_calls == 0 and run.report.n_written == 4
    # A request goes out again only after a result that is an error or missing.
    assert sum(submitted.values()) == 48 + run.errors
    assert (tmp_path / "batch.jsonl").read_text() == _online(en_pool, tmp_path).read_text()


def test_failed_batches_spend_the_budget_then_the_calls_fail(en_pool: Path, tmp_path: Path) -> None:
    with LocalServer(EN_ITEMS, MODELS, batch_faults=BatchFaults(fail_rate=1.0)) as server:
        run = _run(_plan(en_pool, tmp_path, server.base_url), max_batch_attempts=2)
        submitted = Counter(server.batches.submitted)
    # Two rounds of generation batches, both failed, then the calls are recorded failed.
    assert run.rounds == 2 and run.errors == 32 and set(submitted.values()) == {2}
    assert run.report.failed_calls == 32
    assert all(row.answered == 0 and row.failed == 8 for row in run.report.participants)
    with RunStore(tmp_path / "batch.db") as store:
        errors = store.batch_errors()
    assert {n for n, _ in errors.values()} == {2}
    assert all("(failed): the batch failed" in why for _, why in errors.values())


def test_batch_prices_are_half_unless_given(en_pool: Path, tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(
        json.dumps(
            {
                "good": {"input": 2.0, "output": 8.0},
                "bad": {"input": 1.0, "output": 4.0, "batch_input": 0.1, "batch_output": 0.4},
            }
        )
    )
    with LocalServer(EN_ITEMS, MODELS) as server:
        run = _run(_plan(en_pool, tmp_path, server.base_url, prices=prices))
    with RunStore(tmp_path / "batch.db") as store:
        rows = store.batch_calls()
    online = {"good": (2.0, 8.0), "bad": (1.0, 4.0)}
    paid = {"good": (1.0, 4.0), "bad": (0.1, 0.4)}

    def total(table: dict[str, tuple[float, float]]) -> float:
        return sum((p * table[m][0] + c * table[m][1]) / 1e6 for m, p, c, _ in rows)

    batch = run.report.batch
    assert batch is not None and batch.calls == 48
    assert batch.cost == pytest.approx(total(paid), rel=1e-12)
    assert batch.online_cost == pytest.approx(total(online), rel=1e-12)
    assert run.report.store_totals.cost == pytest.approx(total(paid), rel=1e-12)


def test_a_bad_poll_is_refused(en_pool: Path, tmp_path: Path) -> None:
    with LocalServer(EN_ITEMS, MODELS) as server:
        plan = _plan(en_pool, tmp_path, server.base_url)
        with pytest.raises(SynthError, match="poll seconds must be 0 or more"):
            run_batch_api(plan, poll_seconds=-1)
        assert server.batches.submitted == []


def test_an_endpoint_that_does_not_answer_stops_before_any_upload(
    en_pool: Path, tmp_path: Path
) -> None:
    with pytest.raises(SynthError, match=r"cannot reach http://127\.0\.0\.1:9/v1"):
        _run(_plan(en_pool, tmp_path, "http://127.0.0.1:9/v1"))


def _kill_on_update(monkeypatch: pytest.MonkeyPatch, field: str, nth: int) -> None:
    """The process dies right after the store records a batch's ``field`` for the
    ``nth`` time... or, for "before", right before it does."""
    real = RunStore.update_batch
    calls = [0]

    def update(self: RunStore, name: str, **fields: str | None) -> None:
        if field in fields:
            calls[0] += 1
            if calls[0] == nth:
                raise Killed()
        real(self, name, **fields)

    monkeypatch.setattr(RunStore, "update_batch", update)


@pytest.mark.parametrize(
    ("field", "nth"),
    [
        ("file_id", 1),  # uploaded, the file id not recorded
        ("file_id", 4),  # in the second round
        ("batch_id", 1),  # created, the batch id not recorded
        ("batch_id", 2),
        ("batch_id", 5),
        ("status", 3),  # polling
    ],
)
def test_a_run_killed_at_a_step_resumes_and_submits_nothing_twice(
    en_pool: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, field: str, nth: int
) -> None:
    with LocalServer(EN_ITEMS, MODELS) as server:
        with monkeypatch.context() as patch:
            _kill_on_update(patch, field, nth)
            with pytest.raises(Killed):
                _run(_plan(en_pool, tmp_path, server.base_url))
        run = _run(_plan(en_pool, tmp_path, server.base_url))
        submitted = server.batches.submitted
    assert len(submitted) == len(set(submitted)) == 48
    assert run.report.failed_calls == 0
    assert (tmp_path / "batch.jsonl").read_text() == _online(en_pool, tmp_path).read_text()
    if field == "batch_id":
        assert run.resumed >= 1  # the batch created before the kill was found by its name


def test_a_run_killed_while_importing_imports_again(
    en_pool: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = RunStore.mark_batch_imported

    def mark(self: RunStore, name: str, status: str) -> None:
        raise Killed()

    with LocalServer(EN_ITEMS, MODELS) as server:
        monkeypatch.setattr(RunStore, "mark_batch_imported", mark)
        with pytest.raises(Killed):
            _run(_plan(en_pool, tmp_path, server.base_url))
        with RunStore(tmp_path / "batch.db") as store:
            assert store.totals()["calls"] == 0  # the import was rolled back whole
        monkeypatch.setattr(RunStore, "mark_batch_imported", real)
        run = _run(_plan(en_pool, tmp_path, server.base_url))
        submitted = server.batches.submitted
    assert len(submitted) == len(set(submitted)) == 48
    assert run.resumed == 2 and run.report.failed_calls == 0


def test_batches_are_found_by_name_across_pages(en_pool: Path, tmp_path: Path) -> None:
    with LocalServer(EN_ITEMS, MODELS) as server:
        _run(_plan(en_pool, tmp_path, server.base_url), max_requests=1)
        client = openai.OpenAI(base_url=server.base_url, api_key="x")
        first = client.batches.list(limit=100)
        names = [(b.metadata or {}).get("cat_synth") for b in client.batches.list(limit=7)]
    assert len(first.data) == 48 and not first.has_more
    assert len(names) == 48 == len(set(names))  # seven pages, each batch once


def test_a_create_whose_answer_is_lost_is_found_not_sent_again(
    en_pool: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Batches.create
    lost = [0]

    def create(self: Batches, **kwargs: Any) -> Any:
        made = real(self, **kwargs)
        if lost[0] < 2:  # the batch exists, but its answer never arrives
            lost[0] += 1
            raise openai.APIConnectionError(request=httpx2.Request("POST", "http://x/v1/batches"))
        return made

    monkeypatch.setattr(Batches, "create", create)
    with LocalServer(EN_ITEMS, MODELS) as server:
        run = _run(_plan(en_pool, tmp_path, server.base_url))
        submitted = server.batches.submitted
    assert lost[0] == 2 and run.batches == 6
    assert len(submitted) == len(set(submitted)) == 48
    assert run.report.failed_calls == 0


def test_the_look_up_by_name_stops_at_batches_older_than_the_file(
    en_pool: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with LocalServer(EN_ITEMS, MODELS) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x")
        old = client.files.create(file=("old.jsonl", b"\n"), purpose="batch")
        for _ in range(250):  # another run's batches, two hours old
            made = client.batches.create(
                input_file_id=old.id, endpoint="/v1/chat/completions", completion_window="24h"
            )
            server.batches._batches[made.id]["created_at"] -= 7200
        pages = Counter[str]()
        real_list = server.batches.list

        def counting(limit: int = 20, after: str | None = None) -> dict[str, Any]:
            pages[str(after)] += 1
            return real_list(limit, after)

        monkeypatch.setattr(server.batches, "list", counting)

        def killed(self: Batches, **kwargs: Any) -> Any:
            raise Killed()

        with monkeypatch.context() as patch:
            patch.setattr(Batches, "create", killed)  # uploaded and recorded; no batch yet
            with pytest.raises(Killed):
                _run(_plan(en_pool, tmp_path, server.base_url))
        run = _run(_plan(en_pool, tmp_path, server.base_url))
        submitted = server.batches.submitted
    assert run.resumed == 0 and len(submitted) == len(set(submitted)) == 48
    # One page: the first batch older than the file ends the look-up (not all three).
    assert sum(pages.values()) == 1


def test_batches_over_the_providers_limit_are_asked_again_free(
    en_pool: Path, tmp_path: Path
) -> None:
    # 8 requests a model a round in files of 3, 3 and 2; at most 5 in flight a model:
    # the second file of each model is refused while the first runs.
    faults = BatchFaults(max_enqueued=5)
    seen: list[BatchProgress] = []
    with LocalServer(EN_ITEMS, MODELS, batch_faults=faults) as server:
        plan = _plan(en_pool, tmp_path, server.base_url)
        run = _run(plan, max_requests=3, on_batches=seen.append)
    assert run.errors == 0 and run.report.failed_calls == 0
    assert next(p.refused for p in seen if p.phase == "ended") == 2
    assert (tmp_path / "batch.jsonl").read_text() == _online(en_pool, tmp_path).read_text()


def test_batches_always_over_the_limit_spend_their_attempts(en_pool: Path, tmp_path: Path) -> None:
    with LocalServer(EN_ITEMS, MODELS, batch_faults=BatchFaults(max_enqueued=1)) as server:
        run = _run(_plan(en_pool, tmp_path, server.base_url), max_requests=3)
    # No batch of a model got answers: each refusal counts, and after three the calls fail.
    assert run.rounds == 3 and run.errors == 48 and run.report.failed_calls == 32
    with RunStore(tmp_path / "batch.db") as store:
        errors = store.batch_errors()
    assert all("token_limit_exceeded" not in why for _, why in errors.values())
    assert all("Enqueued token limit reached" in why for _, why in errors.values())


def test_cancelled_batches_are_imported_and_asked_again(
    en_pool: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with LocalServer(EN_ITEMS, MODELS) as server:
        plan = _plan(en_pool, tmp_path, server.base_url)
        with monkeypatch.context() as patch:
            _kill_on_update(patch, "batch_id", 2)  # the second batch made, not recorded
            with pytest.raises(Killed):
                _run(plan)
        cancelled = cancel_batches(plan)
        assert [status for _, status in cancelled] == ["cancelling", "cancelling"]
        # Asked again, the provider has cancelled them: nothing is left to cancel.
        assert cancel_batches(plan) == []
        run = _run(plan)
        submitted = Counter(server.batches.submitted)
    # The round's 16 generation requests: cancelled unanswered (one attempt), asked again.
    assert run.errors == 16 and run.report.failed_calls == 0
    assert sum(submitted.values()) == 48 + 16 and set(submitted.values()) <= {1, 2}
    assert (tmp_path / "batch.jsonl").read_text() == _online(en_pool, tmp_path).read_text()


def test_batches_made_at_an_earlier_endpoint_are_polled_there(
    en_pool: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with LocalServer(EN_ITEMS, MODELS) as first, LocalServer(EN_ITEMS, MODELS) as second:
        with monkeypatch.context() as patch:
            _kill_on_update(patch, "status", 3)  # the first round's batches created
            with pytest.raises(Killed):
                _run(_plan(en_pool, tmp_path, first.base_url))
        run = _run(_plan(en_pool, tmp_path, second.base_url))
        at_first, at_second = first.batches.submitted, second.batches.submitted
    # Round 1 was made and answered at the first endpoint; rounds 2 and 3 at the second.
    assert (len(at_first), len(at_second)) == (16, 32) and run.report.failed_calls == 0
    assert (tmp_path / "batch.jsonl").read_text() == _online(en_pool, tmp_path).read_text()


def test_an_api_error_stops_the_run_saying_how_to_resume_without_the_key(
    en_pool: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-123")

    def refuse(self: Files, **kwargs: Any) -> Any:
        request = httpx2.Request("POST", "http://x/v1/files")
        response = httpx2.Response(403, request=request)
        raise openai.PermissionDeniedError(
            "key sk-secret-123 may not upload", response=response, body=None
        )

    with LocalServer(EN_ITEMS, MODELS) as server:
        plan = _plan(en_pool, tmp_path, server.base_url)
        with monkeypatch.context() as patch:
            patch.setattr(Files, "create", refuse)
            with pytest.raises(SynthError) as stopped:
                _run(plan)
        message = str(stopped.value)
        assert "upload failed (PermissionDeniedError 403: key *** may not upload)" in message
        assert "sk-secret" not in message and "run the same command again" in message
        run = _run(plan)  # resumed: the batches planned are uploaded now
        assert len(server.batches.submitted) == 48 and run.report.failed_calls == 0
