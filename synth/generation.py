"""Generation settings: how a model is asked, beyond which items it is asked.

``GenerationSettings`` holds what ``cat assess`` and ``cat synth`` take as
``--temperature``, ``--max-tokens``, ``--system-prompt``, ``--prompt-template``,
``--few-shot``, ``--stop`` and ``--extra-body``, and what a pool's protocol adds
(``itempool.protocol``: worked examples from a file and how they are chosen, the answer
extractor; ``synth.protocols`` turns a protocol into settings). Every one of them but
the extractor changes either the messages sent or the request's parameters, and so the
run store's call key: a changed setting is a new call, never a stored reply.

``GenerationSettings.record()`` is what the outputs keep (RESULT.json ``settings.generation``,
the synth store's run record): the same settings, with the prompt template named by its
path and the sha256 of its text rather than the text itself (the rendered prompts are in
the run store, call by call, and the hash tells two templates apart).
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from itempool.worked_examples import WorkedExample
from synth.errors import SynthError

__all__ = [
    "RESERVED_BODY_FIELDS",
    "GenerationRecord",
    "GenerationSettings",
    "changed_settings",
    "parse_extra_body",
    "settings_from_options",
]

#: Request fields ``--extra-body`` must not set: each is ours to send (the option named
#: beside it sets it), or would break how a reply is read.
RESERVED_BODY_FIELDS: dict[str, str] = {
    "model": "--model",
    "messages": "the prompt options",
    "temperature": "--temperature",
    "max_tokens": "--max-tokens",
    "stop": "--stop",
    "seed": "--seed",
    "stream": "",
    "n": "",
}


class GenerationRecord(BaseModel):
    """The generation settings as a run records them (``GenerationSettings.record``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float = 0.0
    max_tokens: int | None = None
    # None: the built-in system prompt; "": none sent.
    system_prompt: str | None = None
    # The template file as given, and the sha256 of its text (None: the built-in prompts).
    prompt_template: str | None = None
    prompt_template_sha256: str | None = None
    few_shot: int = 0
    stop: list[str] | None = None
    extra_body: dict[str, Any] | None = None
    # Worked examples from a file (its path and the sha256 of the examples; None: solved
    # pool items), how they are chosen, and the rule that reads the answer.
    examples: str | None = None
    examples_sha256: str | None = None
    few_shot_select: Literal["seeded", "first"] = "seeded"
    extractor: str = "builtin"
    mode: Literal["generate", "loglikelihood"] = "generate"
    choices: Literal["texts", "letters"] = "texts"
    endpoint: Literal["chat", "completions"] = "chat"


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class GenerationSettings(BaseModel):
    """How every answer is asked for.

    ``temperature`` and ``max_tokens`` (None: the endpoint's default) are sent with every
    request; ``stop`` (sequences that end a reply) and ``extra_body`` (fields the
    endpoint takes beside the standard ones, e.g. ``{"reasoning_effort": "low"}``) only
    when set. ``system_prompt`` replaces the built-in system message ("" sends none).
    ``prompt_template`` is a Jinja2 template's text (``synth.templates``) that renders the
    user message of the first answer from the item's fields, and ``prompt_template_path``
    names where it came from, for the record. ``few_shot`` shows that many solved
    examples before each question (``synth.few_shot``): solved pool items, or the
    ``examples`` (worked examples of a protocol, named ``examples_path``) chosen as
    ``few_shot_select`` says. ``extractor`` names how an answer is read from a reply
    (``synth.extractors``). ``endpoint`` "completions" sends each question as one raw
    prompt to ``/v1/completions`` (the messages' texts a blank line apart), as base
    models are run without a chat template."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # The OpenAI API's range; higher values make a reply close to noise.
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    max_tokens: int | None = Field(None, ge=1)
    system_prompt: str | None = None
    prompt_template: str | None = None
    prompt_template_path: str | None = None
    few_shot: int = Field(0, ge=0)
    stop: tuple[str, ...] | None = None
    extra_body: dict[str, Any] | None = None
    examples: tuple[WorkedExample, ...] | None = None
    examples_path: str | None = None
    few_shot_select: Literal["seeded", "first"] = "seeded"
    extractor: str = "builtin"
    mode: Literal["generate", "loglikelihood"] = "generate"
    choices: Literal["texts", "letters"] = "texts"
    endpoint: Literal["chat", "completions"] = "chat"

    @field_validator("extractor")
    @classmethod
    def _known_extractor(cls, value: str) -> str:
        from synth.extractors import check_extractor

        try:
            return check_extractor(value)
        except SynthError as exc:
            raise ValueError(str(exc)) from exc

    @field_validator("temperature")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("temperature must be a finite number")
        return value

    @field_validator("stop", mode="before")
    @classmethod
    def _stop_list(cls, value: Any) -> Any:
        if isinstance(value, str):  # one sequence, not its characters
            return (value,)
        if isinstance(value, list | tuple) and not value:
            return None  # no --stop: nothing to send
        return value

    @field_validator("stop")
    @classmethod
    def _stop_texts(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is not None and any(not text for text in value):
            raise ValueError("a stop sequence must not be empty")
        return value

    @field_validator("extra_body", mode="before")
    @classmethod
    def _extra_object(cls, value: Any) -> Any:
        if value is not None and not isinstance(value, dict):
            raise ValueError(f"the extra body must be a JSON object, got {type(value).__name__}")
        return value

    @field_validator("extra_body")
    @classmethod
    def _extra_fields(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is None:
            return None
        for name in value:
            if name in RESERVED_BODY_FIELDS:
                option = RESERVED_BODY_FIELDS[name]
                how = f"use {option}" if option else "it is not supported"
                raise ValueError(f"the extra body must not set {name!r} ({how})")
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"the extra body must be plain JSON ({exc})") from exc
        return value or None

    @model_validator(mode="after")
    def _template_compiles(self) -> GenerationSettings:
        if self.prompt_template is not None:
            from synth.templates import compile_template

            compile_template(self.prompt_template, self.prompt_template_path)
        elif self.prompt_template_path is not None:
            raise ValueError("prompt_template_path names a template: give its text too")
        if self.few_shot_select == "first" and self.examples is None:
            raise ValueError("few_shot_select 'first' takes the first worked examples: give them")
        if (self.mode == "loglikelihood") != self.extractor.startswith("loglikelihood"):
            raise ValueError(
                "mode loglikelihood goes with the extractor loglikelihood or "
                "loglikelihood-norm, and they with it"
            )
        return self

    @property
    def default(self) -> bool:
        """Whether every setting is the built-in one (the prompts of ``synth.prompts``)."""
        return self == type(self)()

    def record(self) -> GenerationRecord:
        """The settings as outputs record them (the template by path and sha256)."""
        template = self.prompt_template
        sha = None if template is None else _sha256(template)
        path = self.prompt_template_path
        if template is not None and path is None:
            path = "<inline>"
        examples, examples_sha = None, None
        if self.examples is not None:
            examples = self.examples_path or "<inline>"
            lines = (e.model_dump_json() for e in self.examples)
            examples_sha = _sha256("\n".join(lines))
        return GenerationRecord(
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            system_prompt=self.system_prompt,
            prompt_template=path,
            prompt_template_sha256=sha,
            few_shot=self.few_shot,
            stop=None if self.stop is None else list(self.stop),
            extra_body=self.extra_body,
            examples=examples,
            examples_sha256=examples_sha,
            few_shot_select=self.few_shot_select,
            extractor=self.extractor,
            mode=self.mode,
            choices=self.choices,
            endpoint=self.endpoint,
        )


def parse_extra_body(text: str) -> dict[str, Any]:
    """``--extra-body``: inline JSON (``'{"reasoning_effort": "low"}'``) or ``@FILE``."""
    source = "--extra-body"
    if text.startswith("@"):
        path = Path(text[1:])
        source = f"--extra-body {text}"
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise SynthError(f"{source}: cannot read {path} ({exc.strerror or exc})") from exc
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SynthError(f"{source}: not valid JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise SynthError(f"{source}: must be a JSON object ({{...}}), got {type(value).__name__}")
    return value


def settings_from_options(
    *,
    temperature: float | None = None,
    max_tokens: int | None = None,
    system_prompt: str | None = None,
    prompt_template: Path | None = None,
    few_shot: int | None = None,
    stop: list[str] | None = None,
    extra_body: str | None = None,
    extractor: str | None = None,
) -> GenerationSettings:
    """The settings the command-line options give (a template file read, the extra body
    parsed), or ``SynthError`` naming the option at fault. An option left out (None) is
    not set: the settings' ``model_fields_set`` names the ones given, which override a
    pool's protocol (``synth.protocols.follow_protocol``)."""
    given: dict[str, Any] = {}
    if prompt_template is not None:
        try:
            given["prompt_template"] = prompt_template.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or exc
            raise SynthError(
                f"--prompt-template {prompt_template}: cannot read it ({reason})"
            ) from exc
        given["prompt_template_path"] = str(prompt_template)
    if extra_body is not None:
        given["extra_body"] = parse_extra_body(extra_body)
    if stop:
        given["stop"] = tuple(stop)
    options = {
        "temperature": temperature,
        "max_tokens": max_tokens,
        "system_prompt": system_prompt,
        "few_shot": few_shot,
        "extractor": extractor,
    }
    given.update({name: value for name, value in options.items() if value is not None})
    try:
        return GenerationSettings(**given)
    except ValidationError as exc:
        raise SynthError(describe(exc)) from exc


#: The command-line option that sets each field, for messages.
FIELD_OPTIONS = {
    "temperature": "--temperature",
    "max_tokens": "--max-tokens",
    "system_prompt": "--system-prompt",
    "prompt_template": "--prompt-template",
    "few_shot": "--few-shot",
    "stop": "--stop",
    "extra_body": "--extra-body",
    "extractor": "--extractor",
}


def describe(exc: ValidationError) -> str:
    """The first problem of a ``GenerationSettings`` validation, named by its option."""
    error = exc.errors()[0]
    where = error["loc"][0] if error["loc"] else ""
    message = str(error["msg"]).removeprefix("Value error, ")
    option = FIELD_OPTIONS.get(str(where))
    return f"{option}: {message}" if option else message


def changed_settings(saved: Any, now: GenerationRecord) -> list[str]:
    """How ``now`` differs from ``saved`` (a record as a run stored it; None or a
    record's dict), one "name old -> new" each. A run recorded before these settings
    existed was asked with the defaults."""
    try:
        before = GenerationRecord() if saved is None else GenerationRecord.model_validate(saved)
    except ValidationError:
        return ["the stored settings cannot be read"]
    old, new = before.model_dump(mode="json"), now.model_dump(mode="json")
    return [
        f"{name} {json.dumps(old[name], ensure_ascii=False)} -> "
        f"{json.dumps(new[name], ensure_ascii=False)}"
        for name in new
        if old[name] != new[name]
    ]
