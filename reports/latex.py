r"""LaTeX text for the report: escaping and numbers whose precision follows their error.

Two rules make a table trustworthy and reproducible:

* **Escaping.** Every plain string (claim ids such as ``markov.singular_law``, reasons,
  commands) goes through :func:`escape` (pylatexenc's ``unicode_to_latex``): ``_``, ``%``,
  ``&``, ``#``, ``$``, ``{``, ``}``, ``~``, ``^``, ``\`` and non-ASCII characters become
  LaTeX that compiles. Text that is LaTeX already is wrapped in :class:`TeX`; the template
  environment (:mod:`reports.render`) escapes everything else automatically.
* **Significant digits from the interval.** A measured mean with standard error
  :math:`\mathrm{se}` is written in the concise form ``0.0490(12)``: the error rounded to
  :data:`UNCERTAINTY_DIGITS` significant digits and the value rounded to the same decimal
  place (the uncertainties package's ``.2uS`` format). siunitx's ``\num`` parses that
  form, so a table prints :math:`0.0490(12)` and never a fixed number of decimals.
  Interval ends and the predicted value are rounded to the same place as the measurement
  they are compared with (:func:`rounded_like`). Numbers without an error (round-off
  residuals, predictions of exact checks) get :func:`significant` digits.

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
import unicodedata
from fractions import Fraction

from pylatexenc.latex2text import LatexNodes2Text
from pylatexenc.latexencode import unicode_to_latex
from uncertainties import ufloat

__all__ = [
    "TeX",
    "escape",
    "math_or_text",
    "UNCERTAINTY_DIGITS",
    "shorthand",
    "rounded_like",
    "trim_zeros",
    "significant",
    "num",
    "num_shorthand",
    "interval",
    "rate_fraction",
    "PACKAGES",
    "PACKAGES_COMMENT",
]

#: Significant digits kept in a standard error (JCGM 100 7.2.6: "at most two").
UNCERTAINTY_DIGITS = 2

#: The LaTeX packages a generated table needs, and the comment line that opens every table.
PACKAGES = ("booktabs", "siunitx", "amsmath", "threeparttable")
PACKAGES_COMMENT = "% Requires: \\usepackage{" + ",".join(PACKAGES) + "}"

DASH = "---"


class TeX(str):
    """A string that is LaTeX source already: the templates insert it as it is.

    Every other value reaching a template is passed through :func:`escape`.
    """

    __slots__ = ()


def escape(text: object) -> TeX:
    r"""``text`` as LaTeX that typesets it literally (``a_b%&#`` -> ``a\_b\%\&\#``).

    pylatexenc's ``unicode_to_latex`` handles the ten LaTeX specials and maps non-ASCII
    characters (``±``, ``κ``, ``é``) to LaTeX commands. A character whose command would need
    a package beyond the kernel and amsmath (``𝔼`` -> ``\mathbb{E}``, amssymb) is first
    decomposed (NFKD: ``𝔼`` -> ``E``) and otherwise printed as ``?``, so that escaped text
    always compiles with the table's packages. ``|`` becomes ``\ensuremath{|}`` (the OT1
    text font has no bar).
    """
    if isinstance(text, TeX):
        return text
    text = str(text)
    latex = _encode(text)
    if not _safe(latex):
        latex = "".join(_escape_char(ch) for ch in text)
    # '|' is left alone by pylatexenc; in the default OT1 text font it prints an em dash
    return TeX(latex.replace("|", r"\ensuremath{|}"))


def _encode(text: str) -> str:
    return unicode_to_latex(text, non_ascii_only=False, replacement_latex_protection="braces",
                            unknown_char_policy="replace", unknown_char_warning=False)


def _escape_char(ch: str) -> str:
    latex = _encode(ch)
    if _safe(latex):
        return latex
    decomposed = unicodedata.normalize("NFKD", ch)
    if decomposed != ch and _safe(_encode(decomposed)):
        return _encode(decomposed)
    return "?"


# Text-mode commands of the LaTeX kernel (OT1/OMS) that pylatexenc emits for common text.
_KERNEL_TEXT = frozenset("""
textasciitilde textasciicircum textbackslash ensuremath textendash textemdash textquoteleft
textquoteright textquotedblleft textquotedblright textbullet dots ldots i j ss ae AE oe OE o O
aa AA l L S P copyright pounds dag ddag textdagger textdaggerdbl u v H c d b r t bfseries
""".split())


def _safe(latex: str) -> bool:
    # every letter macro is a kernel text command or an allowed math macro
    return set(_MACRO.findall(latex)) <= (_KERNEL_TEXT | _ALLOWED_MACROS)


# Macros a registry title or quantity may use and still compile with the kernel, amsmath
# and siunitx alone. Anything else (say \mathbb, which needs amssymb) is turned to text.
_ALLOWED_MACROS = frozenset("""
alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi
pi varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta
Lambda Xi Pi Sigma Upsilon Phi Psi Omega ell infty partial nabla top perp
sqrt frac tfrac dfrac binom mathrm mathbf mathit mathsf mathtt mathcal text textrm textit
textbf operatorname hat bar tilde widehat widetilde vec dot ddot overline underline
sum prod int lim max min sup inf log exp det tr
to mapsto le ge leq geq ne neq approx sim simeq equiv propto in notin subset subseteq
cdot times otimes oplus circ ast star pm mp cdots ldots dots vdots quad qquad
left right big Big bigl bigr Bigl Bigr lvert rvert lVert rVert vert Vert langle rangle
lbrace rbrace displaystyle textstyle scriptstyle mid
""".split())
_MACRO = re.compile(r"\\([A-Za-z]+)")


def _balanced(src: str) -> bool:
    depth = 0
    for ch in re.sub(r"\\.", "", src):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0 and re.sub(r"\\\$", "", src).count("$") % 2 == 0


def math_or_text(src: str, math: bool = False) -> TeX:
    r"""LaTeX from the claim registry (a title, or with ``math=True`` a quantity), kept as
    LaTeX when it is safe to compile with the table's packages, else turned to plain text.

    Safe means: braces and dollars balanced and every macro in a known list of kernel and
    amsmath macros. Otherwise pylatexenc's ``LatexNodes2Text`` renders it as Unicode text
    (``\sqrt{T}`` -> ``√(T)``), which :func:`escape` then makes LaTeX again.
    """
    src = str(src)
    if _balanced(src) and set(_MACRO.findall(src)) <= _ALLOWED_MACROS:
        return TeX(f"${src}$" if math else src)
    text = LatexNodes2Text().latex_to_text(f"${src}$" if math else src)
    return escape(text)


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
    ``0.081``, ``2.500e-3`` -> ``2.5e-3`` (for exact values, which have no error)."""
    m = re.fullmatch(r"(-?\d+)\.(\d*?)0*((?:e-?\d+)?)", text)
    if not m:
        return text
    whole, frac, exp = m.groups()
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
