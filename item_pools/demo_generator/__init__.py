"""The generator of the demo item pools: clinical calculation questions whose answers it computes.

``item_pools/make_demo_pool.py`` runs it:

    python item_pools/make_demo_pool.py [--out DIR]

writes ``DIR/demo/`` (Chinese items, ``"language": "zh"``: the main demo) and
``DIR/demo-en/`` (English items), each a ``pool.json`` and an ``items.jsonl``; DIR defaults
to ``item_pools/``. Every question is built from random numbers and its key is computed
from them with a textbook formula (cited beside each scenario); nothing is copied from any
benchmark. The two languages are drawn independently: ``dose-zh-00001`` is not a
translation of ``dose-en-00001``.

Each scenario gives 300 items per language: 270 single-choice (90 at each difficulty level;
4 options at levels 1-2, 5 at level 3), 15 multiple-answer and 15 ordering items.
Distractors are the results of common mistakes (a forgotten factor, × and ÷ swapped, a wrong
unit, rounding the wrong way), topped up with scaled values where mistakes coincide.

The output is the same byte for byte on every run and platform: each (language, scenario)
has its own ``random.Random`` seeded by a string, so editing one scenario leaves the items
of the others untouched.

The modules:

- ``scenarios/``: one module per scenario (``dose``, ``bmi_bsa``, ``crcl``, ``anion_gap``,
  ``units``, ``infusion``, ``dilution``, ``fluids``), each with its question templates
  beside the formulas that compute their keys;
- ``records``: what a scenario returns (``Calc`` for a single-choice item, ``Pick`` for a
  multiple-answer or ordering one), ``Scenario``, and ``PoorDrawError`` (draw again);
- ``numbers_and_text``: rounding, numbers as people write them, the two languages;
- ``options``: lettered options and keys from a ``Calc`` or a ``Pick``;
- ``writer``: the pools in file order, their checks, ``pool.json`` and ``items.jsonl``.
"""

from __future__ import annotations

from .writer import build_items, main, manifest, write_pool

__all__ = ["build_items", "main", "manifest", "write_pool"]
