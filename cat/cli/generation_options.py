"""The generation options ``cat assess`` and ``cat synth`` share: how a model is asked.

Defined once here as typer options (plain objects: nothing heavy is imported until a
command runs); ``generation_settings`` turns their values into
``synth.generation.GenerationSettings``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from synth.generation import GenerationSettings

TEMPERATURE = typer.Option(
    None,
    "--temperature",
    min=0.0,
    max=2.0,
    help="Sampling temperature from 0 to 2 (the OpenAI API's range), sent with every "
    "request (default: the pool's protocol's, 0 for a pool that records none).",
)
EXTRACTOR = typer.Option(
    None,
    "--extractor",
    help="How the answer is read from a reply: builtin (the last 'Answer: X' or like "
    "statement), mmlu-pro-official (MMLU-Pro's three rules: the first 'answer is (X)', "
    "then 'Answer: X', then the last letter A-J). Default: the pool's protocol's.",
)
MAX_TOKENS = typer.Option(
    None, "--max-tokens", min=1, help="Longest reply, in tokens (default: the endpoint's)."
)
SYSTEM_PROMPT = typer.Option(
    None,
    "--system-prompt",
    help='Replace the built-in system message ("You are a helpful assistant."); "" sends none.',
)
STOP = typer.Option(
    None, "--stop", help="A sequence that ends a reply where it appears; repeat for several."
)
EXTRA_BODY = typer.Option(
    None,
    "--extra-body",
    help="Fields the endpoint takes beside the standard ones, as JSON or @FILE, e.g. '{\""
    'reasoning_effort": "low"}\'; they are part of each call\'s key in the store.',
)
STYLE = typer.Option(
    None,
    "--style",
    help="The built-in prompts' style: direct (the answer only) or cot (reasoning first). "
    "Default: the pool's protocol's (direct for a pool that records none).",
)
PROTOCOL_FORM = typer.Option(
    None,
    "--protocol-form",
    help="Ask in another form of the pool's protocol (cat pool info lists them), e.g. raw "
    "on mmlu-pro: its official raw prompt for a base model behind a completions "
    "endpoint (/v1/completions). Default: the protocol's main form.",
)
CONCURRENCY = typer.Option(8, "--concurrency", min=1, help="Calls in flight at once.")

#: What a template sees (synth.templates).
_FIELDS = "id, scenario, type, question, options, choices, language, instructions, meta"


def prompt_template_option(note: str) -> Any:
    """``--prompt-template``, its help ending in ``note``."""
    return typer.Option(
        None,
        "--prompt-template",
        help="A Jinja2 file that renders each question's user message from the item's "
        f"fields ({_FIELDS}; instructions is the built-in answer format, 'Answer: X', "
        f"which the grader reads). A misspelt field stops the run before any call. {note}",
    )


def few_shot_option(note: str) -> Any:
    """``--few-shot``, its help ending in ``note``."""
    return typer.Option(
        None,
        "--few-shot",
        min=0,
        help="Show K solved examples before each question, as user/assistant turns: "
        "items of its own scenario (of the whole pool when it has none), drawn with "
        "--seed, never the item itself; on a pool whose protocol names worked examples, "
        f"K of those, chosen as it says (default: the protocol's K, else 0). {note}",
    )


def generation_settings(
    *,
    temperature: float | None,
    max_tokens: int | None,
    system_prompt: str | None,
    prompt_template: Path | None,
    few_shot: int | None,
    stop: list[str] | None,
    extra_body: str | None,
    extractor: str | None = None,
) -> GenerationSettings:
    """The settings the options give (``synth.generation.settings_from_options``): only
    the options given are set, and those override a pool's protocol."""
    from synth.generation import settings_from_options

    return settings_from_options(
        temperature=temperature,
        max_tokens=max_tokens,
        system_prompt=system_prompt,
        prompt_template=prompt_template,
        few_shot=few_shot,
        stop=list(stop) if stop else None,
        extra_body=extra_body,
        extractor=extractor,
    )


#: ``cat synth``'s and ``cat pool create``'s: the references' first answers.
SYNTH_PROMPT_TEMPLATE = prompt_template_option(
    "It shapes the first answer; a pair's debate and reflection keep their own prompts."
)
SYNTH_FEW_SHOT = few_shot_option(
    "Every item is asked, each with examples other than itself; a pair's debate and "
    "reflection show none."
)
