"""``cat.pools.calibration``: what a calibration writes into a pool folder."""

from __future__ import annotations

import os
import stat
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from cat.pools.calibration import record_calibration
from irt.simulate import random_params
from itempool import PoolItem
from tests.synth.pools import write_pool


def _items(n: int) -> list[PoolItem]:
    return [
        PoolItem(id=f"q{k}", question=f"Which {k}?", options={"A": "a", "B": "b"}, answer="A")
        for k in range(n)
    ]


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_pool_json_keeps_the_usual_mode(tmp_path: Path) -> None:
    """pool.json is rewritten atomically, yet readable by others as the other files are
    (mkstemp made it 0600), and a mode the owner chose survives a recalibration."""
    pool = write_pool(tmp_path / "pool", _items(5))
    params = random_params(5, np.random.default_rng(0), "2pl")
    params = replace(params, item_ids=tuple(f"q{k}" for k in range(5)))
    rows = [{"subject_id": "m", "theta": 0.0, "se": 0.5, "accuracy": 0.5, "n_answered": 5}]
    old = os.umask(0o022)
    try:
        record_calibration(pool, params, rows, {"method": "test"})
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in pool.iterdir()}
        assert modes["pool.json"] == 0o644 == modes["params.csv"], modes
        (pool / "pool.json").chmod(0o664)
        record_calibration(pool, params, rows, {"method": "test"})
        assert stat.S_IMODE((pool / "pool.json").stat().st_mode) == 0o664
    finally:
        os.umask(old)
