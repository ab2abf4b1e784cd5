"""A reasoning model's reply: the final answer apart from the reasoning before it.

Reasoning models (DeepSeek-R1, Qwen3 in thinking mode, gpt-oss, the o-series) send their
reasoning either in a separate field of the message (``reasoning_content`` or
``reasoning``; ``synth.backend`` keeps it apart) or inside the content as
``<think>…</think>``. Only the final answer is graded: reasoning that weighs a wrong
letter before settling must not be read as the answer, least of all under a rule that
takes the first statement (MMLU-Pro's official one).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["SplitReply", "split_reasoning"]

_OPEN = "<think>"
_CLOSE = "</think>"


class SplitReply(NamedTuple):
    """``answer``: the text to grade; ``reasoning``: the thinking before it ("" if none)."""

    answer: str
    reasoning: str


def split_reasoning(text: str) -> SplitReply:
    """``text`` split at its last ``</think>``. A block opened and never closed (a reply
    cut off while thinking) leaves no answer to grade. Some chat templates put the
    opening tag in the prompt, so a closing tag alone splits too."""
    end = text.rfind(_CLOSE)
    if end >= 0:
        reasoning = text[:end]
        start = reasoning.find(_OPEN)
        if start >= 0:
            reasoning = reasoning[start + len(_OPEN) :]
        return SplitReply(text[end + len(_CLOSE) :].strip(), reasoning.strip())
    start = text.find(_OPEN)
    if start >= 0:
        return SplitReply("", text[start + len(_OPEN) :].strip())
    return SplitReply(text, "")
