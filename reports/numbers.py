r"""Numbers for the report's LaTeX: precision that follows the standard error, and siunitx
cells.

* **Significant digits from the interval.** A measured mean with standard error
  :math:`\mathrm{se}` is written in the concise form ``0.0490(12)``: the error rounded to
  :data:`UNCERTAINTY_DIGITS` significant digits and the value rounded to the same decimal
  place (the uncertainties package's ``.2uS`` format). siunitx's ``\num`` parses that
  form, so a table prints :math:`0.0490(12)` and never a fixed number of decimals.
  Interval ends and the predicted value are rounded to the same place as the measurement
  they are compared with (:func:`rounded_like`). Numbers without an error (round-off
  residuals, predictions of exact checks) get :func:`significant` digits.
* **siunitx columns.** :func:`s_number` writes a cell of an ``S`` column (the error in
  parentheses, no decimal point in it) and :func:`table_format` the column's
  ``table-format``; the tables set ``group-digits=false``.

References
----------
.. [1] JCGM 100:2008, *Guide to the expression of uncertainty in measurement*, 7.2.2
   (the concise "value(uncertainty)" notation).
.. [2] J. Wright, *siunitx: a comprehensive (SI) units package*, v3, section on
   uncertainties in ``\num``.
"""
from __future__ import annotations

import math
import re
from fractions import Fraction

from uncertainties import ufloat

from gapverify.reports.latex import DASH, TeX

__all__ = ["UNCERTAINTY_DIGITS", "significant", "shorthand", "rounded_like", "trim_zeros",
           "num", "num_shorthand", "interval", "rate_fraction", "concise", "s_number",
           "table_format", "plain_decimal", "percent", "PLAIN_DECIMALS", "PERCENT_DECIMALS"]

#: Significant digits kept in a standard error (JCGM 100 7.2.6: "at most two").
UNCERTAINTY_DIGITS = 2
_EXPONENT = re.compile(r"e([+-]?)0*(\d+)")


def _tidy_exponent(text: str) -> str:
    # 1.0(3)e-05 -> 1.0(3)e-5 ; e+06 -> e6 (siunitx reads both; this is shorter)
    return _EXPONENT.sub(lambda m: "e" + ("-" if m.group(1) == "-" else "") + m.group(2), text)


def _finite(x) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


def significant(value: float, digits: int = 2) -> str:
    """``value`` to ``digits`` significant digits (``2.2e-16``, ``1``, ``2.61803``), for
    numbers that carry no standard error."""
    if not _finite(value):
        return DASH
    if value == 0:
        return "0"
    return _tidy_exponent(f"{value:.{digits}g}")


def shorthand(value: float, se: float | None) -> str:
    r"""Concise ``value(se)`` with the error to :data:`UNCERTAINTY_DIGITS` significant digits.

    ``shorthand(0.04903, 0.00121) == "0.0490(12)"``; ``shorthand(2.0123, 0.034) ==
    "2.012(34)"``. A smaller error gives more digits. Without a usable error (zero,
    infinite, missing) the value gets :func:`significant` digits; a non-finite value
    gives ``---``.
    """
    if not _finite(value):
        return DASH
    if not (_finite(se) and se > 0):
        return significant(value, 6 if value != 0 else 1)
    text = format(ufloat(float(value), float(se)), f".{UNCERTAINTY_DIGITS}uS")
    return _tidy_exponent(text)


def rounded_like(value: float, se: float | None) -> str:
    """``value`` rounded to the decimal place that ``shorthand(value, se)`` keeps, without
    the error: used for interval ends and for a prediction beside a measurement."""
    return re.sub(r"\([^)]*\)", "", shorthand(value, se))


def trim_zeros(text: str) -> str:
    """Drop trailing zeros of a decimal mantissa: ``1.0000`` -> ``1``, ``0.0810`` ->
    ``0.081``, ``2.500e-3`` -> ``2.5e-3`` (for exact values, which have no error); a zero
    is ``0`` whatever its exponent (``0.0e-5`` -> ``0``)."""
    m = re.fullmatch(r"(-?\d+)(?:\.(\d*?)0*)?((?:e-?\d+)?)", text)
    if not m:
        return text
    whole, frac, exp = m.groups()
    if not frac and int(whole) == 0:  # 0.0e-5 is 0, never "0 x 10^-5"
        return "0"
    return whole + (f".{frac}" if frac else "") + exp


def num(text: str) -> TeX:
    r"""``\num{text}`` (siunitx) for a number string from this module; ``---`` stays text."""
    return TeX(DASH if text == DASH else "\\num{" + text + "}")


def num_shorthand(value: float, se: float | None) -> TeX:
    r"""``\num{0.0490(12)}``: see :func:`shorthand`."""
    return num(shorthand(value, se))


def interval(centre: float, half_width: float, se: float | None) -> TeX:
    r"""``[\num{lo}, \num{hi}]`` for ``centre -+ half_width``, both ends rounded to the
    decimal place of ``centre``'s concise form with error ``se``."""
    if not (_finite(centre) and _finite(half_width)):
        return TeX(DASH)
    lo, hi = centre - half_width, centre + half_width
    return TeX(f"[{num(rounded_like(lo, se))}, {num(rounded_like(hi, se))}]")


def rate_fraction(rate: float | None) -> str:
    """A stated rate as a short exact fraction when it is one (``0.666...`` -> ``2/3``),
    else to 3 significant digits."""
    if not _finite(rate):
        return DASH
    frac = Fraction(rate).limit_denominator(12)
    if abs(float(frac) - rate) <= 1e-12 * max(1.0, abs(rate)):
        return str(frac)
    return significant(rate, 3)


def concise(value: float, se: float | None = None) -> str:
    """A table's number: :func:`shorthand` with its error, else 3 significant digits."""
    return shorthand(value, se) if se is not None else significant(value, 3)


#: Most decimals of a number written without its exponent (:func:`plain_decimal`).
PLAIN_DECIMALS = 6
_DECIMAL_EXPONENT = re.compile(r"(-?)(\d+)(?:\.(\d+))?(\([\d.]+\))?e-(\d+)")


def plain_decimal(text: str, max_decimals: int = PLAIN_DECIMALS) -> str:
    """A number with a small negative exponent written out, when that takes at most
    ``max_decimals`` decimals: ``6.6(71)e-5`` -> ``0.000066(71)``, ``1.2e-3`` ->
    ``0.0012``; the error in parentheses keeps its digits (units of the last one). A
    column of per-size errors then reads in one format, every value with its digits
    (siunitx set ``6.6(71)`` and its ``x 10^-5`` apart); round-off residuals (``2.2e-16``)
    and zeros (``0e-6``) keep their exponent form."""
    m = _DECIMAL_EXPONENT.fullmatch(str(text))
    if not m:
        return text
    sign, whole, frac, error, exp = m.group(1), m.group(2), m.group(3) or "", m.group(4) or "", int(m.group(5))
    digits = whole + frac
    if not digits.strip("0") or len(frac) + exp > max_decimals:
        return text
    if "." in error:  # 6.6(1.2)e-5: the error in the value's units -> in last-digit units
        error = "(" + error.strip("()").replace(".", "").lstrip("0") + ")"
    places = len(frac) + exp
    body = digits.rjust(places + 1, "0")
    return sign + body[:-places] + "." + body[-places:] + error


#: Decimals of a power in percent: one number format for the whole column.
PERCENT_DECIMALS = 1


def percent(fraction: float) -> str:
    """A power (a fraction) in percent at :data:`PERCENT_DECIMALS` decimals, the same in
    every row (``3.0``, ``2.9``, ``0.6``; ``<0.1`` below what that shows): the power column
    mixed ``3``, ``2.9`` and ``0.01``."""
    value = 100 * float(fraction)
    smallest = 10.0 ** -PERCENT_DECIMALS
    if value < smallest / 2:
        return f"<{smallest:.{PERCENT_DECIMALS}f}"
    return f"{value:.{PERCENT_DECIMALS}f}"


_S_NUMBER = re.compile(r"([<>]?)(-?)(\d+)(?:\.(\d+))?(?:\((\d+)\))?(?:e(-?)(\d+))?")


def s_number(value: float, se: float | None = None) -> str:
    r"""A number for a siunitx ``S`` column: ``0.0490(12)`` (:func:`shorthand`, the error in
    parentheses in units of the last digit, never with its own decimal point:
    ``123.4(5.6)`` -> ``123.4(56)``), or a braced ``{---}`` (text, not parsed) when the
    value is missing."""
    text = concise(value, se)
    if text == DASH:
        return "{" + DASH + "}"
    m = re.fullmatch(r"(.*)\(([\d.]+)\)(.*)", text)
    if m and "." in m.group(2):
        text = m.group(1) + "(" + m.group(2).replace(".", "").lstrip("0") + ")" + m.group(3)
    return text


def table_format(cells) -> str:
    r"""siunitx ``table-format`` that holds every numeric cell of an ``S`` column (braced
    cells are text and do not count): comparator (``<0.1``), sign, integer and decimal
    digits, uncertainty digits and exponent, e.g. ``-1.4(2)`` or ``2.3e-1``."""
    sign = exp_sign = compare = False
    whole = frac = unc = exp = 0
    for cell in cells:
        cell = str(cell)
        if cell.startswith("{"):
            continue
        m = _S_NUMBER.fullmatch(cell)
        if not m:
            continue
        compare |= bool(m.group(1))
        sign |= bool(m.group(2))
        whole = max(whole, len(m.group(3)))
        frac = max(frac, len(m.group(4) or ""))
        unc = max(unc, len(m.group(5) or ""))
        if m.group(7):
            exp_sign |= bool(m.group(6))
            exp = max(exp, len(m.group(7)))
    fmt = ("<" if compare else "") + ("-" if sign else "") + str(max(whole, 1)) + (f".{frac}" if frac else ".0")
    if unc:
        fmt += f"({unc})"
    if exp:
        fmt += "e" + ("-" if exp_sign else "") + str(exp)
    return fmt
