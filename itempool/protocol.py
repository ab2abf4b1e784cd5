"""A pool's protocol (``pool.json`` ``protocol``): how its references were asked and graded.

A model's θ is comparable with the references' only when it is asked and graded the way
they were (DESIGN.md, "Item pool"), so ``cat assess`` follows this by default. The keys:

=====================  ===============================================================
``name``               what the protocol is called ("builtin", "mmlu-pro-official")
``mode``               ``generate`` (a reply is graded) or ``loglikelihood`` (the
                       option of highest log-probability is the answer: the extractor
                       ``loglikelihood``, or ``loglikelihood-norm`` per character)
``endpoint``           in generate mode, ``chat`` (``/v1/chat/completions``, the
                       messages) or ``completions`` (``/v1/completions``: one raw
                       prompt, the messages' texts a blank line apart, no chat
                       template: how base models are run by vLLM or lm-eval)
``choices``            in loglikelihood mode, what follows the prompt: each option's
                       ``texts`` (" Paris") or ``letters`` (" B")
``style``              ``direct`` or ``cot``: the built-in prompts' instruction line
``system_prompt``      the system message; null: the built-in one; "": none is sent
``template``           a Jinja2 file in the pool that renders the user message
                       (``synth.templates``); null: the built-in prompts
``few_shot``           how many worked examples precede each question (0: none)
``examples``           a JSONL file in the pool of worked examples
                       (``itempool.worked_examples``); null: solved pool items
``few_shot_select``    ``seeded`` (drawn per scenario with the run's seed) or
                       ``first`` (the first K of the item's scenario, in file order);
                       a template that uses its ``examples`` field renders them in one
                       user message, otherwise each is a user and an assistant turn
``extractor``          the rule that reads the answer (``synth.extractors``)
``temperature``,       sent with every request (null max tokens: the endpoint's)
``max_tokens``,
``stop``
``extra_body``         fields sent beside the standard ones (``{"reasoning_effort":
                       "low"}``)
``no_answer``          how the references' results counted a reply with no answer:
                       ``wrong`` (0) or ``skipped``
``source``, ``note``   where the protocol comes from (a URL and commit) and any remark
``form``               what this way of asking is called ("chat"; "default" unnamed)
``references``         the references that were asked this way, where known
``reply_tokens``       the references' mean reply length in tokens (their endpoints'
                       counts), where recorded: what ``--dry-run`` expects a reply to
                       cost. Not a way of asking: a form keeps its own or none
``forms``              other ways the references were asked, by name: each the fields
                       that differ from this one (``{"raw": {"endpoint":
                       "completions", "template": ..., "references": [...]}}``).
                       ``cat assess --protocol-form NAME`` asks in one of them
=====================  ===============================================================

A benchmark's official evaluation often has two forms, one for chat endpoints and one
raw prompt for base models behind a completions endpoint (MMLU-Pro's
``evaluate_from_api.py`` and ``evaluate_from_local.py``): both are the references'
protocol, and a model asked in either is on protocol.

A pool without the key was calibrated on answers asked the built-in way
(``BUILTIN_PROTOCOL``): direct style, the built-in system message and prompts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from itempool.errors import PoolFormatError
from itempool.problems import Problem, describe_errors
from itempool.worked_examples import WorkedExample, read_worked_examples

__all__ = [
    "BUILTIN_PROTOCOL",
    "PROTOCOL_FIELDS",
    "LoadedProtocol",
    "PoolProtocol",
    "check_protocol",
]

#: What a form of a protocol may not set: what names and holds the forms.
_NOT_IN_FORM = frozenset({"name", "form", "forms"})


class PoolProtocol(BaseModel):
    """``pool.json``'s ``protocol`` (module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field("builtin", min_length=1)
    mode: Literal["generate", "loglikelihood"] = "generate"
    endpoint: Literal["chat", "completions"] = "chat"
    choices: Literal["texts", "letters"] = "texts"
    style: Literal["direct", "cot"] = "direct"
    system_prompt: str | None = None
    template: str | None = None
    few_shot: int = Field(0, ge=0)
    examples: str | None = None
    few_shot_select: Literal["seeded", "first"] = "seeded"
    extractor: str = Field("builtin", min_length=1)
    temperature: float = Field(0.0, ge=0.0)
    max_tokens: int | None = Field(None, ge=1)
    stop: tuple[str, ...] | None = None
    extra_body: dict[str, Any] | None = None
    no_answer: Literal["wrong", "skipped"] = "wrong"
    source: str | None = None
    note: str | None = None
    form: str = Field("default", min_length=1)
    references: tuple[str, ...] | None = None
    reply_tokens: float | None = Field(None, ge=0)
    forms: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @field_validator("template", "examples")
    @classmethod
    def _inside_pool(cls, value: str | None) -> str | None:
        if value is not None:
            path = Path(value)
            if path.is_absolute() or ".." in path.parts or not value.strip():
                raise ValueError(f"{value!r} must be a file inside the pool folder")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> PoolProtocol:
        if self.examples is not None and self.few_shot == 0:
            raise ValueError("examples names a file of worked examples, but few_shot is 0")
        loglik = self.extractor.startswith("loglikelihood")
        if (self.mode == "loglikelihood") != loglik:
            raise ValueError(
                "mode loglikelihood goes with the extractor loglikelihood or "
                "loglikelihood-norm, and they with it"
            )
        if self.few_shot_select == "first" and self.examples is None:
            raise ValueError("few_shot_select 'first' takes a file's first examples: name it")
        if self.form in self.forms:
            raise ValueError(f"forms names {self.form!r}, which is this form's own name")
        for name in self.forms:
            self.in_form(name)  # each form a valid protocol of its own
        return self

    def file_names(self) -> tuple[str, ...]:
        """Every file in the pool this protocol and its forms name (templates, worked
        examples), each once, in order."""
        forms = [self, *(self.in_form(name) for name in self.forms)]
        names = (n for f in forms for n in (f.template, f.examples) if n is not None)
        return tuple(dict.fromkeys(names))

    @property
    def form_names(self) -> tuple[str, ...]:
        """This form's name and the other forms'."""
        return (self.form, *self.forms)

    def in_form(self, name: str | None) -> PoolProtocol:
        """The protocol as form ``name`` asks (None or this form's name: this one),
        without the other forms; ``ValueError`` naming the forms there are."""
        if name is None or name == self.form:
            return self
        if name not in self.forms:
            raise ValueError(
                f"the protocol {self.name!r} has no form {name!r}; its forms: "
                + ", ".join(self.form_names)
            )
        changes = self.forms[name]
        wrong = sorted(set(changes) & _NOT_IN_FORM)
        if wrong:
            raise ValueError(f"form {name!r} must not set {', '.join(wrong)}")
        # A form keeps the protocol's source unless it names its own, not its note, its
        # references or its replies' length.
        fields = self.model_dump(exclude={"forms", "references", "note", "reply_tokens"})
        try:
            return PoolProtocol.model_validate(
                {**fields, "references": None, **changes, "form": name}
            )
        except ValidationError as exc:
            raise ValueError(f"form {name!r}: {describe_errors(exc)}") from exc


#: The protocol of a pool that records none: how ``cat synth`` asks by default.
BUILTIN_PROTOCOL = PoolProtocol()

#: The fields that say how a model is asked and graded (not what the protocol is called
#: or where it comes from): an assessment that differs in one of them is off-protocol.
PROTOCOL_FIELDS = tuple(
    name
    for name in PoolProtocol.model_fields
    if name not in ("name", "source", "note", "form", "references", "forms", "reply_tokens")
)


@dataclass(frozen=True)
class LoadedProtocol:
    """A pool's protocol with its files read: the template's text and the examples;
    ``forms`` the other forms, loaded likewise."""

    spec: PoolProtocol = BUILTIN_PROTOCOL
    template_text: str | None = None
    examples: tuple[WorkedExample, ...] | None = None
    forms: Mapping[str, LoadedProtocol] = field(default_factory=dict)

    @property
    def recorded(self) -> bool:
        """Whether the pool records its protocol (else it is the built-in one)."""
        return self.spec is not BUILTIN_PROTOCOL

    def in_form(self, name: str | None) -> LoadedProtocol:
        """The protocol as form ``name`` asks (None: the pool's main form);
        ``ValueError`` naming the forms there are."""
        if name is None or name == self.spec.form:
            return self
        if name not in self.forms:
            self.spec.in_form(name)  # raises, naming the forms
        return self.forms[name]


#: Where problems of the protocol are reported.
_WHERE = "pool.json protocol"


def check_protocol(
    folder: Path, spec: PoolProtocol | None, problems: list[Problem]
) -> LoadedProtocol | None:
    """The protocol ``spec`` of the pool in ``folder`` with its files read (the built-in
    one when ``spec`` is None), or None after adding to ``problems`` why a file it names
    cannot be read."""
    if spec is None:
        return LoadedProtocol()
    forms: dict[str, LoadedProtocol] = {}
    for name in spec.forms:
        where = f"{_WHERE} form {name!r}"
        loaded = _load_files(folder, spec.in_form(name), where, problems)
        if loaded is None:
            return None
        forms[name] = loaded
    main = _load_files(folder, spec, _WHERE, problems)
    if main is None:
        return None
    return LoadedProtocol(main.spec, main.template_text, main.examples, forms)


def _load_files(
    folder: Path, spec: PoolProtocol, where: str, problems: list[Problem]
) -> LoadedProtocol | None:
    """``spec`` with the files it names read from ``folder`` (not its forms' files)."""
    template = None
    if spec.template is not None:
        path = folder / spec.template
        try:
            template = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or exc
            problems.append(Problem(where, None, f"template {spec.template}: {reason}"))
            return None
    examples = None
    if spec.examples is not None:
        try:
            examples = read_worked_examples(folder / spec.examples)
        except PoolFormatError as exc:
            problems.append(Problem(where, None, f"examples: {exc}"))
            return None
    return LoadedProtocol(spec, template, examples)
