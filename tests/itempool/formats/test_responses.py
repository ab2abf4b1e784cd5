"""Tests of itempool.formats.responses: JSONL and wide CSV response files,
their errors and writers."""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from irt.errors import ResponseDataError
from irt.responses import MISSING, ResponseMatrix
from itempool.formats import responses_csv
from itempool.formats.responses import SubjectResponses, read_responses, write_csv, write_jsonl

SHARED_DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _jsonl(tmp_path: Path, *lines: str) -> Path:
    return _write(tmp_path / "responses.jsonl", "\n".join(lines) + "\n")


def _csv(tmp_path: Path, *lines: str) -> Path:
    return _write(tmp_path / "responses.csv", "\n".join(lines) + "\n")


def _error(path: Path, *, id_column: bool = True) -> str:
    with pytest.raises(ResponseDataError) as info:
        read_responses(path, id_column=id_column)
    message = str(info.value)
    assert "\n" not in message
    return message


# --- JSONL --------------------------------------------------------------------------


def test_jsonl_items_in_order_of_first_appearance_and_missing_absent(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path,
        '{"subject_id": "a", "responses": {"q2": 1, "q1": 0}}',
        '{"subject_id": "b", "responses": {"q3": 1, "q1": 1}}',
    )
    m = read_responses(path)
    assert m.subject_ids == ("a", "b")
    assert m.item_ids == ("q2", "q1", "q3")
    np.testing.assert_array_equal(m.values, [[1, 0, MISSING], [MISSING, 1, 1]])


def test_jsonl_booleans_are_one_and_zero(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, '{"subject_id": "a", "responses": {"q1": true, "q2": false}}')
    np.testing.assert_array_equal(read_responses(path).values, [[1, 0]])


def test_jsonl_blank_lines_are_skipped_but_counted(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "responses.jsonl",
        '\n{"subject_id": "a", "responses": {"q1": 1}}\n   \n\n'
        '{"subject_id": "b", "responses": {"q1": 0}}\n\n',
    )
    assert read_responses(path).subject_ids == ("a", "b")
    _write(path, path.read_text() + '{"subject_id": "c", "responses": {"q1": 7}}\n')
    assert "responses.jsonl line 7:" in _error(path)


def test_jsonl_invalid_json_names_the_line(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path,
        '{"subject_id": "a", "responses": {"q1": 1}}',
        '{"subject_id": "b" "responses": {"q1": 1}}',
    )
    assert _error(path) == "responses.jsonl line 2: not valid JSON (Expecting ',' delimiter)"


@pytest.mark.parametrize("value", ["0.5", "2", '"1"', "null", "1.0", "-1", "[1]"])
def test_jsonl_rejects_responses_other_than_zero_or_one(tmp_path: Path, value: str) -> None:
    path = _jsonl(
        tmp_path,
        '{"subject_id": "a", "responses": {"q1": 1, "q2": 0}}',
        '{"subject_id": "b", "responses": {"q1": 1}}',
        f'{{"subject_id": "c", "responses": {{"q1": 1, "q2": {value}}}}}',
    )
    assert _error(path) == (
        f"responses.jsonl line 3: response to item 'q2' is {value}; only 0 or 1 allowed"
    )


def test_jsonl_duplicated_subject_names_both_lines(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path,
        '{"subject_id": "x", "responses": {"q1": 1}}',
        '{"subject_id": "gpt-4o", "responses": {"q1": 1}}',
        '{"subject_id": "gpt-4o", "responses": {"q1": 0}}',
    )
    assert _error(path) == (
        "responses.jsonl line 3: duplicated subject id 'gpt-4o' (first on line 2)"
    )


def test_jsonl_duplicated_item_within_a_line(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, '{"subject_id": "a", "responses": {"q1": 1, "q1": 0}}')
    message = _error(path)
    assert "line 1" in message
    assert "'q1' appears twice" in message


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"subject_id": "a", "responses": {}, "model": "x"}', "unexpected key 'model'"),
        ('{"subject_id": "a"}', "missing key 'responses'"),
        ('{"responses": {"q1": 1}}', "missing key 'subject_id'"),
        ('{"subject_id": "", "responses": {"q1": 1}}', "subject_id must be a non-empty"),
        ('{"subject_id": "  ", "responses": {"q1": 1}}', "subject_id must be a non-empty"),
        ('{"subject_id": 7, "responses": {"q1": 1}}', "got 7"),
        ('{"subject_id": "a", "responses": [1, 0]}', "responses must be an object"),
        ('{"subject_id": "a", "responses": {"": 1}}', "item id is empty"),
        ('["a", {"q1": 1}]', "expected a JSON object, got list"),
    ],
)
def test_jsonl_rejects_malformed_lines(tmp_path: Path, line: str, expected: str) -> None:
    path = _jsonl(tmp_path, '{"subject_id": "first", "responses": {"q1": 1}}', line)
    message = _error(path)
    assert message.startswith("responses.jsonl line 2: ")
    assert expected in message


def test_subject_model_forbids_extra_keys() -> None:
    with pytest.raises(ValidationError) as info:
        SubjectResponses.model_validate({"subject_id": "a", "responses": {}, "score": 0.5})
    assert info.value.errors()[0]["type"] == "extra_forbidden"
    ok = SubjectResponses.model_validate({"subject_id": "a", "responses": {"q": True}})
    assert ok.responses == {"q": 1}


@pytest.mark.parametrize(
    "text", ["", "\n\n", '{"subject_id": "a", "responses": {}}\n'], ids=["empty", "blank", "none"]
)
def test_jsonl_without_answers_is_an_error(tmp_path: Path, text: str) -> None:
    message = _error(_write(tmp_path / "responses.jsonl", text))
    assert message.startswith("responses.jsonl: ")


# --- CSV ----------------------------------------------------------------------------


def test_csv_reads_ids_values_and_missing(tmp_path: Path) -> None:
    path = _csv(
        tmp_path,
        "model,q1,q2,q3,q4",
        "a,1,0,,NA",
        "b,1.0,0.0,True,False",
        "c,, 1 ,true,na",
    )
    m = read_responses(path)
    assert m.subject_ids == ("a", "b", "c")
    assert m.item_ids == ("q1", "q2", "q3", "q4")
    np.testing.assert_array_equal(
        m.values, [[1, 0, MISSING, MISSING], [1, 0, 1, 0], [MISSING, 1, 1, MISSING]]
    )


@pytest.mark.parametrize("value", ["x", "2", "0.5", "-1", "yes"])
def test_csv_bad_cell_names_line_column_and_value(tmp_path: Path, value: str) -> None:
    path = _csv(tmp_path, "id,q1,q2,q3", "a,1,0,1", "", f"b,0,1,{value}")
    assert _error(path) == (
        f"responses.csv line 4, column 'q3': value {value!r} is not 0, 1 or empty"
    )


@pytest.mark.parametrize("value", ["nan", "NaN", "NAN", " nan ", "-nan"])
def test_csv_nan_is_refused_not_read_as_missing(tmp_path: Path, value: str) -> None:
    # A NaN is an answer some step failed to compute: read as missing, it dropped one
    # answer of 10,773 without a word.
    path = _csv(tmp_path, "id,q1,q2,q3", "a,1,0,1", "", f"b,0,1,{value}")
    assert _error(path) == (
        f"responses.csv line 4, column 'q3': value {value!r} is not 0, 1 or empty "
        "(NaN is not read as missing: leave the cell empty or write NA)"
    )


@pytest.mark.parametrize(
    ("value", "shown"), [("NaN", "NaN"), ('"nan"', '"nan"'), ('"NaN"', '"NaN"')]
)
def test_jsonl_nan_literal_or_string_is_refused(tmp_path: Path, value: str, shown: str) -> None:
    path = _jsonl(
        tmp_path,
        '{"subject_id": "a", "responses": {"q1": 1}}',
        f'{{"subject_id": "b", "responses": {{"q1": 0, "q2": {value}}}}}',
    )
    assert _error(path) == (
        f"responses.jsonl line 2: response to item 'q2' is {shown}; only 0 or 1 allowed"
    )


@pytest.mark.parametrize("row", ["b,1,0", "b,1,0,1,1"])
def test_csv_ragged_row_names_the_line(tmp_path: Path, row: str) -> None:
    path = _csv(tmp_path, "id,q1,q2,q3", "a,1,0,1", row)
    message = _error(path)
    assert message.startswith("responses.csv line 3: ")
    assert "the header has 4" in message


def test_csv_duplicated_item_column(tmp_path: Path) -> None:
    path = _csv(tmp_path, "id,q1,q2,q1", "a,1,0,1")
    assert _error(path) == ("responses.csv line 1: duplicated item column 'q1' (columns 2 and 4)")


def test_csv_blank_item_column(tmp_path: Path) -> None:
    path = _csv(tmp_path, "id,q1, ,q3", "a,1,0,1")
    assert _error(path) == "responses.csv line 1: column 3 has no item id"


def test_csv_duplicated_subject_names_both_lines(tmp_path: Path) -> None:
    path = _csv(tmp_path, "id,q1", "gpt-4o,1", "b,0", "gpt-4o,0")
    assert _error(path) == (
        "responses.csv line 4: duplicated subject id 'gpt-4o' (first on line 2)"
    )


def test_csv_empty_subject_id(tmp_path: Path) -> None:
    path = _csv(tmp_path, "id,q1", "a,1", ",0")
    assert _error(path) == "responses.csv line 3: the subject id is empty"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "responses.csv: the file is empty"),
        ("id\na\n", "responses.csv line 1: the header names no item columns"),
        ("id,q1\n", "responses.csv: the response matrix is empty"),
        ("id,q1,q2\na,,\n", "responses.csv: the response matrix has no answers at all"),
    ],
)
def test_csv_without_answers_is_an_error(tmp_path: Path, text: str, expected: str) -> None:
    assert _error(_write(tmp_path / "responses.csv", text)) == expected


def test_csv_without_id_column_numbers_the_subjects(tmp_path: Path) -> None:
    path = _csv(tmp_path, '"Item.1","Item.2"', "1,NA", "", "0,1", "NA,0")
    m = read_responses(path, id_column=False)
    assert m.subject_ids == ("s0001", "s0002", "s0003")
    assert m.item_ids == ("Item.1", "Item.2")
    np.testing.assert_array_equal(m.values, [[1, MISSING], [0, 1], [MISSING, 0]])
    _write(path, path.read_text() + "1,x\n")
    assert "line 6, column 'Item.2': value 'x'" in _error(path, id_column=False)


def test_csv_quotes_bom_and_crlf(tmp_path: Path) -> None:
    path = tmp_path / "responses.csv"
    path.write_bytes('\ufeffid,"q,1","q""2"\r\n"x, y",1,0\r\n'.encode())
    m = read_responses(path)
    assert m.subject_ids == ("x, y",)
    assert m.item_ids == ("q,1", 'q"2')


# --- files, suffixes and foreign errors ----------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.csv"
    assert _error(path) == f"no such file: {path}"


@pytest.mark.parametrize("name", ["responses.tsv", "responses.json", "responses.gz", "data"])
def test_unknown_suffix_names_the_accepted_ones(tmp_path: Path, name: str) -> None:
    message = _error(_write(tmp_path / name, "id,q1\na,1\n"))
    assert name in message
    for suffix in (".csv", ".csv.gz", ".jsonl", ".jsonl.gz"):
        assert suffix in message


def test_suffix_is_case_insensitive(tmp_path: Path) -> None:
    assert read_responses(_write(tmp_path / "R.CSV", "id,q1\na,1\n")).n_subjects == 1


def test_gzipped_files_are_read(tmp_path: Path) -> None:
    path = tmp_path / "responses.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write('{"subject_id": "a", "responses": {"q1": 1}}\n')
    assert read_responses(path).item_ids == ("q1",)
    path = tmp_path / "responses.csv.gz"
    path.write_bytes(gzip.compress(b"id,q1\na,0\n"))
    np.testing.assert_array_equal(read_responses(path).values, [[0]])


@pytest.mark.parametrize(
    ("name", "data", "cause"),
    [
        ("responses.csv.gz", b"id,q1\na,1\n", OSError),  # not gzip at all
        # mtime=0: every test worker (pytest-xdist) collects the same parameter.
        ("responses.jsonl.gz", gzip.compress(b'{"subject_id": "a"}' * 50, mtime=0)[:30], EOFError),
        ("responses.csv", b"id,q\xff1\na,1\n", UnicodeDecodeError),
        ("responses.jsonl", b'{"subject_id": "\xc3", "responses": {}}\n', UnicodeDecodeError),
    ],
)
def test_foreign_errors_become_one_line_response_data_errors(
    tmp_path: Path, name: str, data: bytes, cause: type[BaseException]
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ResponseDataError) as info:
        read_responses(path)
    assert name in str(info.value)
    assert "\n" not in str(info.value)
    assert isinstance(info.value.__cause__, cause)


def test_a_directory_is_not_a_file(tmp_path: Path) -> None:
    (tmp_path / "responses.csv").mkdir()
    assert "responses.csv: cannot read the file" in _error(tmp_path / "responses.csv")


# --- writers ------------------------------------------------------------------------


def _example() -> ResponseMatrix:
    values = np.array(
        [[1, 0, 1, 0], [0, MISSING, 1, MISSING], [MISSING, 1, MISSING, 0]], dtype=np.int8
    )
    return ResponseMatrix(("gpt-4o", "a, b", 'say "hi"'), ("q1", "q 2", "Ω", "NA"), values)


def _assert_same(a: ResponseMatrix, b: ResponseMatrix) -> None:
    assert a.subject_ids == b.subject_ids
    assert a.item_ids == b.item_ids
    np.testing.assert_array_equal(a.values, b.values)


@pytest.mark.parametrize("name", ["out.csv", "out.csv.gz", "out.jsonl", "out.jsonl.gz"])
def test_round_trip(tmp_path: Path, name: str) -> None:
    m = _example()
    path = tmp_path / name
    (write_csv if ".csv" in name else write_jsonl)(m, path)
    _assert_same(read_responses(path), m)


@pytest.mark.parametrize("name", ["out.csv", "out.jsonl"])
def test_round_trip_of_ids_with_line_breaks(tmp_path: Path, name: str) -> None:
    # csv.writer leaves a bare "\r" unquoted, which reads back as a line break.
    m = ResponseMatrix(("a\rb", "c\nd", "e\r\nf"), ("q\r1", "\ufeffq2"), np.ones((3, 2), np.int8))
    path = tmp_path / name
    (write_csv if ".csv" in name else write_jsonl)(m, path)
    _assert_same(read_responses(path), m)


def test_written_gzip_is_gzip_and_reproducible(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    write_jsonl(_example(), first)
    write_jsonl(_example(), second)
    assert first.read_bytes()[:2] == b"\x1f\x8b"
    assert gzip.decompress(first.read_bytes()) == gzip.decompress(second.read_bytes())
    assert first.read_bytes()[4:8] == b"\0\0\0\0"  # mtime 0: same bytes on every run


def test_jsonl_writer_leaves_missing_answers_out(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    write_jsonl(_example(), path)
    second = json.loads(path.read_text(encoding="utf-8").splitlines()[1])
    assert second == {"subject_id": "a, b", "responses": {"q1": 0, "Ω": 1}}


def test_jsonl_drops_items_nobody_answered(tmp_path: Path) -> None:
    m = ResponseMatrix(("a", "b"), ("q1", "q2"), np.array([[1, MISSING], [0, MISSING]]))
    write_jsonl(m, tmp_path / "out.jsonl")
    assert read_responses(tmp_path / "out.jsonl").item_ids == ("q1",)


def test_writers_refuse_blank_ids(tmp_path: Path) -> None:
    m = ResponseMatrix(("a", " "), ("q1",), np.array([[1], [0]]))
    with pytest.raises(ResponseDataError, match="blank subject id"):
        write_csv(m, tmp_path / "out.csv")


def test_write_failure_is_a_response_data_error(tmp_path: Path) -> None:
    with pytest.raises(ResponseDataError, match=r"out\.csv: cannot write") as info:
        write_csv(_example(), tmp_path / "no-such-dir" / "out.csv")
    assert isinstance(info.value.__cause__, OSError)


_IDS = st.text(
    alphabet=st.sampled_from("abcxyz019 ,;\"'\t\r\nΩé-_.\x85\u2028\ufeff"), min_size=1, max_size=6
).filter(lambda s: bool(s.strip()))


@st.composite
def _matrices(draw: st.DrawFn) -> ResponseMatrix:
    n = draw(st.integers(1, 5))
    j = draw(st.integers(1, 6))
    cells = draw(st.lists(st.sampled_from([0, 1, MISSING]), min_size=n * j, max_size=n * j))
    values = np.array(cells, dtype=np.int8).reshape(n, j)
    if (values == MISSING).all():
        values[draw(st.integers(0, n - 1)), draw(st.integers(0, j - 1))] = 1
    subjects = draw(st.lists(_IDS, min_size=n, max_size=n, unique=True))
    items = draw(st.lists(_IDS, min_size=j, max_size=j, unique=True))
    return ResponseMatrix(tuple(subjects), tuple(items), values)


def _cells(m: ResponseMatrix) -> dict[tuple[str, str], int]:
    rows, cols = np.nonzero(m.observed)
    return {
        (m.subject_ids[r], m.item_ids[c]): int(m.values[r, c])
        for r, c in zip(rows, cols, strict=True)
    }


@settings(max_examples=60, deadline=None)
@given(m=_matrices(), gz=st.booleans())
def test_round_trip_property(m: ResponseMatrix, gz: bool) -> None:
    suffix = ".gz" if gz else ""
    with tempfile.TemporaryDirectory() as tmp:
        csv_path = Path(tmp) / f"m.csv{suffix}"
        write_csv(m, csv_path)
        _assert_same(read_responses(csv_path), m)

        jsonl_path = Path(tmp) / f"m.jsonl{suffix}"
        write_jsonl(m, jsonl_path)
        back = read_responses(jsonl_path)
    # JSONL cannot hold an item nobody answered, nor fix the item order beyond first
    # appearance; everything else must come back unchanged.
    assert back.subject_ids == m.subject_ids
    assert _cells(back) == _cells(m)
    if m.observed[0].all():
        _assert_same(back, m)


# --- the real data sets ----------------------------------------------------------------


def _shared(relative: str) -> Path:
    path = SHARED_DATA / relative
    if not path.exists():
        pytest.skip(f"shared data not present: {path}")
    return path


def test_mmlu_pro_loads() -> None:
    m = read_responses(_shared("mmlu-pro/responses.csv.gz"))
    assert m.values.shape == (32, 12032)
    assert "repo_merged" in m.subject_ids
    assert not m.is_complete


def test_sat12_with_missing_loads_without_id_column() -> None:
    m = read_responses(_shared("human/mirt_SAT12_binary_NA.csv"), id_column=False)
    assert m.values.shape == (600, 32)
    assert m.subject_ids[0] == "s0001"
    assert m.item_ids[0] == "Item.1"
    assert 0 < (~m.observed).sum() < m.values.size


def test_csv_rows_read_as_bytes_equal_the_csv_modules_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Plain rows take numpy's byte path; quoted, spaced, "1.0", "NA" and "True" rows
    # (and a subject id holding a line break) go through csv. Both give one matrix.
    text = (
        "subject_id,q1,q2,q3\n"
        "plain,1,0,1\n"
        "gaps,,1,\n"
        '"quoted, id",0,1,1\n'
        "\n"
        "spelled,1.0,NA,True\n"
        '"two\nlines",1,1,0\n'
        "spaced, 1,0,0\n"
        "zürich,0,0,1\n"
        "last,0,1,0"
    )
    path = tmp_path / "r.csv"
    path.write_text(text, encoding="utf-8")
    fast = read_responses(path)
    monkeypatch.setattr(responses_csv, "binary_cells", lambda _text, _n: None)
    slow = read_responses(path)
    assert fast.subject_ids == slow.subject_ids
    assert fast.subject_ids[2:6] == ("quoted, id", "spelled", "two\nlines", "spaced")
    np.testing.assert_array_equal(fast.values, slow.values)
    np.testing.assert_array_equal(fast.values[1], [MISSING, 1, MISSING])
    np.testing.assert_array_equal(fast.values[3], [1, MISSING, 1])


def test_csv_errors_after_a_record_of_two_lines_name_the_right_line(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text('subject_id,q1,q2\n"two\nlines",1,0\nok,0,1\nbad,1,2\n')
    with pytest.raises(ResponseDataError, match="line 5"):
        read_responses(path)
    path.write_text('subject_id,q1,q2\n"two\nlines",1,0\nshort,1\n')
    with pytest.raises(ResponseDataError, match="line 4: 2 cells, but the header has 3"):
        read_responses(path)
