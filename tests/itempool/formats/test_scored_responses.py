"""Tests of the scored readers and writers in itempool.formats.responses: ordered
scores 0..m per item."""

from __future__ import annotations

import gzip
import time
from pathlib import Path

import numpy as np
import pytest

from irt.errors import ResponseDataError
from irt.polytomous_responses import PolytomousResponses
from irt.responses import MISSING, ResponseMatrix
from itempool.formats.responses import (
    ScoredSubjectResponses,
    read_responses,
    read_scored_responses,
    write_csv,
    write_jsonl,
    write_scored_csv,
    write_scored_jsonl,
)
from tests.itempool.formats.test_responses import _csv, _jsonl, _write


def _error(path: Path, **kwargs: object) -> str:
    with pytest.raises(ResponseDataError) as info:
        read_scored_responses(path, **kwargs)  # type: ignore[arg-type]
    message = str(info.value)
    assert "\n" not in message
    return message


def _example() -> PolytomousResponses:
    values = np.array(
        [[2, 0, 1, 4], [0, MISSING, 3, MISSING], [MISSING, 1, MISSING, 0]], dtype=np.int16
    )
    return PolytomousResponses(
        ("gpt-4o", "a, b", 'say "hi"'), ("q1", "q 2", "Ω", "NA"), values, (3, 2, 6, 7)
    )


def _assert_same(a: PolytomousResponses, b: PolytomousResponses) -> None:
    assert a.subject_ids == b.subject_ids
    assert a.item_ids == b.item_ids
    assert a.values.dtype == b.values.dtype == np.int16
    np.testing.assert_array_equal(a.values, b.values)
    assert a.n_categories == b.n_categories


# --- reading --------------------------------------------------------------------------


def test_jsonl_scores_missing_and_inferred_categories(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path,
        '{"subject_id": "m1", "responses": {"q1": 2, "q2": 0}}',
        '{"subject_id": "m2", "responses": {"q3": 4, "q1": 0}}',
    )
    r = read_scored_responses(path)
    assert r.subject_ids == ("m1", "m2")
    assert r.item_ids == ("q1", "q2", "q3")
    np.testing.assert_array_equal(r.values, [[2, 0, MISSING], [0, MISSING, 4]])
    # Highest score + 1, at least 2: q2 was only ever scored 0.
    assert r.n_categories == (3, 2, 5)


def test_jsonl_booleans_are_one_and_zero(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, '{"subject_id": "a", "responses": {"q1": true, "q2": false, "q3": 3}}')
    r = read_scored_responses(path)
    np.testing.assert_array_equal(r.values, [[1, 0, 3]])
    ok = ScoredSubjectResponses.model_validate({"subject_id": "a", "responses": {"q": True}})
    assert ok.responses == {"q": True}


def test_csv_scores_missing_and_spellings(tmp_path: Path) -> None:
    path = _csv(
        tmp_path,
        "model,q1,q2,q3,q4",
        "a,2,0,,NA",
        "b,3.0,1.0,True,False",  # pandas writes "3.0" for a column with gaps
        "c,, 2 ,1500,na",  # 1500 is beyond the exact table: the loose path
    )
    r = read_scored_responses(path)
    assert r.subject_ids == ("a", "b", "c")
    assert r.item_ids == ("q1", "q2", "q3", "q4")
    np.testing.assert_array_equal(
        r.values, [[2, 0, MISSING, MISSING], [3, 1, 1, 0], [MISSING, 2, 1500, MISSING]]
    )
    assert r.n_categories == (4, 3, 1501, 2)


def test_csv_without_id_column(tmp_path: Path) -> None:
    path = _csv(tmp_path, '"Item.1","Item.2"', "2,NA", "", "0,1")
    r = read_scored_responses(path, id_column=False)
    assert r.subject_ids == ("s0001", "s0002")
    np.testing.assert_array_equal(r.values, [[2, MISSING], [0, 1]])


@pytest.mark.parametrize("name", ["responses.jsonl", "responses.csv"])
def test_binary_file_reads_as_two_categories_everywhere(tmp_path: Path, name: str) -> None:
    values = np.array([[1, 0, 0], [0, MISSING, 0], [1, 1, 0]], dtype=np.int8)
    m = ResponseMatrix(("a", "b", "c"), ("q1", "q2", "q3"), values)
    path = tmp_path / name
    (write_csv if name.endswith(".csv") else write_jsonl)(m, path)
    r = read_scored_responses(path)
    assert r.n_categories == (2, 2, 2)
    assert r.is_binary
    np.testing.assert_array_equal(r.values, values)
    assert r.values.dtype == np.int16
    np.testing.assert_array_equal(read_responses(path).values, values)


# --- n_categories ------------------------------------------------------------------------


def test_n_categories_covers_a_top_score_nobody_reached(tmp_path: Path) -> None:
    path = _csv(tmp_path, "id,q1,q2", "a,2,0", "b,1,1")
    assert read_scored_responses(path).n_categories == (3, 2)
    r = read_scored_responses(path, n_categories={"q2": 5})
    assert r.n_categories == (3, 5)  # q1 still read off the data


@pytest.mark.parametrize(
    ("name", "lines", "expected"),
    [
        (
            "responses.csv",
            ("id,q1,q2", "a,2,0", "", "b,1,3"),
            "responses.csv line 4: item 'q2' allows scores 0..2, got 3 (subject 'b')",
        ),
        (
            "responses.jsonl",
            (
                '{"subject_id": "a", "responses": {"q1": 2, "q2": 0}}',
                "",
                '{"subject_id": "b", "responses": {"q1": 1, "q2": 3}}',
            ),
            "responses.jsonl line 3: item 'q2' allows scores 0..2, got 3 (subject 'b')",
        ),
    ],
)
def test_score_at_or_above_the_given_count_names_file_line_subject_item(
    tmp_path: Path, name: str, lines: tuple[str, ...], expected: str
) -> None:
    path = _write(tmp_path / name, "\n".join(lines) + "\n")
    assert _error(path, n_categories={"q2": 3}) == expected
    assert read_scored_responses(path, n_categories={"q2": 4}).n_categories[1] == 4


@pytest.mark.parametrize(
    ("n_categories", "expected"),
    [
        ({"q9": 3}, "responses.csv: n_categories names item 'q9', which the file does not hold"),
        ({"q1": 1}, "n_categories of item 'q1' is 1; it must be 2..32767"),
        ({"q1": 2.0}, "n_categories of item 'q1' is 2.0, not a whole number"),
        ({"q1": True}, "n_categories of item 'q1' is True, not a whole number"),
        ([3, 2], "n_categories must map item ids to counts, got list"),
    ],
)
def test_bad_n_categories(tmp_path: Path, n_categories: object, expected: str) -> None:
    path = _csv(tmp_path, "id,q1,q2", "a,1,0")
    assert _error(path, n_categories=n_categories) == expected


# --- bad values ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("2.0", "whole numbers only"),
        ("0.5", "whole numbers only"),
        ("NaN", "whole numbers only"),
        ("-1", "scores must be 0 or more (leave the item out when it was not answered)"),
        ("null", "scores must be whole numbers 0 or more"),
        ('"2"', "scores must be whole numbers 0 or more"),
        ("[1]", "scores must be whole numbers 0 or more"),
        ("40000", "scores above 32766 are not supported"),
    ],
)
def test_jsonl_bad_score_names_file_line_and_item(tmp_path: Path, value: str, problem: str) -> None:
    path = _jsonl(
        tmp_path,
        '{"subject_id": "a", "responses": {"q1": 3, "q2": 0}}',
        '{"subject_id": "b", "responses": {"q1": true}}',
        f'{{"subject_id": "c", "responses": {{"q1": 1, "q2": {value}}}}}',
    )
    assert _error(path) == f"responses.jsonl line 3: response to item 'q2' is {value}; {problem}"


def test_jsonl_responses_not_an_object(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, '{"subject_id": "a", "responses": [2, 0]}')
    assert _error(path) == (
        "responses.jsonl line 1: responses must be an object of item id -> score, got list"
    )


@pytest.mark.parametrize("value", ["2.5", "-1", "x", "1e3", "40000", "yes"])
def test_csv_bad_cell_names_line_column_and_value(tmp_path: Path, value: str) -> None:
    path = _csv(tmp_path, "id,q1,q2,q3", "a,1,0,4", "", f"b,0,1,{value}")
    assert _error(path) == (
        f"responses.csv line 4, column 'q3': value {value!r} "
        "is not a whole number 0..32766 or empty"
    )


@pytest.mark.parametrize("value", ["nan", "NaN"])
def test_csv_nan_score_is_refused_not_read_as_missing(tmp_path: Path, value: str) -> None:
    path = _csv(tmp_path, "id,q1,q2,q3", "a,1,0,4", "", f"b,0,1,{value}")
    assert _error(path) == (
        f"responses.csv line 4, column 'q3': value {value!r} is not a whole number "
        "0..32766 or empty (NaN is not read as missing: leave the cell empty or write NA)"
    )


def test_jsonl_nan_string_score_is_refused(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, '{"subject_id": "a", "responses": {"q1": 2, "q2": "nan"}}')
    assert _error(path) == (
        "responses.jsonl line 1: response to item 'q2' is \"nan\"; "
        "scores must be whole numbers 0 or more"
    )


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        (
            "responses.csv",
            "id,q1,q2\na,,\n",
            "responses.csv: the response matrix has no answers at all",
        ),
        ("responses.csv", "id,q1\n", "responses.csv: the response matrix is empty"),
        ("responses.jsonl", "\n", "responses.jsonl: the response matrix is empty"),
        ("responses.tsv", "id,q1\na,1\n", "responses.tsv: unknown response file type"),
    ],
)
def test_file_level_errors_name_the_file(
    tmp_path: Path, name: str, text: str, expected: str
) -> None:
    assert _error(_write(tmp_path / name, text)).startswith(expected)


def test_missing_file(tmp_path: Path) -> None:
    assert _error(tmp_path / "nope.jsonl") == f"no such file: {tmp_path / 'nope.jsonl'}"


# --- writing and round trips --------------------------------------------------------------


@pytest.mark.parametrize("name", ["out.csv", "out.csv.gz", "out.jsonl", "out.jsonl.gz"])
def test_round_trip(tmp_path: Path, name: str) -> None:
    r = _example()
    path = tmp_path / name
    (write_scored_csv if ".csv" in name else write_scored_jsonl)(r, path)
    if name.endswith(".gz"):
        assert path.read_bytes()[:2] == b"\x1f\x8b"
    # q1 tops out at 2 of 0..2, q2 at 1 of 0..1; q3 and q4 never reach their top score.
    _assert_same(read_scored_responses(path, n_categories={"Ω": 6, "NA": 7}), r)
    assert read_scored_responses(path).n_categories == (3, 2, 4, 5)


def test_round_trip_of_large_scores_and_the_csv_text(tmp_path: Path) -> None:
    values = np.array([[0, 32766], [MISSING, 1234]], dtype=np.int16)
    r = PolytomousResponses(("a", "b"), ("q1", "q2"), values)
    write_scored_csv(r, tmp_path / "out.csv")
    assert (tmp_path / "out.csv").read_text() == "subject_id,q1,q2\na,0,32766\nb,,1234\n"
    _assert_same(read_scored_responses(tmp_path / "out.csv"), r)
    write_scored_jsonl(r, tmp_path / "out.jsonl")
    assert (tmp_path / "out.jsonl").read_text().splitlines()[1] == (
        '{"subject_id": "b", "responses": {"q2": 1234}}'
    )
    _assert_same(read_scored_responses(tmp_path / "out.jsonl"), r)


def test_gzipped_scored_files_written_elsewhere_are_read(tmp_path: Path) -> None:
    path = tmp_path / "responses.csv.gz"
    path.write_bytes(gzip.compress(b"id,q1,q2\na,3,\nb,0,1\n"))
    np.testing.assert_array_equal(read_scored_responses(path).values, [[3, MISSING], [0, 1]])


def test_writers_refuse_blank_ids(tmp_path: Path) -> None:
    r = PolytomousResponses(("a", " "), ("q1",), np.array([[2], [0]], dtype=np.int16))
    with pytest.raises(ResponseDataError, match="blank subject id"):
        write_scored_jsonl(r, tmp_path / "out.jsonl")


def test_large_file_reads_in_reasonable_time(tmp_path: Path) -> None:
    rng = np.random.default_rng(15)
    n, j = 200, 5_000
    values = rng.integers(0, 5, (n, j)).astype(np.int16)
    values[1:][rng.random((n - 1, j)) < 0.1] = MISSING  # row 0 fixes the JSONL item order
    r = PolytomousResponses(
        tuple(f"model-{i}" for i in range(n)), tuple(f"q{k}" for k in range(j)), values
    )
    for name in ("big.jsonl", "big.csv.gz"):
        path = tmp_path / name
        (write_scored_csv if ".csv" in name else write_scored_jsonl)(r, path)
        start = time.perf_counter()
        back = read_scored_responses(path)
        elapsed = time.perf_counter() - start
        print(f"read_scored_responses {name} {n} x {j}: {elapsed:.3f} s")
        _assert_same(back, r)
