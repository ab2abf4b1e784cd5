"""Exceptions of the ``cat`` package."""


class CatError(Exception):
    """Root of every error raised by ``cat``; the CLI prints it as one line, exit code 2."""
