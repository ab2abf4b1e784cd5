"""Exceptions of the ``synth`` package."""


class SynthError(Exception):
    """Root of every error raised by ``synth``."""
