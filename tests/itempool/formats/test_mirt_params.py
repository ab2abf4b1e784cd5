"""mirt_params.csv: both layouts round-trip, and bad files fail with the file and line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irt.bifactor_model import BifactorParams, group_codes
from irt.errors import IRTError, ParamsError
from irt.mirt_model import MirtParams, Structure
from itempool.formats.mirt_params import read_mirt_params, write_mirt_params


def _bifactor(c: bool) -> BifactorParams:
    rng = np.random.default_rng(3)
    codes, names = group_codes(["dose", "dose", "", "ethics", "ethics", "dose"])
    return BifactorParams(
        item_ids=tuple(f"q{j}" for j in range(6)),
        a_general=rng.uniform(0.5, 2, 6),
        a_specific=np.where(codes >= 0, rng.uniform(0.2, 1, 6), 0.0),
        d=rng.normal(0, 1, 6),
        group=codes,
        groups=names,
        c=rng.uniform(0.05, 0.3, 6) if c else None,
    )


@pytest.mark.parametrize("c", [False, True])
def test_the_bifactor_layout_round_trips(tmp_path: Path, c: bool) -> None:
    params = _bifactor(c).to_mirt()
    path = tmp_path / "mirt_params.csv"
    write_mirt_params(params, path)
    header = path.read_text().splitlines()[0]
    assert header == "item_id,factor,a_general,a_specific,d,c"
    back = read_mirt_params(path)
    assert back.structure is Structure.BIFACTOR
    assert back.factors == ("general", "dose", "ethics")
    np.testing.assert_array_equal(back.pattern, params.pattern)
    np.testing.assert_allclose(back.slopes, params.slopes)
    np.testing.assert_allclose(back.d, params.d)
    assert (back.c is None) == (not c)
    theta = np.array([[0.3, -1.0, 0.5]])
    np.testing.assert_allclose(back.probability(theta), params.probability(theta))


def test_the_bifactor_form_equals_the_bifactor_model() -> None:
    bf = _bifactor(True)
    rng = np.random.default_rng(1)
    g, s = rng.normal(size=3), rng.normal(size=(3, 2))
    theta = np.column_stack([g, s])
    specific = np.where(bf.group >= 0, s[:, np.maximum(bf.group, 0)], 0.0)
    np.testing.assert_allclose(
        bf.to_mirt().probability(theta), bf.probability(g[:, None], specific)
    )


def test_the_slopes_layout_keeps_the_pattern_factors_and_correlation(tmp_path: Path) -> None:
    pattern = np.array([[1, 0], [1, 0], [1, 1], [0, 1], [0, 1]], dtype=bool)
    corr = np.array([[1.0, 0.4], [0.4, 1.0]])
    params = MirtParams(
        item_ids=tuple("abcde"),
        slopes=np.where(pattern, 1.3, 0.0),
        d=np.linspace(-1, 1, 5),
        factors=("F1", "F2"),
        correlation=corr,
        pattern=pattern,
        structure=Structure.CONFIRMATORY,
    )
    path = tmp_path / "p.csv"
    write_mirt_params(params, path, se={"d": np.full(5, 0.1)})
    lines = path.read_text().splitlines()
    assert lines[0] == "item_id,a1,a2,d,c,se_d"
    assert lines[1].startswith("a,1.3,,")
    back = read_mirt_params(path, factors=("F1", "F2"), correlation=corr)
    np.testing.assert_array_equal(back.pattern, pattern)
    np.testing.assert_allclose(back.correlation, corr)
    assert params.n_free_parameters() == 6 + 5 + 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("item_id,factor,a_general,a_specific,d,c\nq1,x,1,0.5,zero,\n", "line 2, column 'd'"),
        ("item_id,factor,a_general,a_specific,d,c\nq1,x,1,,0,\n", "line 2: a_specific"),
        ("item_id,factor,a_general,a_specific,d,c\nq1,,1,,0,0.2\nq2,,1,,0,\n", "line 3: empty c"),
        ("item_id,factor,a_general,a_specific,d,c\nq1,,1,,0,1.5\n", "outside [0, 1)"),
        ("item_id,factor,a_general,a_specific,d\nq1,,1,,0\nq1,,1,,0\n", "appears twice"),
        ("item_id,factor,a_general,a_specific,d\nq1,general,1,1,0\n", "cannot be named"),
        ("item_id,a1,d\nq1,1\n", "line 2: 2 cells, expected 3"),
        ("item_id,b,d\nq1,1,0\n", "a1..aK"),
        ("item_id,d\n", "no items"),
    ],
)
def test_bad_files_name_the_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(ParamsError, match=r"bad\.csv") as info:
        read_mirt_params(path)
    assert message in str(info.value)


def test_the_model_refuses_inconsistent_shapes() -> None:
    with pytest.raises(IRTError, match="outside the loading pattern"):
        MirtParams(
            ("a",),
            np.array([[1.0, 0.5]]),
            np.zeros(1),
            ("F1", "F2"),
            np.eye(2),
            np.array([[True, False]]),
            Structure.CONFIRMATORY,
        )
    with pytest.raises(IRTError, match="positive definite"):
        MirtParams(
            ("a",),
            np.array([[1.0, 0.5]]),
            np.zeros(1),
            ("F1", "F2"),
            np.array([[1.0, 1.0], [1.0, 1.0]]),
            np.ones((1, 2), bool),
            Structure.CONFIRMATORY,
        )
    with pytest.raises(IRTError, match="cannot be named"):
        group_codes(["general", "general"])
