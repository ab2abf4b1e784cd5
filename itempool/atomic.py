"""Replacing a file atomically: the one helper every package writes such files with.

A reader (or a crash) sees the old file or the new one, never half of it. The new file
gets the mode any other output gets, 0666 less the umask, or the mode of the file it
replaces; never the private 0600 of ``tempfile.mkstemp``.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

__all__ = ["atomic_text_file", "write_text_atomic"]


def write_text_atomic(path: Path, text: str) -> None:
    """Replace ``path`` by ``text`` (UTF-8) atomically, keeping the replaced file's mode
    (a new file: 0666 less the umask, as ``open`` makes it)."""
    with atomic_text_file(path) as fh:
        fh.write(text)


@contextmanager
def atomic_text_file(path: Path) -> Iterator[TextIO]:
    """A UTF-8 text file to write piece by piece (output too big to hold in memory at
    once) that replaces ``path`` atomically when the block ends, keeping the replaced
    file's mode as ``write_text_atomic`` does; an error in the block leaves ``path`` as
    it was."""
    path = Path(path)
    # Beside the target, so that os.replace stays on one file system and is atomic.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(6)}.tmp")
    try:
        # Not mkstemp: its files are private (0600); "x" honours the umask like any output.
        with tmp.open("x", encoding="utf-8") as fh:
            yield fh
        _keep_mode(path, tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _keep_mode(old: Path, new: Path) -> None:
    """Give ``new`` the permission bits of ``old``, where ``old`` exists."""
    try:
        mode = stat.S_IMODE(old.stat().st_mode)
    except FileNotFoundError:
        return
    os.chmod(new, mode)
