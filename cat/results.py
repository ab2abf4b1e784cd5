"""The base of every typed result the library returns and the CLI writes as JSON, and
which of those files a JSON object is (``output_kind``: so that a command given the wrong
one, ``cat leaderboard compare.json``, says what it was given instead of listing the
fields it lacks)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

from itempool.atomic import write_text_atomic


class ResultModel(BaseModel):
    """A result whose ``model_dump(mode="json")`` is the JSON file a command writes.

    Keys listed in ``omit_if_none`` are left out of the dump when they hold None, so
    that a key is absent rather than null where it does not apply, e.g. RESULT.json's
    ``profile`` on a unidimensional pool (keys the README lists stay, as null)."""

    model_config = ConfigDict(extra="forbid")

    omit_if_none: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _drop_absent(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for key in self.omit_if_none:
                if data.get(key, 0) is None:
                    del data[key]
        return data

    def write_json(self, path: Path) -> None:
        """Write the dump as indented UTF-8 JSON (non-ASCII kept readable), replacing
        ``path`` atomically: an interrupted run leaves the old file or none."""
        write_text_atomic(Path(path), self.model_dump_json(indent=1) + "\n")


#: (keys, what the file is): the first whose keys are all in an object names it.
_KINDS: tuple[tuple[frozenset[str], str], ...] = (
    (frozenset({"model_a", "model_b", "decision", "difference"}), "a cat compare result"),
    (frozenset({"rows", "common_settings", "differing_settings"}), "a cat leaderboard file"),
    (frozenset({"results", "subjects", "settings"}), "a cat validate report (VALID.json)"),
    (frozenset({"examinees", "summary", "settings"}), "a cat simulate result"),
    (frozenset({"loglik", "n_iter", "converged", "model"}), "a cat calibrate report (REPORT.json)"),
    (frozenset({"predicted_accuracy", "theta", "model", "items"}), "a RESULT.json of cat assess"),
)


def output_kind(data: object) -> str | None:
    """What ``data`` (a parsed JSON file) is among cat's outputs; None if none of them."""
    if not isinstance(data, dict):
        return None
    return next((what for keys, what in _KINDS if keys <= data.keys()), None)
