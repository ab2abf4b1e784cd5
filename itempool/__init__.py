"""The item-pool format (DESIGN.md, "Item pool"): one owner below ``synth`` and ``cat``.

A pool folder holds ``pool.json``, ``items.jsonl`` (or ``items.jsonl.gz``) and, once
calibrated, ``params.csv``,
``reference.jsonl``, ``reference_answers.csv.gz``, ``low_rank.csv``, for a pool with
continuous items ``continuous_params.csv``, and, for a multidimensional pool,
``mirt_params.csv``. Every file format of the project has its reader and writer here:
the pool's files, and in ``itempool.formats`` the response files (CSV, JSONL; binary,
graded, scored and mixed) and parameter tables that ``cat calibrate`` reads and writes.
``load_pool`` is the one strict reader every command uses; ``check_pool`` lists every
problem with its file and line. Both take a folder or the name of a pool on the search path
(``$CAT_POOL_PATH``, then the repository's ``item_pools/``: ``shipped_pools``).

Names are imported on first use, so that the ``cat`` command line loads no pydantic
models before a command needs them.
"""

from __future__ import annotations

from irt.lazy import lazy_attributes

# A plain name rather than ``typing.TYPE_CHECKING``: type checkers treat any variable of
# this name as true, and at run time the block below imports nothing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from itempool.checks import MANIFEST, REFERENCE
    from itempool.errors import PoolFormatError
    from itempool.formats.params import read_params, write_params
    from itempool.formats.responses import read_responses, write_csv, write_jsonl
    from itempool.item_files import ITEMS, ITEMS_GZ, items_file
    from itempool.items import ItemType, PoolItem, QuestionSet
    from itempool.loader import LoadedPool, check_pool, load_pool, read_questions
    from itempool.low_rank_file import LOW_RANK, LowRankPrior, read_low_rank, write_low_rank
    from itempool.manifest import PoolManifest, PoolSource, ReferenceRow
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
    from itempool.protocol import BUILTIN_PROTOCOL, LoadedProtocol, PoolProtocol
    from itempool.reference_answers import (
        REFERENCE_ANSWERS,
        read_reference_answers,
        write_reference_answers,
    )
    from itempool.shipped import POOL_PATH_ENV, resolve_pool, shipped_pools
    from itempool.worked_examples import WorkedExample, read_worked_examples

#: Public name → the module that defines it.
_WHERE: dict[str, str] = {
    "CONTINUOUS_PARAMS": "itempool.params_check",
    "ITEMS": "itempool.item_files",
    "ITEMS_GZ": "itempool.item_files",
    "LOW_RANK": "itempool.low_rank_file",
    "MANIFEST": "itempool.checks",
    "MIRT_PARAMS": "itempool.mirt_file",
    "PARAMS": "itempool.params_check",
    "POOL_PATH_ENV": "itempool.shipped",
    "BUILTIN_PROTOCOL": "itempool.protocol",
    "LoadedProtocol": "itempool.protocol",
    "PoolProtocol": "itempool.protocol",
    "WorkedExample": "itempool.worked_examples",
    "read_worked_examples": "itempool.worked_examples",
    "REFERENCE": "itempool.checks",
    "REFERENCE_ANSWERS": "itempool.reference_answers",
    "ItemType": "itempool.items",
    "LoadedPool": "itempool.loader",
    "LowRankPrior": "itempool.low_rank_file",
    "MultidimensionalEntry": "itempool.mirt_file",
    "PoolFormatError": "itempool.errors",
    "PoolItem": "itempool.items",
    "PoolManifest": "itempool.manifest",
    "PoolSource": "itempool.manifest",
    "PredictionErrors": "itempool.prediction_errors",
    "Problem": "itempool.problems",
    "QuestionSet": "itempool.items",
    "ReferenceRow": "itempool.manifest",
    "check_mirt_params": "itempool.mirt_file",
    "check_params": "itempool.params_check",
    "read_params": "itempool.formats.params",
    "read_responses": "itempool.formats.responses",
    "write_csv": "itempool.formats.responses",
    "write_jsonl": "itempool.formats.responses",
    "write_params": "itempool.formats.params",
    "check_pool": "itempool.loader",
    "is_scored_params": "itempool.params_check",
    "items_file": "itempool.item_files",
    "load_pool": "itempool.loader",
    "read_checked_params": "itempool.params_check",
    "read_low_rank": "itempool.low_rank_file",
    "read_pool_params": "itempool.params_check",
    "read_questions": "itempool.loader",
    "read_reference_answers": "itempool.reference_answers",
    "resolve_pool": "itempool.shipped",
    "shipped_pools": "itempool.shipped",
    "write_low_rank": "itempool.low_rank_file",
    "write_reference_answers": "itempool.reference_answers",
}

__all__ = [
    "BUILTIN_PROTOCOL",
    "CONTINUOUS_PARAMS",
    "ITEMS",
    "ITEMS_GZ",
    "LOW_RANK",
    "MANIFEST",
    "MIRT_PARAMS",
    "PARAMS",
    "POOL_PATH_ENV",
    "REFERENCE",
    "REFERENCE_ANSWERS",
    "ItemType",
    "LoadedPool",
    "LoadedProtocol",
    "LowRankPrior",
    "MultidimensionalEntry",
    "PoolFormatError",
    "PoolItem",
    "PoolManifest",
    "PoolProtocol",
    "PoolSource",
    "PredictionErrors",
    "Problem",
    "QuestionSet",
    "ReferenceRow",
    "WorkedExample",
    "check_mirt_params",
    "check_params",
    "check_pool",
    "is_scored_params",
    "items_file",
    "load_pool",
    "read_checked_params",
    "read_low_rank",
    "read_params",
    "read_pool_params",
    "read_questions",
    "read_reference_answers",
    "read_responses",
    "read_worked_examples",
    "resolve_pool",
    "shipped_pools",
    "write_csv",
    "write_jsonl",
    "write_low_rank",
    "write_params",
    "write_reference_answers",
]


__getattr__, __dir__ = lazy_attributes(__name__, _WHERE, __all__)
