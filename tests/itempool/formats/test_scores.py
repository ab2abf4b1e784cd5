"""Tests of itempool.formats.scores: continuous scores in [0, 1] as JSONL and wide CSV
response files — exact round trips, one line per bad input, a large file's speed, and a
calibration of scores read back from a file."""

from __future__ import annotations

import gzip
import time
from pathlib import Path

import numpy as np
import pytest

from irt.continuous import ContinuousParams
from irt.continuous_em import ContinuousCalibrator
from irt.continuous_responses import ContinuousResponses
from irt.errors import ResponseDataError
from irt.responses import MISSING, ResponseMatrix
from itempool.formats.continuous_params import read_continuous_params, write_continuous_params
from itempool.formats.responses import write_csv, write_jsonl
from itempool.formats.scores import (
    ContinuousSubjectResponses,
    _fast_scores,
    read_continuous_responses,
    write_continuous_csv,
    write_continuous_jsonl,
)
from tests.itempool.formats.test_responses import _csv, _jsonl, _write

NAN = np.nan
SUFFIXES = ["out.jsonl", "out.jsonl.gz", "out.csv", "out.csv.gz"]


def _error(path: Path, *, id_column: bool = True) -> str:
    with pytest.raises(ResponseDataError) as info:
        read_continuous_responses(path, id_column=id_column)
    message = str(info.value)
    assert "\n" not in message
    return message


def _save(responses: ContinuousResponses, path: Path) -> None:
    (write_continuous_csv if ".csv" in path.name else write_continuous_jsonl)(responses, path)


def _assert_identical(a: ContinuousResponses, b: ContinuousResponses) -> None:
    """Same ids and the very same floats (bit for bit, so 0.0 is not -0.0), NaN alike."""
    assert a.subject_ids == b.subject_ids
    assert a.item_ids == b.item_ids
    assert a.values.dtype == b.values.dtype == np.float64
    missing = np.isnan(a.values)
    np.testing.assert_array_equal(missing, np.isnan(b.values))
    np.testing.assert_array_equal(
        a.values[~missing].view(np.uint64), b.values[~missing].view(np.uint64)
    )


def _example() -> ContinuousResponses:
    # Floats whose shortest repr matters: 0.1 + 0.2, the smallest subnormal, 1 − 2⁻⁵³,
    # -0.0, and whole 0 and 1. The first subject answered everything, which fixes the
    # order of the items in JSONL.
    values = np.array(
        [
            [0.1 + 0.2, 5e-324, 0.5, 1.0],
            [np.nextafter(1.0, 0.0), NAN, -0.0, 0.0],
            [0.73, 1e-300, NAN, NAN],
        ]
    )
    return ContinuousResponses(("gpt-4o", "a, b", 'say "hi"'), ("q1", "q 2", "Ω", "NA"), values)


# --- reading ------------------------------------------------------------------------------


def test_jsonl_scores_missing_and_item_order(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path,
        '{"subject_id": "m1", "responses": {"q2": 0.73, "q1": 0}}',
        "",
        '{"subject_id": "m2", "responses": {"q3": 1, "q1": 0.25, "q2": true}}',
        '{"subject_id": "m3", "responses": {"q1": 1e-3, "q2": false}}',
    )
    r = read_continuous_responses(path)
    assert r.subject_ids == ("m1", "m2", "m3")
    assert r.item_ids == ("q2", "q1", "q3")
    np.testing.assert_array_equal(r.values, [[0.73, 0.0, NAN], [1.0, 0.25, 1.0], [0.0, 0.001, NAN]])


def test_csv_scores_and_missing_spellings(tmp_path: Path) -> None:
    path = _csv(
        tmp_path,
        "model,q1,q2,q3,q4",
        "a,0.73,,NA,NaN",
        "b,1,0,7.3e-1,.5",
        "c, 0.25 ,na,True,False",  # the loose path: blanks, letter case, booleans
        "d,nan,1.0,0.0,+0.5",
    )
    r = read_continuous_responses(path)
    assert r.subject_ids == ("a", "b", "c", "d")
    assert r.item_ids == ("q1", "q2", "q3", "q4")
    np.testing.assert_array_equal(
        r.values,
        [[0.73, NAN, NAN, NAN], [1.0, 0.0, 0.73, 0.5], [0.25, NAN, 1.0, 0.0], [NAN, 1.0, 0.0, 0.5]],
    )


def test_csv_without_id_column(tmp_path: Path) -> None:
    path = _csv(tmp_path, '"Item.1","Item.2"', "0.5,NA", "", "0,1")
    r = read_continuous_responses(path, id_column=False)
    assert r.subject_ids == ("s0001", "s0002")
    np.testing.assert_array_equal(r.values, [[0.5, NAN], [0.0, 1.0]])


@pytest.mark.parametrize("name", ["responses.jsonl", "responses.csv.gz"])
def test_a_binary_file_reads_as_scores_zero_and_one(tmp_path: Path, name: str) -> None:
    values = np.array([[1, 0, 0], [0, MISSING, 1]], dtype=np.int8)
    path = tmp_path / name
    (write_csv if ".csv" in name else write_jsonl)(
        ResponseMatrix(("a", "b"), ("q1", "q2", "q3"), values), path
    )
    r = read_continuous_responses(path)
    np.testing.assert_array_equal(r.values, [[1.0, 0.0, 0.0], [0.0, NAN, 1.0]])


def test_gzipped_files_written_elsewhere_are_read(tmp_path: Path) -> None:
    path = tmp_path / "scores.csv.gz"
    path.write_bytes(gzip.compress(b"id,q1,q2\na,0.3,\nb,0,1\n"))
    np.testing.assert_array_equal(read_continuous_responses(path).values, [[0.3, NAN], [0, 1]])
    path = tmp_path / "scores.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"subject_id": "a", "responses": {"q1": 0.3}}\n'))
    np.testing.assert_array_equal(read_continuous_responses(path).values, [[0.3]])


def test_subject_model_on_its_own() -> None:
    ok = ContinuousSubjectResponses.model_validate(
        {"subject_id": "a", "responses": {"q1": 0.5, "q2": np.float64(0.25), "q3": True}}
    )
    assert ok.responses == {"q1": 0.5, "q2": 0.25, "q3": True}
    with pytest.raises(ValueError, match="score of subject 'a' on item 'q2' is 2"):
        ContinuousSubjectResponses.model_validate({"subject_id": "a", "responses": {"q2": 2}})


# --- bad input: one line naming file, line, subject and item ------------------------------

_IN_RANGE = "scores must be numbers in [0, 1]"
_LEAVE_OUT = f"{_IN_RANGE} (leave the item out when it was not answered)"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("1.5", _IN_RANGE),
        ("1.0000001", _IN_RANGE),
        ("-0.1", _IN_RANGE),
        ("2", _IN_RANGE),
        ("1e400", _IN_RANGE),  # json reads it as infinity
        ("Infinity", _IN_RANGE),
        ("-Infinity", _IN_RANGE),
        ('"0.5"', _IN_RANGE),
        ("[0.5]", _IN_RANGE),
        ('{"x": 1}', _IN_RANGE),
        ("null", _LEAVE_OUT),
        ("NaN", _LEAVE_OUT),
    ],
)
def test_jsonl_bad_score(tmp_path: Path, value: str, problem: str) -> None:
    path = _jsonl(
        tmp_path,
        '{"subject_id": "a", "responses": {"q1": 0.3, "q2": 0}}',
        '{"subject_id": "b", "responses": {"q1": true}}',
        f'{{"subject_id": "c", "responses": {{"q1": 1, "q2": {value}}}}}',
    )
    shown = {"1e400": "Infinity"}.get(value, value)  # the message spells it as json does
    assert _error(path) == (
        f"responses.jsonl line 3: score of subject 'c' on item 'q2' is {shown}; {problem}"
    )


@pytest.mark.parametrize(
    "value",
    [
        "1.5",
        "-0.1",
        "1e3",
        "2",
        "inf",
        "-inf",
        "Infinity",
        "-nan",
        "+nan",
        "x",
        "0.7_3",
        "0x1",
        "0.5.1",
        "yes",
        "1 0",
    ],
)
def test_csv_bad_cell(tmp_path: Path, value: str) -> None:
    path = _csv(tmp_path, "id,q1,q2,q3", "a,1,0,0.5", "", f"b,0,0.25,{value}")
    assert _error(path) == (
        f"responses.csv line 4: score of subject 'b' on item 'q3' is {value!r}; "
        f"{_IN_RANGE} (empty, NA or NaN for missing)"
    )


def test_csv_bad_cell_without_id_column_names_the_numbered_subject(tmp_path: Path) -> None:
    path = _csv(tmp_path, "q1,q2", "0.5,0.5", "0.5,-1")
    assert _error(path, id_column=False) == (
        "responses.csv line 3: score of subject 's0002' on item 'q2' is '-1'; "
        f"{_IN_RANGE} (empty, NA or NaN for missing)"
    )


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        (
            "responses.jsonl",
            '{"subject_id": "x", "responses": {"q1": 0.5}}\n'
            '{"subject_id": "m", "responses": {"q1": 0.5}}\n\n'
            '{"subject_id": "m", "responses": {"q1": 0.1}}\n',
            "responses.jsonl line 4: duplicated subject id 'm' (first on line 2)",
        ),
        (
            "responses.csv",
            "id,q1\nx,0.5\nm,0.5\nm,0.1\n",
            "responses.csv line 4: duplicated subject id 'm' (first on line 3)",
        ),
        (
            "responses.jsonl",
            '{"subject_id": "a", "responses": {"q1": 0.5}}\n{"subject_id": "b" "responses": {}}\n',
            "responses.jsonl line 2: not valid JSON (Expecting ',' delimiter)",
        ),
        (
            "responses.jsonl",
            '{"subject_id": "a", "responses": {"q1": 0.5, "q1": 0.2}}\n',
            "responses.jsonl line 1: key 'q1' appears twice",
        ),
        (
            "responses.jsonl",
            '["a", {"q1": 0.5}]\n',
            "responses.jsonl line 1: expected a JSON object, got list",
        ),
        (
            "responses.jsonl",
            '{"subject_id": "a", "responses": [0.5]}\n',
            "responses.jsonl line 1: responses must be an object of item id -> score in [0, 1], "
            "got list",
        ),
        (
            "responses.jsonl",
            '{"subject_id": "a", "responses": {"q1": 0.5}, "model": "x"}\n',
            "responses.jsonl line 1: unexpected key 'model' (allowed: subject_id, responses)",
        ),
        (
            "responses.jsonl",
            '{"subject_id": "a"}\n',
            "responses.jsonl line 1: missing key 'responses'",
        ),
        (
            "responses.jsonl",
            '{"subject_id": " ", "responses": {"q1": 0.5}}\n',
            "responses.jsonl line 1: subject_id must be a non-empty string, got ' '",
        ),
        (
            "responses.jsonl",
            '{"subject_id": "a", "responses": {"": 0.5}}\n',
            "responses.jsonl line 1: an item id is empty",
        ),
        (
            "responses.csv",
            "id,q1,q2\na,0.5\n",
            "responses.csv line 2: 2 cells, but the header has 3",
        ),
        (
            "responses.csv",
            "id,q1,q1\na,0.5,0.5\n",
            "responses.csv line 1: duplicated item column 'q1' (columns 2 and 3)",
        ),
        ("responses.csv", "id\n", "responses.csv line 1: the header names no item columns"),
        ("responses.csv", ",q1\n,0.5\n", "responses.csv line 2: the subject id is empty"),
        ("responses.csv", "", "responses.csv: the file is empty"),
        ("responses.csv", "id,q1\n", "responses.csv: the response matrix is empty"),
        ("responses.jsonl", "", "responses.jsonl: the response matrix is empty"),
        ("responses.jsonl", "\n  \n", "responses.jsonl: the response matrix is empty"),
        (
            "responses.jsonl",
            '{"subject_id": "a", "responses": {}}\n',
            "responses.jsonl: the response matrix is empty",
        ),
        (
            "responses.csv",
            "id,q1,q2\na,,NA\n",
            "responses.csv: the response matrix has no answers at all",
        ),
        (
            "responses.tsv",
            "id\tq1\n",
            "responses.tsv: unknown response file type; accepted suffixes are "
            ".csv, .jsonl, .csv.gz, .jsonl.gz",
        ),
    ],
)
def test_bad_files(tmp_path: Path, name: str, text: str, expected: str) -> None:
    assert _error(_write(tmp_path / name, text)) == expected


def test_missing_and_broken_files(tmp_path: Path) -> None:
    assert _error(tmp_path / "nope.jsonl") == f"no such file: {tmp_path / 'nope.jsonl'}"
    broken = tmp_path / "broken.jsonl.gz"
    broken.write_bytes(b"not gzip at all")
    assert _error(broken).startswith("broken.jsonl.gz: cannot read the file (BadGzipFile: ")
    latin = tmp_path / "latin.csv"
    latin.write_bytes("id,q1\nJosé,0.5\n".encode("latin-1"))
    assert _error(latin).startswith("latin.csv: cannot read the file (UnicodeDecodeError: ")


# --- writing and round trips --------------------------------------------------------------


@pytest.mark.parametrize("name", SUFFIXES)
def test_round_trip_is_exact(tmp_path: Path, name: str) -> None:
    r = _example()
    path = tmp_path / name
    _save(r, path)
    if name.endswith(".gz"):
        assert path.read_bytes()[:2] == b"\x1f\x8b"
    _assert_identical(read_continuous_responses(path), r)


def test_written_text(tmp_path: Path) -> None:
    r = ContinuousResponses(
        ("m1", "m2"), ("q1", "q2", "q3"), np.array([[0.73, NAN, 1.0], [0.0, 1e-05, NAN]])
    )
    write_continuous_csv(r, tmp_path / "out.csv")
    assert (tmp_path / "out.csv").read_text() == (
        "subject_id,q1,q2,q3\nm1,0.73,,1.0\nm2,0.0,1e-05,\n"
    )
    write_continuous_jsonl(r, tmp_path / "out.jsonl")
    assert (tmp_path / "out.jsonl").read_text().splitlines() == [
        '{"subject_id": "m1", "responses": {"q1": 0.73, "q3": 1.0}}',
        '{"subject_id": "m2", "responses": {"q1": 0.0, "q2": 1e-05}}',
    ]


def test_jsonl_drops_items_nobody_answered(tmp_path: Path) -> None:
    r = ContinuousResponses(("a", "b"), ("q1", "q2"), np.array([[0.5, NAN], [0.25, NAN]]))
    write_continuous_jsonl(r, tmp_path / "out.jsonl")
    assert read_continuous_responses(tmp_path / "out.jsonl").item_ids == ("q1",)
    write_continuous_csv(r, tmp_path / "out.csv")
    assert read_continuous_responses(tmp_path / "out.csv").item_ids == ("q1", "q2")


def test_writers_refuse_blank_ids_and_name_write_failures(tmp_path: Path) -> None:
    r = ContinuousResponses(("a", " "), ("q1",), np.array([[0.5], [0.1]]))
    with pytest.raises(ResponseDataError, match="cannot write a blank subject id ' '"):
        write_continuous_jsonl(r, tmp_path / "out.jsonl")
    with pytest.raises(ResponseDataError, match=r"^out.csv: cannot write the file \("):
        write_continuous_csv(_example(), tmp_path / "no-such-folder" / "out.csv")


def test_the_writers_spellings_take_the_fast_path() -> None:
    cells = ["0.73", "", "1.0", "0.0", "-0.0", "5e-324", "0.30000000000000004", "NA", "NaN"]
    fast = _fast_scores(cells)
    assert fast is not None
    np.testing.assert_array_equal(fast, [0.73, NAN, 1, 0, 0, 5e-324, 0.1 + 0.2, NAN, NAN])
    for odd in (["0.5", "na"], ["True"], ["-nan"], ["0.7_3"], ["inf"], ["1.5"]):
        assert _fast_scores(odd) is None  # left to the loose path, to accept or to name


def test_large_file_reads_fast(tmp_path: Path) -> None:
    rng = np.random.default_rng(15)
    n, j = 200, 5_000
    values = rng.random((n, j))
    values[1:][rng.random((n - 1, j)) < 0.1] = NAN  # row 0 fixes the JSONL item order
    r = ContinuousResponses(
        tuple(f"model-{i}" for i in range(n)), tuple(f"q{k}" for k in range(j)), values
    )
    for name in ("big.jsonl", "big.csv"):
        path = tmp_path / name
        _save(r, path)
        start = time.perf_counter()
        back = read_continuous_responses(path)
        elapsed = time.perf_counter() - start
        print(f"read_continuous_responses {name} {n} x {j}: {elapsed:.3f} s")
        _assert_identical(back, r)


# --- a calibration of scores read back from a file ----------------------------------------


def test_calibration_of_scores_read_from_a_file(tmp_path: Path) -> None:
    true = ContinuousParams.create(
        ["crm", "beta", "crm", "beta", "crm"],
        a=[1.2, 0.8, 1.0, 1.5, 0.7],
        d=[-0.3, 0.2, 0.5, -0.4, 0.0],
        dispersion=[0.7, 2.5, 1.0, 3.0, 0.9],
        item_ids=["q1", "q2", "q3", "q4", "q5"],
    )
    rng = np.random.default_rng(3)
    x = true.simulate(rng.normal(size=300), rng)
    x[rng.random(x.shape) < 0.1] = NAN
    x[0, 0], x[1, 1] = 0.0, 1.0  # clipped at ε by the fit
    scores = ContinuousResponses.from_array(x, item_ids=true.item_ids)
    path = tmp_path / "scores.jsonl.gz"
    write_continuous_jsonl(scores, path)
    back = read_continuous_responses(path)

    def fit(responses: ContinuousResponses) -> ContinuousParams:
        calibrator = ContinuousCalibrator(list(true.item_types), n_quad=21, epsilon=1e-4)
        return calibrator.fit(responses).params_

    fitted = fit(back)
    assert np.abs(fitted.a - true.a).max() < 0.35
    # The file held the very same floats, so the fit is the very same.
    same = fit(scores)
    np.testing.assert_array_equal(fitted.a, same.a)
    np.testing.assert_array_equal(fitted.dispersion, same.dispersion)
    # ... and its parameters, ε and standard errors travel through their own file.
    write_continuous_params(fitted, tmp_path / "params.csv")
    again = read_continuous_params(tmp_path / "params.csv")
    assert again.epsilon == 1e-4
    assert again.se_a is not None and fitted.se_a is not None
    np.testing.assert_array_equal(again.se_a, fitted.se_a)
    np.testing.assert_array_equal(again.tau, fitted.tau)
