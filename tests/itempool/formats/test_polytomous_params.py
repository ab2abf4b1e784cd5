"""The CSV of a mixed pool's parameters: exact round trips, with and without standard
errors, and one clear line per bad file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irt.errors import ParamsError
from irt.polytomous import ItemType, PolytomousParams
from itempool.formats.polytomous_params import read_polytomous_params, write_polytomous_params

HEADER = "item_id,type,a,d1,d2,d3,c"


def _mixed() -> PolytomousParams:
    nan = np.nan
    return PolytomousParams(
        ("q1", "q2", "q3", "q4", "q5"),
        (
            ItemType.TWO_PL,
            ItemType.THREE_PL,
            ItemType.GRADED,
            ItemType.GPCM,
            ItemType.SEQUENTIAL,
        ),
        np.array([1.2, 0.8, 1.5, 0.9, 1.1]),
        np.array(
            [
                [0.3, nan, nan],
                [-0.5, nan, nan],
                [2.0, 0.1, -1.7],
                [0.4, -0.2, nan],
                [1.0, 0.5, nan],
            ]
        ),
        np.array([0.0, 0.21, 0.0, 0.0, 0.0]),
    )


def test_a_mixed_pool_round_trips_exactly(tmp_path: Path) -> None:
    params = _mixed()
    path = tmp_path / "params.csv"
    write_polytomous_params(params, path)
    lines = path.read_text().splitlines()
    assert lines[0] == HEADER
    assert lines[1] == "q1,2PL,1.2,0.3,,,"  # empty thresholds past m, no c for a 2PL
    assert lines[2] == "q2,3PL,0.8,-0.5,,,0.21"
    back = read_polytomous_params(path)
    assert back.item_ids == params.item_ids and back.item_types == params.item_types
    np.testing.assert_array_equal(back.a, params.a)
    np.testing.assert_array_equal(back.c, params.c)
    np.testing.assert_array_equal(back.d, params.d)  # NaN in the same places
    assert back.se_a is None and back.se_d is None


def test_standard_errors_round_trip(tmp_path: Path) -> None:
    params = _mixed()
    se_d = np.where(np.isnan(params.d), np.nan, 0.05)
    with_se = PolytomousParams(
        params.item_ids,
        params.item_types,
        params.a,
        params.d,
        params.c,
        se_a=np.full(5, 0.1),
        se_d=se_d,
        se_c=np.array([np.nan, 0.03, np.nan, np.nan, np.nan]),
    )
    path = tmp_path / "params.csv"
    write_polytomous_params(with_se, path)
    assert path.read_text().splitlines()[0] == HEADER + ",se_a,se_d1,se_d2,se_d3,se_c"
    back = read_polytomous_params(path)
    assert back.se_a is not None and back.se_d is not None and back.se_c is not None
    np.testing.assert_array_equal(back.se_a, with_se.se_a)
    np.testing.assert_array_equal(back.se_d, se_d)
    np.testing.assert_array_equal(back.se_c, with_se.se_c)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "params.csv: empty file"),
        ("item_id,a,d1\n", "the header must start item_id,type,a"),
        ("item_id,type,a,c\n", "no threshold columns d1, d2, ..."),
        ("item_id,type,a,d1,c,extra\n", "the header must be item_id,type,a,d1,c"),
        (HEADER + "\n", "params.csv: no items"),
        (HEADER + "\nq1,graded,1,1,0\n", "params.csv line 2: 5 cells, expected 7"),
        (HEADER + "\nq1,ideal,1,1,0,,\n", "line 2: type 'ideal' is not one of 2PL, 3PL"),
        (
            HEADER + "\nq1,nominal,1,1,0,,\n",
            "line 2: item 'q1' is nominal: its scoring values need the columns ak1..ak3",
        ),
        (HEADER + "\nq1,graded,x,1,0,,\n", "line 2, column 'a': 'x' is not a number"),
        (HEADER + "\nq1,graded,,1,0,,\n", "line 2, column 'a': a number is needed"),
        (HEADER + "\nq1,graded,1,1,inf,,\n", "line 2, column 'd2': 'inf' is not a finite"),
        (HEADER + "\nq1,graded,1,0,1,,\n", "line 2: item 'q1': graded thresholds must decrease"),
        (HEADER + "\nq1,2PL,1,0,1,,\n", "line 2: item 'q1' is 2PL but has 2 thresholds"),
        (
            HEADER + "\nq1,graded,1,1,,0,\n",
            "line 2: item 'q1': threshold d2 is empty but a later one is not",
        ),
        (HEADER + "\nq1,3PL,1,0,,,\n", "line 2, column 'c': a number is needed"),
        (HEADER + "\nq1,2PL,1,0,,,0.2\n", "line 2, column 'c': only 3PL items have a lower"),
        (HEADER + "\nq1,3PL,1,0,,,1.5\n", "line 2: item 'q1': the lower asymptote c must be"),
        (HEADER + "\nq1,2PL,1,0,,,\nq1,2PL,1,0,,,\n", "line 3: item 'q1' again (first on line 2)"),
        (HEADER + "\n,2PL,1,0,,,\n", "line 2: empty item_id"),
    ],
)
def test_bad_files_are_refused_with_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "params.csv"
    path.write_text(text)
    with pytest.raises(ParamsError, match=None) as info:
        read_polytomous_params(path)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ParamsError, match="cannot read"):
        read_polytomous_params(tmp_path / "none.csv")
