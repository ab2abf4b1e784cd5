"""Replayed models of the local server: a subject of a response matrix answers as it did
(the key where 1, a wrong option where 0, no option at all where it has no answer),
through the real ``openai`` client and the project's own grader."""

from __future__ import annotations

import gzip
import json
import re
import select
import subprocess
import sys
from pathlib import Path

import openai
import pytest

from itempool import PoolItem
from synth.errors import SynthError
from synth.grading import grade
from synth.local_server import LocalServer, read_replay
from synth.local_server.server import main
from tests.synth.test_local_server import BY_ID, ITEMS, ask, client, reply_text

REPO = Path(__file__).resolve().parents[2]
RECORDED = {"en-planet": 1, "en-water": 0, "en-multi": 1, "zh-capital": 0, "zh-order": 1}


def _graded(api: openai.OpenAI, model: str, item: PoolItem) -> tuple[str | None, bool]:
    g = grade(reply_text(api, model, ask(item)), item)
    return g.answer, g.correct


def test_a_replayed_model_answers_as_recorded() -> None:
    with LocalServer(ITEMS, {"good": 0.8}, replay={"rec": RECORDED}, seed=5) as server:
        api = client(server.base_url)
        assert [m.id for m in api.models.list().data] == ["good", "rec"]
        for item_id, value in RECORDED.items():
            item = BY_ID[item_id]
            for _ in range(2):  # the same request, the same reply
                answer, correct = _graded(api, "rec", item)
                assert answer is not None and correct is bool(value), item_id
        # No recorded answer: a reply the grader reads no option from.
        answer, correct = _graded(api, "rec", BY_ID["en-short"])
        assert answer is None and not correct
        assert server.p_right("rec", "en-planet") == 1.0
        assert server.p_right("rec", "en-water") == 0.0
        assert server.p_right("rec", "en-short") == 0.0
    # Only replayed models: no simulated one is needed.
    with LocalServer(ITEMS, {}, replay={"rec": RECORDED}) as server:
        assert _graded(client(server.base_url), "rec", BY_ID["en-planet"]) == ("B", True)


def test_repeated_questions_are_told_apart_by_their_options() -> None:
    stem = "Which of these is the chemical symbol of a metal used in aircraft?"
    first = PoolItem(id="first", question=stem, options={"A": "Al", "B": "N", "C": "O"}, answer="A")
    # The same stem with other options; one option reads "B" (boron), which makes a bare
    # "Answer: B" ambiguous for the grader: the server writes "(B)" instead.
    second = PoolItem(
        id="second", question=stem, options={"A": "He", "B": "Ti", "C": "B"}, answer="B"
    )
    copy = first.model_copy(update={"id": "copy"})  # the same question and options
    replay = {"rec": {"first": 1, "second": 1, "copy": 0}}
    with LocalServer([first, second, copy], {}, replay=replay) as server:
        api = client(server.base_url)
        assert _graded(api, "rec", first) == ("A", True)
        assert _graded(api, "rec", second) == ("B", True)
        # A request for "copy" cannot be told from one for "first": it is "first".
        assert _graded(api, "rec", copy) == ("A", True)
        [*_, last] = server.records
        assert last.item_id == "first"


def _write_matrix(tmp_path: Path) -> Path:
    path = tmp_path / "responses.csv.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("model,en-planet,en-water,en-short\ns1,1,0,\ns2,0,,1\n")
    return path


def test_read_replay(tmp_path: Path) -> None:
    path = _write_matrix(tmp_path)
    assert read_replay(path) == {
        "s1": {"en-planet": 1, "en-water": 0},
        "s2": {"en-planet": 0, "en-short": 1},
    }
    assert list(read_replay(path, ["s2"])) == ["s2"]
    with pytest.raises(SynthError, match=r"has no subject 'nope' \(it has 2: s1, s2\)"):
        read_replay(path, ["nope"])
    with pytest.raises(SynthError, match="--replay"):
        read_replay(tmp_path / "absent.jsonl")


def _pool(tmp_path: Path) -> Path:
    pool = tmp_path / "pool"
    pool.mkdir()
    (pool / "pool.json").write_text(json.dumps({"name": "tiny", "language": "en"}))
    english = [item for item in ITEMS if item.id.startswith("en")]
    (pool / "items.jsonl").write_text("".join(item.model_dump_json() + "\n" for item in english))
    return pool


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "give --models NAME=P,..., --replay RESPONSES or --replies FILE"),
        (["--models", "m=0.5", "--replay-subjects", "s1"], "--replay-subjects picks subjects"),
    ],
)
def test_command_line_needs_models(
    tmp_path: Path, extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["--pool", str(_pool(tmp_path)), *extra])
    assert caught.value.code == 2 and message in capsys.readouterr().err


def test_command_line_names_an_unknown_subject(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--pool", str(_pool(tmp_path)), "--replay", str(_write_matrix(tmp_path))]
    assert main([*argv, "--replay-subjects", "s1,nope"]) == 2
    assert "has no subject 'nope'" in capsys.readouterr().err


def test_command_line_replays_a_matrix(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "synth.local_server", "--pool", str(_pool(tmp_path))]
    command += ["--replay", str(_write_matrix(tmp_path)), "--replay-subjects", "s1"]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 20.0)
        assert ready, "the server printed nothing within 20 s"
        line = process.stdout.readline().strip()
        assert re.fullmatch(r"READY http://127\.0\.0\.1:\d+/v1", line)
        api = client(line.split()[1])
        assert [m.id for m in api.models.list().data] == ["s1"]
        assert _graded(api, "s1", BY_ID["en-planet"]) == ("B", True)
        assert _graded(api, "s1", BY_ID["en-water"])[1] is False
        assert _graded(api, "s1", BY_ID["en-short"]) == (None, False)
        with pytest.raises(openai.NotFoundError):
            reply_text(api, "s2", ask(BY_ID["en-planet"]))  # not replayed
    finally:
        process.terminate()
        process.wait(timeout=10)
