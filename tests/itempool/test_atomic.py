"""``itempool.atomic``: files replaced atomically get the usual mode, not mkstemp's 0600."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from itempool.atomic import write_text_atomic


@pytest.fixture
def umask_022() -> Iterator[None]:
    """A known umask for the test, the caller's back afterwards."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
@pytest.mark.usefixtures("umask_022")
def test_a_new_file_gets_0666_less_the_umask(tmp_path: Path) -> None:
    path = tmp_path / "pool.json"
    write_text_atomic(path, "{}\n")
    assert path.read_text(encoding="utf-8") == "{}\n"
    assert _mode(path) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["pool.json"]  # no temporary file left


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
@pytest.mark.usefixtures("umask_022")
def test_a_replaced_file_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "pool.json"
    path.write_text("old\n", encoding="utf-8")
    path.chmod(0o640)
    write_text_atomic(path, "新\n")
    assert path.read_text(encoding="utf-8") == "新\n" and _mode(path) == 0o640


def test_a_file_written_in_pieces_replaces_the_old_one_whole_or_not_at_all(
    tmp_path: Path,
) -> None:
    from itempool.atomic import atomic_text_file

    path = tmp_path / "out.jsonl"
    path.write_text("old\n", encoding="utf-8")
    with atomic_text_file(path) as fh:
        fh.write("a\n")
        assert path.read_text(encoding="utf-8") == "old\n"  # not replaced before the end
        fh.writelines(["b\n", "ç\n"])
    assert path.read_text(encoding="utf-8") == "a\nb\nç\n"
    with pytest.raises(RuntimeError), atomic_text_file(path) as fh:
        fh.write("half\n")
        raise RuntimeError("cut short")
    assert path.read_text(encoding="utf-8") == "a\nb\nç\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]  # no temporary left
