"""The item-pool format (DESIGN.md, "Item pool"): one owner below ``synth`` and ``cat``.

A pool folder holds ``pool.json``, ``items.jsonl`` and, once calibrated, ``params.csv``,
``reference.jsonl`` and ``reference_answers.csv.gz``. ``load_pool`` is the one strict
reader every command uses; ``check_pool`` lists every problem with its file and line.
"""

from itempool.checks import ITEMS, MANIFEST, REFERENCE
from itempool.errors import PoolFormatError
from itempool.items import ItemType, PoolItem, QuestionSet
from itempool.loader import LoadedPool, check_pool, load_pool, read_questions
from itempool.manifest import PoolManifest, ReferenceRow
from itempool.params_check import PARAMS, check_params, read_checked_params
from itempool.prediction_errors import PredictionErrors
from itempool.problems import Problem
from itempool.reference_answers import (
    REFERENCE_ANSWERS,
    read_reference_answers,
    write_reference_answers,
)

__all__ = [
    "ITEMS",
    "MANIFEST",
    "PARAMS",
    "REFERENCE",
    "REFERENCE_ANSWERS",
    "ItemType",
    "LoadedPool",
    "PoolFormatError",
    "PoolItem",
    "PoolManifest",
    "PredictionErrors",
    "Problem",
    "QuestionSet",
    "ReferenceRow",
    "check_params",
    "check_pool",
    "load_pool",
    "read_checked_params",
    "read_questions",
    "read_reference_answers",
    "write_reference_answers",
]
