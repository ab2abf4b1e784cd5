"""Exceptions of the ``cat`` package, and how they name options.

Messages are written as the command line spells its options (``--cross-fit``). Under a
``cat`` command (``command_line``) they stay so; from Python, where the same options
are keyword arguments of ``cat.calibrate`` and the like, ``--cross-fit`` reads
``cross_fit``, so that an error names what the caller wrote. A command shown as a
suggestion (``cat calibrate --priors``) and a negative switch (``--no-cross-fit``) keep
their flags either way.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["CatError", "command_line", "python_spelling"]

_COMMAND_LINE: ContextVar[bool] = ContextVar("cat_command_line", default=False)
# A negative switch (``--no-cross-fit``) has no keyword of its own: it stays.
_FLAG = re.compile(r"(?<![\w-])--(?!no-)([a-z][a-z0-9]*(?:-[a-z0-9]+)*)")
# A suggested command, from "cat" to the end of its clause: its flags stay as written.
_COMMAND = re.compile(r"\bcat [a-z][^,;:()`]*$")


class CatError(Exception):
    """Root of every error raised by ``cat``; the CLI prints it as one line, exit code 2."""

    def __init__(self, *args: object) -> None:
        if args and isinstance(args[0], str) and not _COMMAND_LINE.get():
            args = (python_spelling(args[0]), *args[1:])
        super().__init__(*args)


def python_spelling(message: str) -> str:
    """``message`` with every option flag ``--some-flag`` as the keyword ``some_flag``,
    except a negative switch and the flags of a suggested ``cat`` command."""

    def keyword(match: re.Match[str]) -> str:
        if _COMMAND.search(message[: match.start()]):
            return match.group(0)
        return match.group(1).replace("-", "_")

    return _FLAG.sub(keyword, message)


@contextmanager
def command_line() -> Iterator[None]:
    """While a ``cat`` command parses and runs: errors name options as flags."""
    token = _COMMAND_LINE.set(True)
    try:
        yield
    finally:
        _COMMAND_LINE.reset(token)
