"""One response file of a mixed pool: whole scores and scores in [0, 1] side by side."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from irt.errors import ResponseDataError
from irt.mixed import MixedResponses
from itempool.formats.mixed_responses import read_mixed_responses


def _read(path: Path) -> MixedResponses:
    return read_mixed_responses(path, continuous={"s"}, n_categories={"x": 3, "y": 2})


def test_jsonl_and_csv_split_into_the_two_parts(tmp_path: Path) -> None:
    jsonl = tmp_path / "r.jsonl"
    jsonl.write_text(
        '{"subject_id": "a", "responses": {"x": 2, "s": 0.5, "y": 1}}\n'
        '{"subject_id": "b", "responses": {"s": 1, "x": 0}}\n'
    )
    csv = tmp_path / "r.csv.gz"
    with gzip.open(csv, "wt") as fh:
        fh.write("subject_id,x,s,y\na,2,0.5,1\nb,0,1,NA\n")
    for path in (jsonl, csv):
        data = _read(path)
        assert data.discrete_ids == ("x", "y") and data.continuous_ids == ("s",)
        assert data.discrete is not None and data.continuous is not None
        assert data.discrete.n_categories == (3, 2)
        np.testing.assert_array_equal(data.continuous.values[:, 0], [0.5, 1.0])
        assert data.discrete.observed.tolist() == [[True, True], [True, False]]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"x": 2.5}', "score of subject 'a' on item 'x' is 2.5; item 'x' takes whole scores 0..2"),
        ('{"x": 9}', "r.jsonl line 2: item 'x' allows scores 0..2, got 9 (subject 'a')"),
        ('{"s": 1.5}', "on item 's' is 1.5; a continuous item's score is in [0, 1]"),
        ('{"s": -0.1}', "scores must be numbers 0 or more"),
        ('{"s": null}', "scores must be numbers 0 or more"),
        ('{"z": 1}', "1 answered item(s) are not in the pool (e.g. z)"),
    ],
)
def test_a_score_off_its_scale_names_the_file_and_line(
    tmp_path: Path, line: str, message: str
) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(
        '{"subject_id": "ok", "responses": {"x": 1}}\n'
        + (f'{{"subject_id": "a", "responses": {line}}}\n')
    )
    with pytest.raises(ResponseDataError) as caught:
        _read(path)
    text = str(caught.value)
    assert message in text and "\n" not in text
    if "not in the pool" not in message:
        assert text.startswith("r.jsonl line 2:")
