"""The root exception of the item-pool format."""


class PoolFormatError(Exception):
    """A pool folder or one of its files cannot be read as a pool; the message names
    the file and, where there is one, the line."""
