"""``cat pool validate``: every problem of a pool folder, and whether it can be used."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from cat.arguments import PathArg, api_errors, as_path
from cat.pools.loading import load_pool
from itempool import Problem, check_pool, resolve_pool


class PoolCheck(BaseModel):
    """The problems of the pool in ``dir`` in file order (``itempool.check_pool``), and
    its number of items when it loads (only warnings, or nothing, found)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    dir: str
    problems: tuple[Problem, ...]
    n_items: int | None

    @property
    def errors(self) -> int:
        """Problems that stop the pool from loading."""
        return sum(not p.warning for p in self.problems)

    @property
    def warnings(self) -> int:
        """Problems worth a look that do not stop the pool from loading."""
        return sum(p.warning for p in self.problems)

    @property
    def ok(self) -> bool:
        """Whether the pool loads: no problem but warnings."""
        return self.errors == 0


@api_errors
def validate_pool(pool_dir: PathArg) -> PoolCheck:
    """Check the pool in ``pool_dir`` (a str or path, or a pool's name:
    ``itempool.shipped``); a pool that passes is loaded to count its items."""
    pool_dir = resolve_pool(as_path(pool_dir, "pool_dir"))
    problems = tuple(check_pool(pool_dir))
    loads = not any(not p.warning for p in problems)
    n_items = len(load_pool(pool_dir).items) if loads else None
    return PoolCheck(dir=str(pool_dir), problems=problems, n_items=n_items)
