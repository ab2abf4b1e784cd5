"""Prompt templates: the user message of a first answer, written by the user in Jinja2.

A template sees one item's fields:

=================  ==========================================================
``id``             the item's id
``scenario``       its scenario ("" when it has none)
``type``           ``single``, ``multi``, ``order`` or ``open``
``question``       the question text
``options``        a dict letter -> option text (empty for an open item)
``choices``        the same as a list of (letter, text) pairs, in order
``language``       the pool's language, ``en`` or ``zh``
``instructions``   the built-in style line and answer format (``Answer: X``), which the
                   grader reads: keep it unless the template asks for that line itself
``meta``           the item's ``meta`` dict
``examples``       the worked examples shown before this item, each a dict of
                   ``id``, ``scenario``, ``question``, ``options``, ``choices``,
                   ``answer`` and ``worked`` (the solved answer); empty without
                   few-shot. A template that uses it renders the examples itself, in
                   the one user message; otherwise each example is a user turn (this
                   template on the example) and an assistant turn (its answer)
=================  ==========================================================

for example::

    {{ question }}
    {% for letter, text in choices %}({{ letter }}) {{ text }}
    {% endfor %}
    {{ instructions }}

The environment is sandboxed (a template cannot reach Python objects beyond these
values) and strict: a name it does not know, such as a misspelt field, is an error that
names it, raised when the run checks its items (one of each shape) before its first call.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import jinja2
from jinja2 import meta
from jinja2.sandbox import SandboxedEnvironment

from itempool import PoolItem
from synth.errors import SynthError
from synth.names import Style
from synth.prompts import instructions

__all__ = ["FIELDS", "compile_template", "item_fields", "render", "renders_examples"]

#: The names a template may use.
FIELDS = (
    "id",
    "scenario",
    "type",
    "question",
    "options",
    "choices",
    "language",
    "instructions",
    "meta",
    "examples",
)

_ENVIRONMENT = SandboxedEnvironment(
    undefined=jinja2.StrictUndefined,
    autoescape=False,
    keep_trailing_newline=False,
)


def _where(source: str | None) -> str:
    return f"prompt template {source}" if source else "prompt template"


@lru_cache(maxsize=16)
def compile_template(text: str, source: str | None = None) -> jinja2.Template:
    """The compiled template, or ``SynthError`` naming the line of a syntax error."""
    try:
        return _ENVIRONMENT.from_string(text)
    except jinja2.TemplateSyntaxError as exc:
        raise SynthError(f"{_where(source)}, line {exc.lineno}: {exc.message}") from exc


@lru_cache(maxsize=16)
def renders_examples(text: str) -> bool:
    """Whether the template ``text`` uses its ``examples`` field (and so shows the
    few-shot examples itself, in one message)."""
    try:
        return "examples" in meta.find_undeclared_variables(_ENVIRONMENT.parse(text))
    except jinja2.TemplateSyntaxError:
        return False  # compile_template reports it


def item_fields(
    item: PoolItem,
    language: str,
    style: Style,
    examples: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """What a template sees of ``item`` (see the module docstring)."""
    return {
        "id": item.id,
        "scenario": item.scenario,
        "type": item.type.value,
        "question": item.question,
        "options": dict(item.options),
        "choices": list(item.options.items()),
        "language": language,
        "instructions": instructions(item, language, style),
        "meta": dict(item.meta),
        "examples": list(examples or ()),
    }


def render(
    text: str,
    item: PoolItem,
    language: str,
    style: Style,
    source: str | None = None,
    examples: list[dict[str, Any]] | None = None,
) -> str:
    """The user message ``text`` renders for ``item`` (after ``examples``, the worked
    examples' fields); ``SynthError`` on an unknown name (naming it and the item), a
    sandbox refusal, or an empty message."""
    template = compile_template(text, source)
    try:
        message = template.render(item_fields(item, language, style, examples)).strip()
    except jinja2.UndefinedError as exc:
        raise SynthError(
            f"{_where(source)} on item {item.id}: {exc.message} (a template may use "
            f"{', '.join(FIELDS)})"
        ) from exc
    except jinja2.TemplateError as exc:  # a sandbox refusal, a filter's error
        raise SynthError(f"{_where(source)} on item {item.id}: {exc}") from exc
    except (TypeError, ValueError, ArithmeticError, LookupError) as exc:
        raise SynthError(f"{_where(source)} on item {item.id}: {exc}") from exc
    if not message:
        raise SynthError(f"{_where(source)} renders an empty message for item {item.id}")
    return message
