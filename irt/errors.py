"""Exceptions and warnings of the ``irt`` package."""


class IRTError(Exception):
    """Root of every error raised by ``irt``."""


class ResponseDataError(IRTError, ValueError):
    """A response matrix (or its file) is malformed."""


class ParamsError(IRTError, ValueError):
    """Item parameters are malformed or inconsistent with the data."""


class ConvergenceWarning(UserWarning):
    """An iterative fit stopped at its iteration cap before meeting its tolerance."""


class DataWarning(UserWarning):
    """The data are valid but carry little information somewhere (counts in the message)."""
