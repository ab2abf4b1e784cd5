"""Log-likelihood scoring of multiple choice: the answer is the option the model finds
most probable after the prompt, as lm-evaluation-harness scores base models.

For each option the prompt is followed by a continuation (" " and the option's text, or
its letter: a protocol's ``choices``), and the completions endpoint is asked for the
log-probabilities of the prompt's own tokens (``echo`` with ``logprobs``, one request
for all options, as lm-eval's ``local-completions`` sends; vLLM's OpenAI server answers
the same). An option's log-likelihood is the sum over the tokens from the end of the
prompt on. The answer is the option of the largest sum (``loglikelihood``, lm-eval's
``acc``), or of the largest sum per character of the continuation
(``loglikelihood-norm``, its ``acc_norm``).

In the run store the call is a ``ChatRequest`` whose one user message is the prompt and
whose ``extra_body`` holds the continuations under ``loglikelihood`` (the key covers
both), and its reply's text is the JSON of the options' log-likelihoods.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from itempool import PoolItem
from synth.errors import SynthError

__all__ = [
    "CONTINUATIONS",
    "OptionScores",
    "continuations",
    "option_loglikelihoods",
    "prompt_text",
]

#: The ``extra_body`` key under which a stored request keeps its continuations.
CONTINUATIONS = "loglikelihood"


def continuations(item: PoolItem, choices: str) -> list[tuple[str, str]]:
    """(letter, continuation) of each option of ``item``: " " and its text, or its
    letter (``choices`` "letters")."""
    if not item.options:
        raise SynthError(f"item {item.id}: log-likelihood scoring needs options")
    if choices == "letters":
        return [(letter, f" {letter}") for letter in item.options]
    return [(letter, f" {text}") for letter, text in item.options.items()]


def prompt_text(messages: Sequence[tuple[str, str]]) -> str:
    """The one prompt of a completions request made of chat ``messages``: their texts
    in order, a blank line apart (a system text first, few-shot turns, the question)."""
    return "\n\n".join(text for _, text in messages if text)


def option_loglikelihoods(logprobs: Any, prompt_length: int, continuation_length: int) -> float:
    """The sum of the token log-probabilities of one echoed choice from character
    ``prompt_length`` up to ``prompt_length + continuation_length`` (a token that starts
    there; a generated token after the prompt is left out)."""
    offsets = _field(logprobs, "text_offset")
    values = _field(logprobs, "token_logprobs")
    if not isinstance(offsets, list) or not isinstance(values, list):
        raise SynthError("the endpoint sent no token log-probabilities (echo with logprobs)")
    end = prompt_length + continuation_length
    total = 0.0
    counted = 0
    for offset, value in zip(offsets, values, strict=False):
        if prompt_length <= offset < end:
            if value is None:
                raise SynthError("the endpoint sent a token without its log-probability")
            total += float(value)
            counted += 1
    if counted == 0:
        raise SynthError("no token of the option was scored: does the endpoint echo prompts?")
    return total


def _field(logprobs: Any, name: str) -> Any:
    if isinstance(logprobs, dict):
        return logprobs.get(name)
    return getattr(logprobs, name, None)


@dataclass(frozen=True)
class OptionScores:
    """Each option's log-likelihood and the length of its continuation in characters."""

    letters: tuple[str, ...]
    loglikelihoods: tuple[float, ...]
    lengths: tuple[int, ...]

    def to_text(self) -> str:
        """As the run store keeps it (a reply's text)."""
        return json.dumps(
            {
                "letters": list(self.letters),
                "loglikelihoods": list(self.loglikelihoods),
                "lengths": list(self.lengths),
            }
        )

    @classmethod
    def from_text(cls, text: str) -> OptionScores:
        try:
            data = json.loads(text)
            return cls(
                tuple(str(x) for x in data["letters"]),
                tuple(float(x) for x in data["loglikelihoods"]),
                tuple(int(x) for x in data["lengths"]),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise SynthError(f"a stored log-likelihood reply cannot be read ({exc})") from exc

    def choice(self, rule: str) -> str:
        """The option ``rule`` chooses: "loglikelihood" the largest sum,
        "loglikelihood-norm" the largest sum per character; ties go to the first."""
        if rule == "loglikelihood-norm":
            values = [v / max(n, 1) for v, n in zip(self.loglikelihoods, self.lengths, strict=True)]
        elif rule == "loglikelihood":
            values = list(self.loglikelihoods)
        else:
            raise SynthError(f"{rule!r} is no log-likelihood rule")
        best = max(range(len(values)), key=lambda k: (values[k], -k))
        return self.letters[best]
