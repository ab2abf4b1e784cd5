"""The local server's Batch API through the real ``openai`` client: files up and down,
the status transitions, and batches that come back imperfect."""

from __future__ import annotations

import io
from pathlib import Path

import openai
import pytest

from synth.backend import ChatRequest
from synth.batch_files import read_results, request_line
from synth.local_server import LocalServer
from synth.local_server.batches import BatchFaults
from synth.prompts import Style, generation
from tests.synth.pools import EN_ITEMS


def _upload(client: openai.OpenAI, n: int) -> tuple[str, list[str]]:
    requests = [ChatRequest("good", generation(item, "en", Style.DIRECT)) for item in EN_ITEMS[:n]]
    text = "".join(request_line(r) + "\n" for r in requests)
    made = client.files.create(file=("req.jsonl", io.BytesIO(text.encode())), purpose="batch")
    return made.id, [r.key for r in requests]


def _run(client: openai.OpenAI, file_id: str) -> list[str]:
    batch = client.batches.create(
        input_file_id=file_id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    seen = [batch.status]
    while batch.status not in ("completed", "failed", "expired", "cancelled"):
        batch = client.batches.retrieve(batch.id)
        seen.append(batch.status)
    return seen


def _results(client: openai.OpenAI, file_id: str | None, tmp: Path, name: str) -> list[str]:
    if file_id is None:
        return []
    path = tmp / name
    path.write_text(client.files.content(file_id).text)
    return [r.key for r in read_results([path])]


def test_a_batch_is_validated_run_and_completed(tmp_path: Path) -> None:
    with LocalServer(EN_ITEMS, {"good": 0.9}) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x")
        file_id, keys = _upload(client, 6)
        assert client.files.retrieve(file_id).purpose == "batch"
        assert _run(client, file_id) == ["validating", "in_progress", "completed"]
        batch = client.batches.list().data[0]
        assert batch.request_counts is not None and batch.request_counts.completed == 6
        answered = _results(client, batch.output_file_id, tmp_path, "out.jsonl")
        assert sorted(answered) == sorted(keys) and batch.error_file_id is None
        assert server.batches.submitted == keys
        # The same replies as over /v1/chat/completions.
        line = next(read_results([tmp_path / "out.jsonl"]))
        direct = client.chat.completions.create(
            model="good",
            messages=[
                {"role": r, "content": c} for r, c in generation(EN_ITEMS[0], "en", Style.DIRECT)
            ],
            temperature=0.0,
            seed=0,
        )
        assert line.reply is not None and line.reply.text == direct.choices[0].message.content


@pytest.mark.parametrize(
    ("faults", "end"),
    [
        (BatchFaults(line_error_rate=0.5), "completed"),
        (BatchFaults(line_drop_rate=0.5), "completed"),
        (BatchFaults(expire_rate=1.0), "expired"),
        (BatchFaults(fail_rate=1.0), "failed"),
    ],
)
def test_imperfect_batches(tmp_path: Path, faults: BatchFaults, end: str) -> None:
    with LocalServer(EN_ITEMS, {"good": 0.9}, batch_faults=faults) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x")
        file_id, keys = _upload(client, 20)
        assert _run(client, file_id)[-1] == end
        batch = client.batches.list().data[0]
        answered = _results(client, batch.output_file_id, tmp_path, "out.jsonl")
        errors = _results(client, batch.error_file_id, tmp_path, "err.jsonl")
    assert set(answered) | set(errors) <= set(keys)
    if end == "failed":
        assert answered == errors == [] and batch.errors is not None
    elif faults.line_drop_rate:
        assert errors == [] and 0 < len(answered) < 20
    else:
        assert len(answered) + len(errors) == 20 and errors


def test_a_batch_can_be_cancelled_and_bad_input_is_refused() -> None:
    with LocalServer(EN_ITEMS, {"good": 0.9}) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
        file_id, _ = _upload(client, 2)
        batch = client.batches.create(
            input_file_id=file_id, endpoint="/v1/chat/completions", completion_window="24h"
        )
        assert client.batches.cancel(batch.id).status == "cancelling"
        assert client.batches.retrieve(batch.id).status == "cancelled"
        with pytest.raises(openai.BadRequestError):
            client.batches.create(
                input_file_id="file-nope", endpoint="/v1/chat/completions", completion_window="24h"
            )
        with pytest.raises(openai.NotFoundError):
            client.batches.retrieve("batch_nope")


def test_a_batch_runs_for_the_polls_it_is_given(tmp_path: Path) -> None:
    faults = BatchFaults(in_progress_polls=3)
    with LocalServer(EN_ITEMS, {"good": 0.9}, batch_faults=faults) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x")
        file_id, _ = _upload(client, 2)
        statuses = _run(client, file_id)
    assert statuses == ["validating", "in_progress", "in_progress", "in_progress", "completed"]
