"""Shared fixtures: where the third-party data live (beside the checkout, never in it)."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data``; tests that need it skip with the reason where it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not present at {SHARED_DATA} (only in the project's CI)")
    return SHARED_DATA


@pytest.fixture
def en_pool(tmp_path: Path) -> Path:
    """A 30-item English pool folder (``tests.synth.pools.EN_ITEMS``)."""
    from tests.synth.pools import EN_ITEMS, write_pool

    return write_pool(tmp_path / "en-pool", EN_ITEMS)


@pytest.fixture
def zh_pool(tmp_path: Path) -> Path:
    """A 10-item Chinese pool folder (``tests.synth.pools.ZH_ITEMS``)."""
    from tests.synth.pools import ZH_ITEMS, write_pool

    return write_pool(tmp_path / "zh-pool", ZH_ITEMS, "zh")
