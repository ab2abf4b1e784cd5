"""Numbers as a person writes them, rounding as a calculator user does, and both languages.

Every rounding goes through ``Decimal`` (half up, after cutting float noise at nine
decimals), so that the keys are the same on every platform.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal

from .records import PoorDrawError


def tr(lang: str, en: str, zh: str) -> str:
    # Both versions sit side by side at every call so that they stay in step.
    return zh if lang == "zh" else en


def dec(value: float | Decimal) -> Decimal:
    # Nine decimals first, so that float noise (12.249999999997) never decides a rounding.
    return value if isinstance(value, Decimal) else Decimal(f"{value:.9f}")


def round_half_up(value: float | Decimal, digits: int) -> Decimal:
    """``value`` rounded half up to ``digits`` decimals, as a calculator user writes it."""
    return dec(value).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)


def rounded(value: float, digits: int) -> float:
    """An intermediate result rounded as the question tells the reader to round it."""
    return float(round_half_up(value, digits))


def num(value: float | Decimal) -> str:
    """A number as a person writes it: no float noise, no trailing zeros."""
    if isinstance(value, int):
        return str(value)
    exact = value if isinstance(value, Decimal) else Decimal(repr(float(value)))
    return format(exact.normalize(), "f")


def round_note(lang: str, digits: int) -> str:
    if digits == 0:
        return tr(lang, "Round to the nearest whole number.", "结果取整数。")
    places = "1 decimal place" if digits == 1 else f"{digits} decimal places"
    return tr(lang, f"Round to {places}.", f"结果保留{digits}位小数。")


def other_neighbour(value: float, digits: int) -> Decimal | None:
    """The grid value on the other side of ``value`` from its correct rounding, or None
    when ``value`` is on the grid or exactly halfway (then both roundings are defensible)."""
    scaled = dec(value).scaleb(digits)
    low = scaled.to_integral_value(rounding=ROUND_FLOOR)
    frac = scaled - low
    if frac == 0 or frac == Decimal("0.5"):
        return None
    other = low if frac > Decimal("0.5") else low + 1
    return other.scaleb(-digits).quantize(Decimal(1).scaleb(-digits))


def nice(value: float, down: bool) -> int:
    """A round number near ``value`` (a maximum dose as labels print it)."""
    step = 5 if value < 100 else 10 if value < 500 else 50 if value < 2000 else 100
    units = math.floor(value / step) if down else math.ceil(value / step)
    if units <= 0:
        raise PoorDrawError
    return units * step


def apart(rel: float, absolute: float = 0.0) -> Callable[[float, float], bool]:
    """Whether two values to be ordered differ clearly (no near-ties in a key)."""

    def far(a: float, b: float) -> bool:
        return abs(a - b) >= max(absolute, rel * max(abs(a), abs(b)))

    return far
