"""The CSV of a continuous pool's parameters (itempool.formats.continuous_params):
exact round trips with and without standard errors, ε in the file, and one clear line per
bad file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irt.continuous import DEFAULT_EPSILON, ContinuousParams, ContinuousType
from irt.errors import ParamsError
from itempool.formats.continuous_params import read_continuous_params, write_continuous_params

NAN = np.nan
HEADER = "item_id,type,a,d,sigma,tau,epsilon"
SE_HEADER = HEADER + ",se_a,se_d,se_sigma,se_tau"
CRM = "q1,crm,1.2,-0.3,0.7,,0.001"
BETA = "q2,beta,0.8,0.2,,2.5,0.001"


def _mixed(**se: object) -> ContinuousParams:
    return ContinuousParams(
        ("q1", "q2", "a, b", 'say "hi"'),
        (ContinuousType.CRM, ContinuousType.BETA, ContinuousType.CRM, ContinuousType.BETA),
        np.array([1.2, 0.8, 0.1 + 0.2, 5e-324]),
        np.array([-0.3, 0.2, 0.0, -1e-300]),
        np.array([0.7, NAN, 1.0 / 3.0, NAN]),
        np.array([NAN, 2.5, NAN, -0.0]),
        epsilon=1e-4,
        **se,  # type: ignore[arg-type]
    )


def _assert_same(a: ContinuousParams, b: ContinuousParams) -> None:
    """Same items, types, ε and the very same floats (bit for bit), SEs included."""
    assert a.item_ids == b.item_ids
    assert a.item_types == b.item_types
    assert a.epsilon == b.epsilon
    for name in ("a", "d", "sigma", "tau", "se_a", "se_d", "se_sigma", "se_tau"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            np.testing.assert_array_equal(np.isnan(x), np.isnan(y))
            np.testing.assert_array_equal(
                x.view(np.uint64)[~np.isnan(x)], y.view(np.uint64)[~np.isnan(y)]
            )


def test_round_trip_without_standard_errors(tmp_path: Path) -> None:
    params = _mixed()
    path = tmp_path / "params.csv"
    write_continuous_params(params, path)
    lines = path.read_text().splitlines()
    assert lines[:3] == [HEADER, "q1,crm,1.2,-0.3,0.7,,0.0001", "q2,beta,0.8,0.2,,2.5,0.0001"]
    assert lines[3] == '"a, b",crm,0.30000000000000004,0.0,0.3333333333333333,,0.0001'
    back = read_continuous_params(path)
    _assert_same(back, params)
    assert back.se_a is None


def test_round_trip_with_standard_errors(tmp_path: Path) -> None:
    params = _mixed(
        se_a=np.array([0.1, 0.2, NAN, 0.05]),  # NaN: not estimated, an empty cell
        se_d=np.array([0.01, 0.02, 0.03, 0.04]),
        se_sigma=np.array([0.07, NAN, 1e-3, NAN]),
        se_tau=np.array([NAN, 0.4, NAN, 0.5]),
    )
    path = tmp_path / "params.csv"
    write_continuous_params(params, path)
    lines = path.read_text().splitlines()
    assert lines[0] == SE_HEADER
    assert lines[1] == "q1,crm,1.2,-0.3,0.7,,0.0001,0.1,0.01,0.07,"
    assert lines[2] == "q2,beta,0.8,0.2,,2.5,0.0001,0.2,0.02,,0.4"
    _assert_same(read_continuous_params(path), params)


def test_some_standard_errors_give_all_four_columns(tmp_path: Path) -> None:
    params = _mixed(se_a=np.array([0.1, 0.2, 0.3, 0.4]))
    path = tmp_path / "params.csv"
    write_continuous_params(params, path)
    back = read_continuous_params(path)
    assert back.se_a is not None and back.se_tau is not None
    np.testing.assert_array_equal(back.se_a, params.se_a)
    assert np.isnan(back.se_tau).all()


def test_the_other_types_standard_error_is_never_written(tmp_path: Path) -> None:
    # ContinuousParams does not forbid it; the file must stay readable all the same.
    params = _mixed(se_sigma=np.full(4, 0.1), se_tau=np.full(4, 0.2))
    path = tmp_path / "params.csv"
    write_continuous_params(params, path)
    back = read_continuous_params(path)
    np.testing.assert_array_equal(back.se_sigma, [0.1, NAN, 0.1, NAN])
    np.testing.assert_array_equal(back.se_tau, [NAN, 0.2, NAN, 0.2])


def test_hand_written_files(tmp_path: Path) -> None:
    path = tmp_path / "params.csv"
    text = f"{HEADER}\n{CRM}\n\n q3 , CRM , 1 , 0 , 2 , , 1e-3 \n{BETA}\n,,,,,,\n"
    path.write_text(text)
    back = read_continuous_params(path)
    assert back.item_ids == ("q1", " q3 ", "q2")  # ids as written: a response file's match
    assert back.item_types == (ContinuousType.CRM, ContinuousType.CRM, ContinuousType.BETA)
    np.testing.assert_array_equal(back.sigma, [0.7, 2.0, NAN])
    assert back.epsilon == DEFAULT_EPSILON


def test_writer_refuses_a_blank_item_id(tmp_path: Path) -> None:
    params = ContinuousParams.create("crm", [1.0], [0.0], [1.0], item_ids=[" "])
    with pytest.raises(ParamsError, match="cannot write a blank item id ' '"):
        write_continuous_params(params, tmp_path / "params.csv")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "params.csv: empty file"),
        (
            "item_id,type,a,d,sigma,tau\n" + CRM[:-6] + "\n",
            "params.csv: the header must be item_id,type,a,d,sigma,tau,epsilon "
            "(optionally followed by se_a,se_d,se_sigma,se_tau)",
        ),
        (HEADER + ",se_a\n", "params.csv: the header must be item_id,type,a,d,sigma,tau,epsilon "),
        (HEADER + ",extra\n", "params.csv: the header must be "),
        ("item_id,type,a,d,tau,sigma,epsilon\n", "params.csv: the header must be "),
        (HEADER + "\n", "params.csv: no items"),
        (HEADER + "\n\n,,,,,,\n", "params.csv: no items"),
        (f"{HEADER}\n{CRM},0.1\n", "params.csv line 2: 8 cells, expected 7"),
        (f"{HEADER}\nq1,crm,1,0,1\n", "params.csv line 2: 5 cells, expected 7"),
        (
            f"{HEADER}\nq1,graded,1,0,1,,0.001\n",
            "params.csv line 2: type 'graded' is not one of crm, beta",
        ),
        (f"{HEADER}\nq1,,1,0,1,,0.001\n", "params.csv line 2: type '' is not one of crm, beta"),
        (f"{HEADER}\nq1,crm,,0,1,,0.001\n", "params.csv line 2, column 'a': a number is needed"),
        (f"{HEADER}\nq1,crm,1,,1,,0.001\n", "params.csv line 2, column 'd': a number is needed"),
        (
            f"{HEADER}\nq1,crm,1,0,,,0.001\n",
            "params.csv line 2, column 'sigma': a number is needed",
        ),
        (f"{HEADER}\nq2,beta,1,0,,,0.001\n", "params.csv line 2, column 'tau': a number is needed"),
        (
            f"{HEADER}\nq1,crm,1,0,1,2,0.001\n",
            "params.csv line 2, column 'tau': item 'q1' is crm; only beta items have tau "
            "(leave the cell empty)",
        ),
        (
            f"{HEADER}\nq2,beta,1,0,1,2,0.001\n",
            "params.csv line 2, column 'sigma': item 'q2' is beta; only crm items have sigma "
            "(leave the cell empty)",
        ),
        (f"{HEADER}\nq1,crm,x,0,1,,0.001\n", "params.csv line 2, column 'a': 'x' is not a number"),
        (
            f"{HEADER}\nq1,crm,1,inf,1,,0.001\n",
            "params.csv line 2, column 'd': 'inf' is not a finite number",
        ),
        (
            f"{HEADER}\nq1,crm,1,nan,1,,0.001\n",
            "params.csv line 2, column 'd': 'nan' is not a finite number",
        ),
        (
            f"{HEADER}\nq1,crm,0,0,1,,0.001\n",
            "params.csv line 2: item 'q1': the slope a must be positive, got 0.0",
        ),
        (
            f"{HEADER}\nq1,crm,-1,0,1,,0.001\n",
            "params.csv line 2: item 'q1': the slope a must be positive, got -1.0",
        ),
        (
            f"{HEADER}\nq1,crm,1,0,0,,0.001\n",
            "params.csv line 2: item 'q1': sigma must be positive, got 0.0",
        ),
        (
            f"{HEADER}\nq1,crm,1,0,-0.5,,0.001\n",
            "params.csv line 2: item 'q1': sigma must be positive, got -0.5",
        ),
        (
            f"{HEADER}\n{CRM}\n{BETA}\n{CRM}\n",
            "params.csv line 4: item 'q1' again (first on line 2)",
        ),
        (f"{HEADER}\n,crm,1,0,1,,0.001\n", "params.csv line 2: empty item_id"),
        (f"{HEADER}\nq1,crm,1,0,1,,\n", "params.csv line 2, column 'epsilon': a number is needed"),
        (
            f"{HEADER}\nq1,crm,1,0,1,,0.5\n",
            "params.csv line 2, column 'epsilon': epsilon must be in (0, 0.5), got 0.5",
        ),
        (
            f"{HEADER}\nq1,crm,1,0,1,,0\n",
            "params.csv line 2, column 'epsilon': epsilon must be in (0, 0.5), got 0.0",
        ),
        (
            f"{HEADER}\n{CRM}\n\n{BETA[:-5]}1e-3\nq3,crm,1,0,1,,0.01\n",
            "params.csv line 5, column 'epsilon': '0.01' differs from '0.001' on line 2; "
            "a pool has one epsilon",
        ),
        (f"{SE_HEADER}\n{CRM},x,,,\n", "params.csv line 2, column 'se_a': 'x' is not a number"),
        (
            f"{SE_HEADER}\n{CRM},0.1,0.1,0.1,0.1\n",
            "params.csv line 2, column 'se_tau': item 'q1' is crm; only beta items have tau "
            "(leave the cell empty)",
        ),
        (
            f"{SE_HEADER}\n{BETA},0.1,0.1,0.1,0.1\n",
            "params.csv line 2, column 'se_sigma': item 'q2' is beta; only crm items have sigma "
            "(leave the cell empty)",
        ),
    ],
)
def test_bad_files_are_refused_with_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "params.csv"
    path.write_text(text)
    with pytest.raises(ParamsError) as info:
        read_continuous_params(path)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ParamsError, match=r"cannot read .*none\.csv"):
        read_continuous_params(tmp_path / "none.csv")
