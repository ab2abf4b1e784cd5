"""What a comparison takes from its pool: the 0/1 item parameters, the references'
offset and cross-fitted errors, the items' scenarios."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cat.assessment.result import PoolReference
from cat.engine.pool_params import calibrated_params
from cat.errors import CatError
from cat.pools.scenarios import scenarios_of
from cat.prediction.predictors import reference_offset
from irt.models import ItemParams
from itempool import LoadedPool


@dataclass(frozen=True)
class PoolContext:
    """A pool ready for a comparison."""

    pool: LoadedPool
    params: ItemParams
    offset: float
    codes: tuple[int, ...] | None  # each item's scenario code, in params order
    scenario_of: dict[str, str]

    @classmethod
    def of(cls, pool: LoadedPool) -> PoolContext:
        """The context of ``pool``; ``CatError`` for a pool a comparison cannot use."""
        params = calibrated_params(pool)
        if params.scored:
            raise CatError(
                f"cat compare works on pools of 0/1 items; pool {pool.dir} holds scored items"
            )
        if pool.mirt is not None:
            raise CatError(
                f"cat compare works on unidimensional pools; pool {pool.dir} is "
                "multidimensional (compare on a pool calibrated without --model bifactor|mirt)"
            )
        refs = [r for r in pool.references if r.accuracy is not None]
        offset = 0.0
        if refs:
            thetas = np.array([r.theta for r in refs])
            offset = reference_offset(params, thetas, np.array([r.accuracy for r in refs], float))
        codes = scenarios_of(pool.items, params.item_ids).codes
        return cls(
            pool=pool,
            params=params,
            offset=offset,
            codes=codes or None,
            scenario_of={item.id: item.scenario for item in pool.items if item.scenario},
        )

    def reference(self) -> PoolReference:
        """How COMPARE.json names the pool."""
        return PoolReference(
            name=self.pool.manifest.name,
            version=self.pool.manifest.version,
            n_items=self.params.n_items,
            path=str(self.pool.dir),
        )
