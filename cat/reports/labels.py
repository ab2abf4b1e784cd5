"""Row labels of ``ranking.png``: short enough to leave room for the plot, never so short
that the assessed model cannot be told apart.

The rule:

* the model's own row: a replayed subject (``replay:FILE#SUBJECT``) is named by its subject
  with the marker ``(replay)``, since the file path says nothing in a plot and a replayed
  reference subject would otherwise carry the same name as its reference row; any other
  name is kept whole up to ``MODEL_CHARS`` characters;
* a reference subject: its id, up to ``REFERENCE_CHARS`` characters;
* a longer label loses its middle, not its end, since model names tend to differ in their
  tails (``…-7B-Instruct`` against ``…-72B-Instruct``);
* ``$`` is escaped so that matplotlib does not read ``$...$`` as mathtext.
"""

from __future__ import annotations

__all__ = [
    "MODEL_CHARS",
    "REFERENCE_CHARS",
    "model_label",
    "reference_label",
    "shorten",
    "tex_safe",
]

MODEL_CHARS = 64
REFERENCE_CHARS = 40
_REPLAY = "replay:"
_ELLIPSIS = "…"


def shorten(text: str, limit: int) -> str:
    """``text`` itself when it fits in ``limit`` characters, else its start and its end
    around an ellipsis, ``limit`` characters in all."""
    if len(text) <= limit:
        return text
    keep = max(limit - len(_ELLIPSIS), 2)
    head = keep // 2
    return text[:head] + _ELLIPSIS + text[len(text) - (keep - head) :]


def model_label(model: str) -> str:
    """The label of the assessed model's own row (before ``tex_safe``)."""
    if model.startswith(_REPLAY):
        path, sep, subject = model[len(_REPLAY) :].rpartition("#")
        if sep and path and subject:
            model = f"{subject} (replay)"
    return shorten(model, MODEL_CHARS)


def reference_label(subject_id: str) -> str:
    """The label of a reference subject's row (before ``tex_safe``)."""
    return shorten(subject_id, REFERENCE_CHARS)


def tex_safe(text: str) -> str:
    """Keep matplotlib from reading ``$...$`` in a label as mathtext."""
    return text.replace("$", r"\$")
