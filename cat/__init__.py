"""Rank large language models by computerized adaptive testing.

This module stays light: the ``cat`` console script imports it before deciding whether a
call is for us or for the system ``cat``, so names are loaded on first use.
"""

# `typing` is not imported for TYPE_CHECKING alone; type checkers treat any
# variable of this name as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from cat.errors import CatError

__all__: list[str] = ["CatError"]


def __getattr__(name: str) -> object:
    if name == "CatError":
        from cat.errors import CatError

        return CatError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
