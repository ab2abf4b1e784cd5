"""What every output file records about where it came from: package version and time."""

from __future__ import annotations

import datetime as dt


def package_version() -> str:
    """This installation's version, recorded in every output file."""
    # Imported here: the command line loads this module for --version only.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("cat-llm")
    except PackageNotFoundError:  # running from a source tree without installing
        return "0+unknown"


def utc_now() -> str:
    """The current time in UTC, ISO 8601 to the second, as output files record it."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
