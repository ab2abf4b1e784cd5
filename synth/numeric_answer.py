"""Read the final number out of a free-text reply, and compare it with a numeric key.

Which number (``extract_number``): the reply's answer statements are read last first:
"final answer", "the answer is", "answer:", "answer =", "答案是/为", "答案:", "最终答案",
"答:" and ``\\boxed{...}``. The first one (from the end) with a number in it decides: its
number is the first one after the phrase, or, when the statement is a calculation
("5 mg/kg × 70 kg = 350 mg"), the first one after its last "=" or "≈" outside parentheses.
A statement is the rest of the phrase's line (at most 600 characters; a phrase ending its
line, "Answer:", takes the next non-empty line), read up to the end of the sentence that
holds its first number. Without such a statement the last number of the reply wins.

How numbers are read:

- Full-width digits and signs are folded by NFKC ("１２．５％" is 12.5%); "−" is a minus.
  A full-width comma "，" separates numbers ("120，150" is 120 and 150) unless it stands
  between full-width digits ("１，２３４" is 1234).
- A sign counts when it touches the digits and does not follow a digit, a closing bracket
  or "%" ("-5", "答案是-5"; "5-10" is 5 and 10; "(140-60)" is 140 and 60; "- 5" is 5).
- Thousands separators: "," is a thousands separator when followed by exactly three digits
  in groups from a leading 1-3 digit group ("1,234.5", "12,345,678"). A decimal comma is
  read only in a clearly European pattern: groups of three separated by "." or spaces and
  then "," with other than three digits ("1.234,5", "1 234,56"), or a leading "0,"
  ("0,5", "0,125"). Any other comma separates numbers ("3,5" is 3 and 5). A no-break or
  thin space (U+00A0, U+2009, U+202F) before three digits groups them ("150 000" is
  150000); a plain space does not ("1 234" is 1 and 234; "take 2 100 mg tablets").
- Scientific notation: "1.2e-3", "1.2E3", "1.2×10^-3", "1.2 x 10^(-3)", "1.2*10**-3",
  "1.2 × 10⁻³" (superscripts), LaTeX "1.2 \\times 10^{-3}", and a bare "10^-3".
- Percentages: "12.5%", "12.5 %", "12.5 percent" are 12.5 with ``percent`` set.
- Fractions: "3/4", "2000/24" and LaTeX ``\\frac{3}{4}`` (no sign on the denominator,
  no thousands separators); a zero denominator is not a number. "120/80" is read as 1.5.
- Units after a number are ignored ("5 mg/kg", "83.3 mL/h", "500毫克"). Digits glued to a
  preceding Latin letter or "^" are part of a name or a unit, not numbers ("CO2", "B12",
  "kg/m2", "m²", "IL-6", "COVID-19").

Not read: numbers in words ("five", "三"), mixed numbers ("1 1/2"), ranges as one value.

Comparison (``numeric_match``): a value matches the key when |value − key| ≤
max(abs_tol, rel_tol · |key|) (relative to the key, not symmetric like ``math.isclose``),
or when it equals the key. Defaults: with neither tolerance given, rel_tol = 1e-2 (1 %: the
rounding of a clinical calculation's intermediate steps) and abs_tol = 0; with only one
given, the other is 0. A key of 0 therefore needs an ``abs_tol`` to accept anything but 0.
A percentage is compared in both forms: 12.5% matches a key of 12.5 (the key in percent)
and a key of 0.125 (the key as a fraction); a plain 12.5 never matches 0.125.
"""

from __future__ import annotations

import bisect
import math
import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal

from synth.errors import SynthError
from synth.text_metrics import CJK_RANGES

DEFAULT_REL_TOL = 1e-2
# Tolerance boundaries are inclusive; this slack keeps them so after binary rounding
# (0.505 - 0.5 is a hair above 0.005 in floating point).
_SLACK = 1e-9


@dataclass(frozen=True)
class ReplyNumber:
    """A number read from a reply: ``value`` as written (12.5 for "12.5%"), whether it
    carried a percent sign, and the ``text`` it was read from."""

    value: float
    percent: bool = False
    text: str = ""


# A no-break or thin space between digit groups ("150 000") groups; NFKC would make it a
# plain space, which does not.
_GROUPING_SPACE_RE = re.compile("(?<=\\d)[\u00a0\u2009\u202f](?=\\d{3}(?!\\d))")
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻", "0123456789+-")
_SUPERSCRIPT_RUN_RE = re.compile("[⁺⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+")
_LATEX_SUBS = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (r"\\(?:text|textrm|textbf|mathrm|mathbf|mbox|operatorname)\s*\{([^{}]*)\}", r"\1"),
        (r"\\[dt]?frac\s*\{\s*([0-9.]+)\s*\}\s*\{\s*([0-9.]+)\s*\}", r"\1/\2"),
        (r"\^\s*\{([^{}]*)\}", r"^\1"),
        (r"\\(?:times|cdot)", " × "),
        (r"\\approx", " ≈ "),
        (r"\\%", "%"),
        (r"(?<=\d)\\,(?=\d{3}(?!\d))", ""),  # "1\,234": a thin space grouping digits
        (r"\\(?:left|right)\b|\\[,;:! ]|\$", " "),
    )
)

_EXPONENT = r"\s*\^\s*\(?[-+]?\d+\)?"
_NUMBER_RE = re.compile(
    r"(?P<sign>[-+])?"
    r"(?:(?P<euro>[1-9]\d{0,2}(?:[. ]\d{3}){1,6},(?:\d{1,2}|\d{4,})(?!\d)|0,\d+)"
    r"|(?P<fraction>\d+(?:\.\d+)?/\d+(?:\.\d+)?)(?![\d/])"
    rf"|(?P<power>10{_EXPONENT})"
    r"|(?P<thousands>[1-9]\d{0,2}(?:,\d{3}){1,6}(?!\d)(?:\.\d+)?)"
    r"|(?P<plain>\d+(?:\.\d+)?|\.\d+))"
    r"(?P<exponent>[eE][-+]?\d+|\s*[xX×*·]\s*10\s*(?:\^|\*\*)\s*\(?[-+]?\d+\)?)?"
    r"(?P<percent>\s*(?:%|(?i:percent|per\s+cent)\b))?"
)
_CJK_RE = re.compile(f"[{CJK_RANGES}]")
# A full-width comma separates (Chinese lists: "120，150，180"), except between full-width
# digits ("１，２３４").
_FULLWIDTH_COMMA_RE = re.compile("(?<![０-９])，|，(?![０-９])")
_ANSWER_RE = re.compile(
    r"(?i:\bfinal\s+answers?\b(?:\s+(?:is|would\s+be|should\s+be|will\s+be)\b)?"
    r"|\banswers?(?:\s+(?:is|would\s+be|should\s+be|will\s+be)\b|\s*[:=]))"
    r"|(?:最终|正确|最后)?答案(?:应该|应|就)?(?:是|为)?|答\s*:"
)
_BOXED_RE = re.compile(r"\\boxed\s*\{([^{}]*)\}")
_NEXT_LINE_RE = re.compile(r"\s*(\S[^\n]*)")
# Characters read after an answer phrase: a statement, not the rest of a long reply (which
# also keeps many phrases in one long line from costing quadratic time).
_TAIL = 600
_SENTENCE_END_RE = re.compile(r"[。！？!?；;]|\.(?=\s|$)")
_EQUALS = "=≈≃≅"


def extract_number(text: str) -> ReplyNumber | None:
    """The final number stated in ``text`` (module docstring), or None when it has none."""
    clean = _prepare(text)
    numbers = list(_numbers(clean))
    if not numbers:
        return None
    starts = [n[0] for n in numbers]
    spans = [(m.start(), *_statement(clean, m.end())) for m in _ANSWER_RE.finditer(clean)]
    spans += [(m.start(), m.start(1), m.end(1)) for m in _BOXED_RE.finditer(clean)]
    for _, start, end in sorted(spans, reverse=True):
        first = last = bisect.bisect_left(starts, start)
        while last < len(numbers) and numbers[last][1] <= end:
            last += 1
        inside = numbers[first:last]
        if inside:
            return _pick(clean, inside, start, end)
    return numbers[-1][2]


def check_tolerances(abs_tol: float | None, rel_tol: float | None) -> tuple[float, float]:
    """(abs_tol, rel_tol) with the defaults applied (module docstring); a ``SynthError``
    when either is negative or not finite."""
    for name, tol in (("abs_tol", abs_tol), ("rel_tol", rel_tol)):
        if tol is not None and not (math.isfinite(tol) and tol >= 0):
            raise SynthError(f"{name} must be a finite number >= 0, got {tol!r}")
    if abs_tol is None and rel_tol is None:
        return 0.0, DEFAULT_REL_TOL
    return float(abs_tol or 0.0), float(rel_tol or 0.0)


def numeric_match(
    reply_value: ReplyNumber | float,
    key: float,
    abs_tol: float | None = None,
    rel_tol: float | None = None,
) -> bool:
    """Whether ``reply_value`` equals ``key`` within the tolerances (module docstring); a
    percentage is tried both as written and divided by 100."""
    if not math.isfinite(key):
        raise SynthError(f"the numeric key must be a finite number, got {key!r}")
    absolute, relative = check_tolerances(abs_tol, rel_tol)
    if isinstance(reply_value, ReplyNumber):
        value, percent = reply_value.value, reply_value.percent
    else:
        value, percent = float(reply_value), False
    bound = max(absolute, relative * abs(key)) * (1 + _SLACK)
    candidates = (value, value / 100) if percent else (value,)
    return any(c == key or abs(c - key) <= bound for c in candidates)


def _prepare(text: str) -> str:
    text = _FULLWIDTH_COMMA_RE.sub(", ", text)
    text = _GROUPING_SPACE_RE.sub("", text)
    text = _SUPERSCRIPT_RUN_RE.sub(lambda m: "^" + m.group().translate(_SUPERSCRIPTS), text)
    text = unicodedata.normalize("NFKC", text).replace("\u2212", "-")
    for pattern, replacement in _LATEX_SUBS:
        text = pattern.sub(replacement, text)
    return text


def _numbers(text: str) -> list[tuple[int, int, ReplyNumber]]:
    """(start, end, number) of every number in ``text``."""
    found = []
    for match in _NUMBER_RE.finditer(text):
        before = text[match.start() - 1] if match.start() else ""
        if _glued(before) or (
            before == "-" and _glued(text[match.start() - 2 : match.start() - 1])
        ):
            continue  # a name or a unit: "CO2", "kg/m^2", "IL-6"
        sign = match.group("sign")
        if sign and before and (before.isdecimal() or before in ")]}%"):
            sign = None  # "5-10", "(140-60)": a range or an operator
        start = match.start() if sign else match.start() + len(match.group("sign") or "")
        value = _value(match, negative=sign == "-")
        if value is not None:
            written = text[start : match.end()].strip()
            number = ReplyNumber(value, bool(match.group("percent")), written)
            found.append((start, match.end(), number))
    return found


def _glued(char: str) -> bool:
    return char == "^" or (char.isalpha() and not _CJK_RE.match(char))


def _value(match: re.Match[str], *, negative: bool) -> float | None:
    try:
        if match.group("fraction"):
            numerator, denominator = (Decimal(part) for part in match["fraction"].split("/"))
            if denominator == 0:
                return None
            number = numerator / denominator
        elif match.group("power"):
            number = Decimal(1).scaleb(_exponent(match["power"][2:]))
        elif match.group("euro"):
            digits = match["euro"].replace(".", "").replace(" ", "").replace(",", ".")
            number = Decimal(digits)
        else:
            number = Decimal((match["thousands"] or match["plain"]).replace(",", ""))
        exponent = match.group("exponent")
        if exponent:
            if exponent.lstrip()[0] in "eE":
                number = number.scaleb(int(exponent.lstrip()[1:]))
            else:
                number = number.scaleb(_exponent(exponent.split("10", 1)[1]))
        value = float(-number if negative else number)
    except (ArithmeticError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _exponent(text: str) -> int:
    """The integer of "^-3", "^(-3)" or "**-3"."""
    return int(text.replace("^", "").replace("*", "").strip(" ()"))


def _statement(text: str, end: int) -> tuple[int, int]:
    """The span of the statement after an answer phrase ending at ``end``: the rest of its
    line, or the next non-empty line when the rest is empty or ends with ":"."""
    line_end = text.find("\n", end, end + _TAIL)
    if line_end < 0:
        return end, min(len(text), end + _TAIL)
    rest = text[end:line_end].strip(" \t\r*_#>")
    if not rest or rest.endswith(":"):
        following = _NEXT_LINE_RE.match(text, line_end, line_end + _TAIL)
        if following:
            return following.start(1), following.end(1)
    return end, line_end


def _pick(
    text: str, inside: list[tuple[int, int, ReplyNumber]], start: int, end: int
) -> ReplyNumber:
    """The answer among the numbers ``inside`` a statement: the first, or in a calculation
    the first after its last "=" or "≈" outside parentheses, within the first sentence."""
    sentence_end = _SENTENCE_END_RE.search(text, inside[0][1], end)
    end = sentence_end.start() if sentence_end else end
    depth, last_equals = 0, -1
    for i in range(start, end):
        char = text[i]
        depth += (char in "([{") - (char in ")]}")
        if char in _EQUALS and depth <= 0:
            last_equals = i
    after = [n for n in inside if last_equals < n[0] < end]
    return (after or inside)[0][2]
