"""``POST /v1/completions`` with ``echo`` and ``logprobs``: the log-likelihood of a prompt.

How lm-evaluation-harness (``local-completions``) and vLLM's OpenAI server score a
multiple-choice question for a base model: the prompt is the question and one option,
and the log-probabilities the model gives the prompt's own tokens are sent back
(``echo``), each with its character offset; the option's log-likelihood is the sum over
the tokens after the question.

The local server's tokens are simple and its numbers easy to compute by hand, so that a
test can check the client's arithmetic: a token is a run of non-space characters with
the spaces before it, the first token of a prompt has no log-probability (None, as real
servers send), every token of the question costs ``CONTEXT_LOGPROB``, and every token of
an option costs ``FAVOURED_LOGPROB`` for the option the model leans to (the key with the
model's probability of a right answer, another option otherwise, drawn per model and
item) and ``OTHER_LOGPROB`` for the others. A prompt whose end is no option of the item
it asks is all context.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import time
from typing import Any, Final

from synth.local_server.simulator import ItemInfo, Simulator
from synth.question_match import normalise

__all__ = [
    "CONTEXT_LOGPROB",
    "FAVOURED_LOGPROB",
    "OTHER_LOGPROB",
    "completion_body",
    "tokens_of",
]

CONTEXT_LOGPROB: Final = -0.5
FAVOURED_LOGPROB: Final = -0.25
OTHER_LOGPROB: Final = -2.0
_TOKEN = re.compile(r"\s*\S+|\s+$")


def tokens_of(text: str) -> list[tuple[int, str]]:
    """(offset, token) of each token of ``text`` (module docstring)."""
    return [(m.start(), m.group()) for m in _TOKEN.finditer(text)]


def favoured(simulator: Simulator, model: str, info: ItemInfo) -> str:
    """The option ``model`` leans to on ``info``'s item: the same for every prompt."""
    digest = hashlib.sha256(f"{simulator.seed}\x00{model}\x00{info.item.id}".encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    key = info.item.answer
    if rng.random() < simulator.p_right(model, info.item.id):
        return key
    others = [letter for letter in info.letters if letter != key]
    return rng.choice(others) if others else key


def _option_at_end(info: ItemInfo, prompt: str) -> tuple[str, int] | None:
    """The option whose text (or letter) the prompt ends with, and where it starts."""
    stripped = prompt.rstrip()
    best: tuple[str, int] | None = None
    for letter, body in info.item.options.items():
        for candidate in (body, letter):
            if candidate and stripped.endswith(candidate):
                start = len(stripped) - len(candidate)
                if best is None or start < best[1]:  # the longest match wins
                    best = (letter, start)
    return best


def _logprobs(
    simulator: Simulator, model: str, info: ItemInfo | None, prompt: str
) -> dict[str, Any]:
    tokens = tokens_of(prompt)
    found = None if info is None else _option_at_end(info, prompt)
    lean = None if info is None else favoured(simulator, model, info)
    values: list[float | None] = []
    for k, (offset, token) in enumerate(tokens):
        if k == 0:
            values.append(None)
        elif found is not None and offset + len(token) > found[1]:
            values.append(FAVOURED_LOGPROB if found[0] == lean else OTHER_LOGPROB)
        else:
            values.append(CONTEXT_LOGPROB)
    return {
        "tokens": [token for _, token in tokens],
        "token_logprobs": values,
        "text_offset": [offset for offset, _ in tokens],
        "top_logprobs": None,
    }


def completion_body(simulator: Simulator, body: dict[str, Any], key: str) -> dict[str, Any]:
    """The ``text_completion`` object answering a completions request ``body``: each
    prompt echoed with its log-probabilities when ``echo`` and ``logprobs`` are asked,
    else a short reply."""
    model = str(body["model"])
    prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
    echo = bool(body.get("echo")) and body.get("logprobs") is not None
    choices = []
    used = 0
    for index, prompt in enumerate(prompts):
        info = simulator.find_item([{"role": "user", "content": prompt}])
        used += len(tokens_of(prompt))
        if echo:
            choices.append(
                {
                    "index": index,
                    "text": prompt,
                    "logprobs": _logprobs(simulator, model, info, prompt),
                    "finish_reason": "length",
                }
            )
        else:
            text = simulator.answer_text(model, info, key, normalise(prompt))
            text, finish = _ended(text, body.get("stop"), body.get("max_tokens"))
            choices.append(
                {"index": index, "text": text, "logprobs": None, "finish_reason": finish}
            )
    return {
        "id": f"cmpl-{key[:24]}",
        "object": "text_completion",
        "created": int(time.time()),
        "model": model,
        "choices": choices,
        "usage": {"prompt_tokens": used, "completion_tokens": 0, "total_tokens": used},
    }


def _ended(text: str, stop: Any, limit: Any) -> tuple[str, str]:
    """``text`` cut where a real server would end it, and why: before the first stop
    sequence (left out of the text, as vLLM and OpenAI do), else at ``limit`` tokens."""
    sequences = [stop] if isinstance(stop, str) else list(stop or [])
    cuts = [text.find(s) for s in sequences if isinstance(s, str) and s and s in text]
    if cuts:
        text = text[: min(cuts)]
    return cut_at_limit(text, limit)


def cut_at_limit(text: str, limit: Any) -> tuple[str, str]:
    """``text`` and "stop", or its first ``limit`` tokens and "length" when longer: a
    word a token here, as a real server cuts a reply at its token limit."""
    words = text.split(" ")
    if isinstance(limit, int) and not isinstance(limit, bool) and len(words) > limit:
        return " ".join(words[:limit]), "length"
    return text, "stop"


def request_problem(body: Any) -> str | None:
    """Why a decoded body is not a completions request, or None."""
    if not isinstance(body, dict):
        return "the request body must be a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "you must provide a model parameter"
    prompt = body.get("prompt")
    if isinstance(prompt, str):
        return None
    if isinstance(prompt, list) and prompt and all(isinstance(p, str) for p in prompt):
        return None
    return "'prompt' must be a string or a non-empty array of strings"


def body_key(body: dict[str, Any]) -> str:
    canonical = json.dumps(
        [body.get("model"), body.get("prompt")], sort_keys=True, ensure_ascii=False
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
