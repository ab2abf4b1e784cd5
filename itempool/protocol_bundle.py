"""A protocol with its files, as ``cat synth`` writes it beside the responses it asked for.

``cat synth --out responses.jsonl`` writes ``responses.protocol.json``: the protocol its
participants were asked and graded by (``itempool.protocol``) and the text of the files
it names (a prompt template), so that ``cat calibrate responses.jsonl --pool DIR``
can give the pool the protocol its references answered under, and ``cat assess`` asks a
new model the same way without being told.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from itempool.atomic import write_text_atomic
from itempool.errors import PoolFormatError
from itempool.problems import describe_errors
from itempool.protocol import PoolProtocol

__all__ = [
    "ProtocolBundle",
    "bundle_beside",
    "install_protocol",
    "read_bundle",
    "read_protocol_file",
]

#: What the bundle beside ``responses.jsonl`` is called: ``responses.protocol.json``.
SUFFIX = ".protocol.json"


class ProtocolBundle(BaseModel):
    """``protocol`` and ``files``: each file it names (a path inside the pool) and its text."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    protocol: PoolProtocol
    files: dict[str, str] = Field(default_factory=dict)

    def write(self, path: Path) -> None:
        write_text_atomic(path, self.model_dump_json(indent=1) + "\n")


def bundle_beside(responses: Path) -> Path:
    """Where the bundle of ``responses`` lies (its name up to the first dot, then
    ``.protocol.json``: ``out/run.jsonl.gz`` -> ``out/run.protocol.json``)."""
    stem = responses.name.split(".", 1)[0] or responses.name
    return responses.with_name(stem + SUFFIX)


def read_bundle(path: Path) -> ProtocolBundle:
    """The bundle in ``path``; ``PoolFormatError`` when it cannot be read."""
    try:
        return ProtocolBundle.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PoolFormatError(f"{path}: cannot read the protocol ({exc})") from exc
    except ValidationError as exc:
        raise PoolFormatError(f"{path}: {describe_errors(exc)}") from exc


def install_protocol(pool_dir: Path, bundle: ProtocolBundle) -> PoolProtocol:
    """Write ``bundle``'s files into the pool folder and its protocol into ``pool.json``."""
    missing = [name for name in bundle.protocol.file_names() if name not in bundle.files]
    if missing:
        raise PoolFormatError(f"the protocol names {missing[0]}, which the bundle lacks")
    for name, text in bundle.files.items():
        PoolProtocol(template=name)  # a path inside the pool, or refused
        target = pool_dir / name
        target.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(target, text)
    manifest_path = pool_dir / "pool.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["protocol"] = bundle.protocol.model_dump(mode="json", exclude_defaults=True)
    write_text_atomic(manifest_path, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return bundle.protocol


def read_protocol_file(path: Path) -> ProtocolBundle:
    """``--protocol FILE``: a bundle (``{"protocol": ..., "files": ...}``, as ``cat synth``
    writes one), or a protocol alone whose ``template`` and ``examples`` (its forms'
    too) are files beside ``path`` (read into the bundle, to go into the pool under the
    same names)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PoolFormatError(f"{path}: cannot read the protocol ({exc})") from exc
    if isinstance(data, dict) and "protocol" in data:
        return read_bundle(path)
    try:
        protocol = PoolProtocol.model_validate(data)
    except ValidationError as exc:
        raise PoolFormatError(f"{path}: {describe_errors(exc)}") from exc
    files: dict[str, str] = {}
    for name in protocol.file_names():
        try:
            files[name] = (path.parent / name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise PoolFormatError(f"{path}: cannot read {name} beside it ({exc})") from exc
    return ProtocolBundle(protocol=protocol, files=files)
