"""The recorded answers a local server replays (``--replay RESPONSES``): each subject of a
response matrix becomes a model of its own name that answers as it did."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from synth.errors import SynthError

__all__ = ["read_replay"]


def read_replay(path: Path, subjects: Sequence[str] | None = None) -> dict[str, dict[str, int]]:
    """Each subject's answers (item id -> 0/1; unanswered items absent) from the response
    matrix ``path`` (``.jsonl``, ``.csv``, either optionally gzipped:
    ``itempool.formats.responses``), or
    only those of ``subjects``. ``SynthError`` for an unreadable file or an unknown
    subject."""
    # numpy and the readers load only when a server replays.
    from irt.errors import IRTError
    from itempool.formats.responses import read_responses

    try:
        matrix = read_responses(path)
    except IRTError as exc:
        raise SynthError(f"--replay {path}: {exc}") from exc
    names = list(matrix.subject_ids) if subjects is None else list(subjects)
    unknown = [name for name in names if name not in matrix.subject_ids]
    if unknown:
        some = ", ".join(matrix.subject_ids[:5]) + (", ..." if matrix.n_subjects > 5 else "")
        raise SynthError(
            f"--replay {path} has no subject {unknown[0]!r} (it has {matrix.n_subjects}: {some})"
        )
    row = {name: k for k, name in enumerate(matrix.subject_ids)}
    replay: dict[str, dict[str, int]] = {}
    for name in names:
        values = matrix.values[row[name]]
        replay[name] = {
            item: int(v) for item, v in zip(matrix.item_ids, values.tolist(), strict=True) if v >= 0
        }
    return replay
