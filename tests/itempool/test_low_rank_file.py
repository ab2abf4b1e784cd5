from pathlib import Path

import numpy as np
import pytest

from itempool import LowRankPrior, PoolFormatError, read_low_rank, write_low_rank


def test_the_low_rank_file_round_trips_in_the_pools_item_order(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    items = ("a", "b", "c")
    intercepts, loadings = rng.normal(size=3), rng.normal(size=(3, 2))
    write_low_rank(tmp_path, items, intercepts, loadings)
    read = read_low_rank(tmp_path, ("c", "a"), dims=2)
    assert read is not None
    np.testing.assert_array_equal(read[0], intercepts[[2, 0]])
    np.testing.assert_array_equal(read[1], loadings[[2, 0]])
    assert read_low_rank(tmp_path / "nowhere", items, dims=2) is None


def test_a_bad_low_rank_file_names_the_file_and_line(tmp_path: Path) -> None:
    write_low_rank(tmp_path, ("a", "b"), np.zeros(2), np.zeros((2, 2)))
    with pytest.raises(PoolFormatError, match=r"low_rank\.csv line 1"):
        read_low_rank(tmp_path, ("a", "b"), dims=3)
    with pytest.raises(PoolFormatError, match="no row for 1 item"):
        read_low_rank(tmp_path, ("a", "b", "z"), dims=2)
    path = tmp_path / "low_rank.csv"
    path.write_text(path.read_text().replace("0.0", "nan", 1))
    with pytest.raises(PoolFormatError, match="line 2: need 3 finite numbers"):
        read_low_rank(tmp_path, ("a", "b"), dims=2)


def test_the_prior_needs_matching_shapes() -> None:
    LowRankPrior(dims=1, penalty=1.0, prior_mean=[0.0], prior_covariance=[[1.0]])
    with pytest.raises(ValueError, match="2 x 2"):
        LowRankPrior(dims=2, penalty=1.0, prior_mean=[0.0], prior_covariance=[[1.0]])
