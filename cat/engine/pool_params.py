"""A loaded pool's item parameters, as the engine's jobs take them.

Here rather than beside ``cat.pools.loading``: ``cat simulate`` (``simulate_job``) takes
a loaded pool, and the engine may import nothing from the floors above it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cat.errors import CatError

if TYPE_CHECKING:  # for the annotation only: irt.mixed brings scipy.special (0.4 s)
    from irt.mixed import MixedParams
    from irt.models import ItemParams
    from irt.polytomous import PolytomousParams
    from itempool import LoadedPool


def calibrated_params(pool: LoadedPool) -> ItemParams | PolytomousParams | MixedParams:
    """The pool's item parameters (scored items' on a pool of them, with continuous
    items' on a mixed pool); ``CatError`` if the pool is not calibrated yet."""
    if pool.params is None:
        raise CatError(
            f"pool {pool.dir} has no params.csv: calibrate it first (cat calibrate --pool)"
        )
    return pool.params
