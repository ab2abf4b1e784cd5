"""The item-pool format (DESIGN.md, "Item pool"): one owner below ``synth`` and ``cat``.

A pool folder holds ``pool.json``, ``items.jsonl`` and, once calibrated, ``params.csv``,
``reference.jsonl``, ``reference_answers.csv.gz``, ``low_rank.csv``, for a pool with
continuous items ``continuous_params.csv``, and, for a multidimensional pool,
``mirt_params.csv``. ``load_pool`` is
the one strict reader every command uses; ``check_pool`` lists every problem with its
file and line.
"""

from itempool.checks import ITEMS, MANIFEST, REFERENCE
from itempool.errors import PoolFormatError
from itempool.items import ItemType, PoolItem, QuestionSet
from itempool.loader import LoadedPool, check_pool, load_pool, read_questions
from itempool.low_rank_file import LOW_RANK, LowRankPrior, read_low_rank, write_low_rank
from itempool.manifest import PoolManifest, ReferenceRow
from itempool.mirt_file import MIRT_PARAMS, MultidimensionalEntry, check_mirt_params
from itempool.params_check import (
    CONTINUOUS_PARAMS,
    PARAMS,
    check_params,
    is_scored_params,
    read_checked_params,
    read_pool_params,
)
from itempool.prediction_errors import PredictionErrors
from itempool.problems import Problem
from itempool.reference_answers import (
    REFERENCE_ANSWERS,
    read_reference_answers,
    write_reference_answers,
)

__all__ = [
    "CONTINUOUS_PARAMS",
    "ITEMS",
    "LOW_RANK",
    "MANIFEST",
    "MIRT_PARAMS",
    "PARAMS",
    "REFERENCE",
    "REFERENCE_ANSWERS",
    "ItemType",
    "LoadedPool",
    "LowRankPrior",
    "MultidimensionalEntry",
    "PoolFormatError",
    "PoolItem",
    "PoolManifest",
    "PredictionErrors",
    "Problem",
    "QuestionSet",
    "ReferenceRow",
    "check_mirt_params",
    "check_params",
    "check_pool",
    "is_scored_params",
    "load_pool",
    "read_checked_params",
    "read_low_rank",
    "read_pool_params",
    "read_questions",
    "read_reference_answers",
    "write_low_rank",
    "write_reference_answers",
]
