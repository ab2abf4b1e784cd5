"""Where a pool keeps its questions: ``items.jsonl``, or the same lines gzipped in
``items.jsonl.gz`` (a large pool, such as the shipped MMLU-Pro one, ships compressed).

A folder holds one of the two, never both: which one would be the pool's questions is
then unclear, and every reader refuses it, naming both. Writers that rewrite the items
of an existing pool keep its form (``items_file`` of the old folder names it).
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

from itempool.errors import PoolFormatError

ITEMS = "items.jsonl"
ITEMS_GZ = "items.jsonl.gz"
#: Both names a pool's questions may have, the plain one first.
ITEM_FILES = (ITEMS, ITEMS_GZ)


def items_problem(folder: Path) -> str | None:
    """Why ``folder``'s questions are ambiguous (both item files are there), or None."""
    if all((folder / name).is_file() for name in ITEM_FILES):
        return (
            f"both {ITEMS} and {ITEMS_GZ} are here: a pool keeps its questions in one "
            "of them; remove the other"
        )
    return None


def items_file(folder: Path) -> Path:
    """The file holding ``folder``'s questions: ``items.jsonl.gz`` where only that one is
    there, else ``items.jsonl`` (which may not exist yet). ``PoolFormatError`` when both
    are there."""
    problem = items_problem(folder)
    if problem is not None:
        raise PoolFormatError(f"{folder}: {problem}")
    gz = folder / ITEMS_GZ
    return gz if gz.is_file() else folder / ITEMS


def is_gzipped(path: Path) -> bool:
    """Whether ``path`` is read and written gzipped (its name ends in ``.gz``)."""
    return path.name.endswith(".gz")


def read_text(path: Path) -> str:
    """The text of ``path`` (gunzipped when its name ends in ``.gz``; a BOM dropped).
    ``OSError`` or ``UnicodeError`` when it cannot be read, as ``Path.read_text`` raises;
    a damaged gzip stream is an ``OSError`` too."""
    if not is_gzipped(path):
        return path.read_text(encoding="utf-8-sig")
    try:
        with gzip.open(path, "rt", encoding="utf-8-sig") as fh:
            return fh.read()
    except (EOFError, zlib.error) as exc:  # a truncated or corrupt stream
        raise OSError(f"not a complete gzip file ({exc})") from exc


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` as UTF-8, gzipped when its name ends in ``.gz``. The
    gzip header carries no time or name, so the same text gives the same bytes (a
    rebuilt pool diffs clean)."""
    if not is_gzipped(path):
        path.write_text(text, encoding="utf-8")
        return
    data = gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)
    path.write_bytes(data)
