"""Package attributes imported on first use (PEP 562), for packages whose ``__init__``
must stay light: the ``cat`` command line imports them before it knows what to do."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from importlib import import_module
from typing import Any


def lazy_attributes(
    package: str, where: Mapping[str, str], public: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: each name of ``where`` is read
    from its module (``where[name]``) when first asked for; ``dir()`` lists ``public``."""

    def __getattr__(name: str) -> Any:  # noqa: N807 (a module's own hook)
        if name in where:
            return getattr(import_module(where[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:  # noqa: N807
        return list(public)

    return __getattr__, __dir__
