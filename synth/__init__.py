"""LLM response synthesis (generation → debate → reflection); see DESIGN.md, issue 4."""

from synth.errors import SynthError

__all__ = ["SynthError"]
