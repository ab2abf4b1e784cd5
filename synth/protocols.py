"""Asking a model the way a pool's references were asked (``itempool.protocol``).

``follow_protocol`` turns a pool's protocol into the generation settings and prompt
style of an assessment, with the fields a user set (``GenerationSettings.model_fields_set``,
``style``) put over it, and names every field in which the result departs from the
protocol: a θ estimated off-protocol sits on another scale than the references' θ, and
the result must say so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import ValidationError

from itempool.protocol import LoadedProtocol, PoolProtocol
from itempool.protocol_bundle import ProtocolBundle
from synth.errors import SynthError
from synth.generation import GenerationRecord, GenerationSettings, describe
from synth.names import Style

__all__ = ["ProtocolFollowed", "follow_protocol", "protocol_of_run", "settings_from_protocol"]

#: Where a run's template and worked examples go in a pool (``protocol_of_run``).
TEMPLATE_FILE = "protocol/template.jinja"
EXAMPLES_FILE = "protocol/examples.jsonl"

#: The record's fields compared with the protocol's: a template or examples file
#: counts by its text (sha256), not by the path it was read from.
_COMPARED = tuple(
    name for name in GenerationRecord.model_fields if name not in ("prompt_template", "examples")
)


@dataclass(frozen=True)
class ProtocolFollowed:
    """The settings and style an assessment asks with, and how they depart from the
    pool's protocol in the ``form`` followed (``differs``: field names, empty when on
    protocol)."""

    settings: GenerationSettings
    style: Style
    differs: tuple[str, ...]
    form: str = "default"

    @property
    def on_protocol(self) -> bool:
        return not self.differs


def settings_from_protocol(protocol: LoadedProtocol) -> GenerationSettings:
    """The generation settings that ask as ``protocol`` says."""
    spec = protocol.spec
    try:
        return GenerationSettings(
            temperature=spec.temperature,
            max_tokens=spec.max_tokens,
            system_prompt=spec.system_prompt,
            prompt_template=protocol.template_text,
            prompt_template_path=spec.template if protocol.template_text is not None else None,
            few_shot=spec.few_shot,
            stop=spec.stop,
            extra_body=spec.extra_body,
            examples=protocol.examples,
            examples_path=spec.examples,
            few_shot_select=spec.few_shot_select,
            extractor=spec.extractor,
            mode=spec.mode,
            choices=spec.choices,
            endpoint=spec.endpoint,
        )
    except ValidationError as exc:
        raise SynthError(f"the pool's protocol {spec.name!r}: {describe(exc)}") from exc


def follow_protocol(
    protocol: LoadedProtocol,
    given: GenerationSettings | None = None,
    style: Style | str | None = None,
    form: str | None = None,
) -> ProtocolFollowed:
    """``protocol``'s settings, in its ``form`` (None: its main one), with the fields
    set in ``given`` (and ``style``, when not None) put over them. A template given
    replaces the protocol's together with its path; a prompt style or any other field
    differing from the protocol is named in ``differs``."""
    try:
        protocol = protocol.in_form(form)
    except ValueError as exc:
        raise SynthError(str(exc)) from exc
    base = settings_from_protocol(protocol)
    chosen = Style(style) if style is not None else Style(protocol.spec.style)
    if given is None or not given.model_fields_set:
        settings = base
    else:
        update = {name: getattr(given, name) for name in given.model_fields_set}
        if "prompt_template" in update and "prompt_template_path" not in update:
            update["prompt_template_path"] = given.prompt_template_path
        fields = {name: getattr(base, name) for name in GenerationSettings.model_fields}
        try:
            settings = GenerationSettings(**{**fields, **update})
        except ValidationError as exc:
            raise SynthError(describe(exc)) from exc
    differs = _differences(base, settings, protocol, chosen)
    return ProtocolFollowed(settings, chosen, differs, protocol.spec.form)


def _differences(
    base: GenerationSettings,
    settings: GenerationSettings,
    protocol: LoadedProtocol,
    style: Style,
) -> tuple[str, ...]:
    before, after = base.record(), settings.record()
    differs = [name for name in _COMPARED if getattr(before, name) != getattr(after, name)]
    # One name for a template or examples file, however it differs.
    renamed = {"prompt_template_sha256": "prompt_template", "examples_sha256": "examples"}
    named = [renamed.get(name, name) for name in differs]
    if style.value != protocol.spec.style:
        named.insert(0, "style")
    return tuple(dict.fromkeys(named))


def protocol_of_run(
    settings: GenerationSettings, styles: Sequence[Style], note: str | None = None
) -> ProtocolBundle:
    """The protocol a ``cat synth`` run asked its participants by (its generation
    settings, its first prompt style) with the files it names, for the pool calibrated
    on the run's answers."""
    files: dict[str, str] = {}
    if settings.prompt_template is not None:
        files[TEMPLATE_FILE] = settings.prompt_template
    if settings.examples is not None:
        files[EXAMPLES_FILE] = "".join(e.model_dump_json() + "\n" for e in settings.examples)
    others = [s.value for s in styles[1:]]
    if others:
        also = f"also asked in the {', '.join(others)} style (the protocol keeps the first)"
        note = f"{note}; {also}" if note else also
    spec = PoolProtocol(
        name="cat synth",
        style=styles[0].value if styles else Style.DIRECT.value,
        system_prompt=settings.system_prompt,
        template=TEMPLATE_FILE if settings.prompt_template is not None else None,
        few_shot=settings.few_shot,
        examples=EXAMPLES_FILE if settings.examples is not None else None,
        few_shot_select=settings.few_shot_select,
        extractor=settings.extractor,
        mode=settings.mode,
        endpoint=settings.endpoint,
        choices=settings.choices,
        temperature=settings.temperature,
        max_tokens=settings.max_tokens,
        stop=settings.stop,
        extra_body=settings.extra_body,
        note=note,
    )
    return ProtocolBundle(protocol=spec, files=files)
