"""Write the demo item pools: clinical calculation questions whose answers are computed here.

    python item_pools/make_demo_pool.py [--out DIR] [--open]

writes ``DIR/demo/`` (Chinese items, ``"language": "zh"``: the main demo) and
``DIR/demo-en/`` (English items), each a ``pool.json`` and an ``items.jsonl``; DIR defaults
to the folder holding this script. The generator itself is the package ``demo_generator/``
beside this script, one module per scenario (``demo_generator/scenarios/``); its docstring
describes the items and how they are drawn. Each ``pool.json`` names this script as its
``generator``. ``--open`` writes ``DIR/demo-open/`` and ``DIR/demo-open-en/`` instead:
single-choice items beside open ones answered in free text
(``demo_generator/open_items.py``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

# Importable because Python puts this script's folder on sys.path when it runs it.
from demo_generator import main

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None, help="folder to write the pools into")
    parser.add_argument("--open", action="store_true", help="write the open-answer pools")
    args = parser.parse_args()
    main(args.out, args.open)
