"""The base of every typed result the library returns and the CLI writes as JSON."""

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
