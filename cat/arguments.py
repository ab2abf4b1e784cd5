"""Checks of what a caller of the public API (``import cat``) passes in.

Each check names the argument as the caller wrote it (``length must be at least 1, got
-5``) and raises ``CatError``: without them a bad value surfaces far inside, as a pydantic
message about an internal field or a ``TypeError`` from numpy. ``api_errors`` turns the
errors of the packages below ``cat`` (``irt``, ``itempool``, ``synth``) into ``CatError``
at the door of each public function, so that ``except cat.CatError`` catches every
problem with the input.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Collection, Sequence
from enum import Enum
from numbers import Integral, Real
from pathlib import Path
from typing import ParamSpec, TypeVar

from cat.errors import CatError
from irt.errors import IRTError
from itempool.errors import PoolFormatError
from synth.errors import SynthError

#: A file or folder as the API takes it: ``"pool"``, ``Path("pool")``, any ``os.PathLike``.
PathArg = str | os.PathLike[str]

P = ParamSpec("P")
R = TypeVar("R")
E = TypeVar("E", bound=Enum)
T = TypeVar("T")


def api_errors(func: Callable[P, R]) -> Callable[P, R]:
    """``func`` with the errors of ``irt``, ``itempool`` and ``synth`` raised as
    ``CatError`` (the message unchanged, the original as its cause), and a call whose
    arguments do not fit its signature (a misspelt keyword) too, naming the closest
    keyword."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except (IRTError, PoolFormatError, SynthError) as exc:
            raise CatError(str(exc)) from exc
        except TypeError:
            _check_call(func, args, kwargs)
            raise

    return wrapper


def _check_call(
    func: Callable[..., object], args: tuple[object, ...], kwargs: dict[str, object]
) -> None:
    """``CatError`` where ``args`` and ``kwargs`` do not bind to ``func``'s signature;
    nothing where they do (the ``TypeError`` came from inside)."""
    import difflib
    import inspect

    signature = inspect.signature(func)
    try:
        signature.bind(*args, **kwargs)
    except TypeError as exc:
        names = [n for n, p in signature.parameters.items() if p.kind is not p.VAR_KEYWORD]
        unknown = [k for k in kwargs if k not in signature.parameters]
        message = f"{func.__name__}(): {exc}"
        if unknown:
            parts = []
            for name in unknown:
                close = difflib.get_close_matches(name, names, n=1)
                parts.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
            message = f"{func.__name__}() takes no argument {' or '.join(parts)}"
            if not any("did you mean" in part for part in parts):
                message += f"; it takes {', '.join(names)}"
        raise CatError(message) from None


def as_path(value: object, argument: str) -> Path:
    """``value`` as a ``Path``; a str or ``os.PathLike`` of str, else ``CatError``."""
    if isinstance(value, Path):
        return value
    if isinstance(value, str | os.PathLike):
        try:
            return Path(value)
        except TypeError:  # a PathLike of bytes
            pass
    raise CatError(f"{argument} must be a path (str or os.PathLike), got {_shown(value)}")


def as_optional_path(value: object, argument: str) -> Path | None:
    """``as_path``, with None kept as None."""
    return None if value is None else as_path(value, argument)


def as_paths(value: object, argument: str) -> list[Path]:
    """One path or a sequence of them, as a list of ``Path`` (a str is one path, not a
    sequence of one-letter names)."""
    if isinstance(value, str | os.PathLike):
        return [as_path(value, argument)]
    if isinstance(value, Sequence) and value:
        return [as_path(v, argument) for v in value]
    raise CatError(f"{argument} must be a path or a non-empty list of paths, got {_shown(value)}")


def whole(value: object, argument: str, minimum: int | None = None) -> int:
    """``value`` as an int: a whole number (numpy's too, not bool) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise CatError(f"{argument} must be a whole number, got {_shown(value)}")
    if minimum is not None and value < minimum:
        raise CatError(f"{argument} must be at least {minimum}, got {value}")
    return int(value)


def seed(value: object, argument: str = "seed") -> int:
    """A random seed: a whole number, 0 or more (numpy refuses negative seeds)."""
    return whole(value, argument, 0)


def number(
    value: object,
    argument: str,
    *,
    above: float | None = None,
    at_most: float | None = None,
) -> float:
    """``value`` as a finite float (an int or float, numpy's too, not bool), greater than
    ``above`` and at most ``at_most`` where given."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise CatError(f"{argument} must be a number, got {_shown(value)}")
    x = float(value)
    if not math.isfinite(x):
        raise CatError(f"{argument} must be a finite number, got {x}")
    if above is not None and at_most is not None and not above < x <= at_most:
        raise CatError(f"{argument} must be in ({above:g}, {at_most:g}], got {x:g}")
    if above is not None and x <= above:
        what = "positive" if above == 0 else f"above {above:g}"
        raise CatError(f"{argument} must be {what}, got {x:g}")
    if at_most is not None and x > at_most:
        raise CatError(f"{argument} must be at most {at_most:g}, got {x:g}")
    return x


def optional_number(
    value: object, argument: str, *, above: float | None = None, at_most: float | None = None
) -> float | None:
    """``number``, with None kept as None."""
    return None if value is None else number(value, argument, above=above, at_most=at_most)


def flag(value: object, argument: str) -> bool:
    """``value`` if it is True or False (not a string such as "no", which is truthy)."""
    if not isinstance(value, bool):
        raise CatError(f"{argument} must be True or False, got {_shown(value)}")
    return value


def optional_text(value: object, argument: str) -> str | None:
    """``value`` if it is a str or None."""
    if value is not None and not isinstance(value, str):
        raise CatError(f"{argument} must be a str or None, got {_shown(value)}")
    return value


def callback(value: T, argument: str) -> T:
    """``value`` if it is None or can be called (a progress or step function)."""
    if value is not None and not callable(value):
        raise CatError(f"{argument} must be a function or None, got {_shown(value)}")
    return value


def name(value: object, argument: str, choices: Collection[str]) -> str:
    """``value`` as a plain str if it is one of ``choices`` (an enum member of a StrEnum
    counts as its value)."""
    if not isinstance(value, str) or value not in choices:
        raise CatError(f"unknown {argument} {_shown(value)}; choose from {', '.join(choices)}")
    return str(value)


def member(value: object, argument: str, kind: type[E]) -> E:
    """``value`` as a member of the enum ``kind`` (by value, as the enum reads it: some
    take "3PL" for "3pl")."""
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(str(m.value) for m in kind)
        raise CatError(f"unknown {argument} {_shown(value)}; choose from {choices}") from None


def _shown(value: object) -> str:
    """``value`` for a message: its repr, with its type when the repr does not say it."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    if isinstance(value, str | int | float) or value is None:
        return text
    return f"{text} ({type(value).__name__})"
