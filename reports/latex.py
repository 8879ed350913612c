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
* **Math as math.** The registry's notes are plain text with ASCII math (``T^2``,
  ``||A||_F^2``, ``sd ~ 1/T``, ``kappa``); :func:`prose` typesets that math in ``$...$`` and
  escapes the rest, so no note prints ``T{\textasciicircum}2``. Titles and quantities are
  LaTeX already and are kept (:func:`math_or_text`).
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
    "prose",
    "s_number",
    "table_format",
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


# Macros of the registry that need a package the tables do not load, and a kernel
# equivalent: the expectation's blackboard E (amssymb) is typeset as an upright E.
_SUBSTITUTE = {"mathbb": r"\mathrm", "mathbbm": r"\mathrm", "bm": r"\mathbf", "boldsymbol": r"\mathbf"}
_SUBSTITUTES = re.compile(r"\\(" + "|".join(_SUBSTITUTE) + r")\s*\{")


def _brace_end(src: str, i: int) -> int:
    # index past the group opening at src[i] ("{"), or len(src) when unbalanced
    depth = 0
    for j in range(i, len(src)):
        if src[j] == "\\":
            continue
        depth += {"{": 1, "}": -1}.get(src[j], 0)
        if depth == 0:
            return j + 1
    return len(src)


def single_scripts(src: str) -> str:
    r"""``src`` (math) with a second subscript or superscript of one nucleus given an empty
    nucleus of its own: ``\|A\|_F^2_{\mathrm{tok}}`` (TeX: "Double subscript", the registry
    writes a few) -> ``\|A\|_F^2{}_{\mathrm{tok}}``, which compiles."""
    out, has, i = [], set(), 0
    while i < len(src):
        ch = src[i]
        if ch in "^_":
            if ch in has:
                out.append("{}")
                has = set()
            has.add(ch)
            out.append(ch)
            i += 1
            if i < len(src) and src[i] == "{":
                j = _brace_end(src, i)
            elif i < len(src) and src[i] == "\\":
                j = i + len(re.match(r"\\(?:[A-Za-z]+|.)", src[i:]).group(0))
            else:
                j = min(i + 1, len(src))
            out.append(src[i:j])
            i = j
            continue
        if ch == "\\":
            tok = re.match(r"\\(?:[A-Za-z]+|.)?", src[i:]).group(0)
        else:
            tok = ch
        if not tok.isspace():
            has = set()
        out.append(tok)
        i += len(tok)
    return "".join(out)


def math_or_text(src: str, math: bool = False) -> TeX:
    r"""LaTeX from the claim registry (a title, or with ``math=True`` a quantity), kept as
    LaTeX when it is safe to compile with the table's packages, else turned to plain text.

    Safe means: braces and dollars balanced and every macro in a known list of kernel and
    amsmath macros. Otherwise pylatexenc's ``LatexNodes2Text`` renders it as Unicode text
    (``\sqrt{T}`` -> ``√(T)``), which :func:`escape` then makes LaTeX again.
    """
    src = _SUBSTITUTES.sub(lambda m: _SUBSTITUTE[m.group(1)] + "{", str(src))
    if _balanced(src) and set(_MACRO.findall(src)) <= _ALLOWED_MACROS:
        if math:
            return TeX(f"${single_scripts(src)}$")
        return TeX(re.sub(r"(?<!\\)\$([^$]*)\$", lambda m: "$" + single_scripts(m.group(1)) + "$", src))
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


# ----------------------------------------------------------------------------- prose with math
#: Greek letters written out in the registry's plain-text notes (``kappa^2``).
_GREEK = frozenset("""
alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma tau
upsilon phi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega
""".split())
_GREEK_TEX = {"phi": r"\varphi", "epsilon": r"\varepsilon"}
#: Function-like words of the notes and how they are typeset in math.
_MATH_WORDS = {
    "log": r"\log", "exp": r"\exp", "max": r"\max", "min": r"\min", "sup": r"\sup",
    "det": r"\det", "sum": r"\sum", "sqrt": r"\sqrt", "oo": r"\infty", "perp": r"^{\perp}",
    "tr": r"\operatorname{tr}", "sd": r"\operatorname{sd}", "var": r"\operatorname{var}",
    "cov": r"\operatorname{cov}", "corr": r"\operatorname{corr}", "eps": r"\varepsilon",
    "sr": r"\operatorname{sr}",
}
_OPERATORS = {"=": "=", "~": r"\sim", "<=": r"\le", ">=": r"\ge", "<": "<", ">": ">",
              "-": "-", "+": "+", "->": r"\to", "x": r"\times", "*": r"\cdot", "/": "/",
              "±": r"\pm"}
_RELATIONS = frozenset({"=", "~", "<=", ">=", "<", ">", "->"})
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e-?\d+)?(?:(?:\.\.|/)\d+(?:\.\d+)?)?")
#: function words that need an argument after them: never the last word of a math run
_PREFIX_WORDS = frozenset({"log", "exp", "max", "min", "sup", "det", "sum", "sqrt", "tr", "sd",
                           "var", "cov", "corr", "sr"})
_WORD = re.compile(r"[A-Za-z]+")


def _is_code(core: str) -> bool:
    # a check label, claim id or file (sr_X1, frob_Aperp_scaled, width.stable_rank,
    # tests/theory/test_causal.py): typewriter text, never math
    if re.search(r"[A-Za-z]\.[A-Za-z]", core):
        return True
    m = re.match(r"\(?([A-Za-z]{2,})_", core)
    return (bool(m) and m.group(1) not in _GREEK and m.group(1) not in ("sum", "max", "min", "sup")
            and not re.match(r"\(?[A-Za-z]perp_(?:\d+|[A-Za-z])(?![A-Za-z0-9_])", core))  # Aperp_1||_F^2


def _is_math(core: str) -> bool:
    if not core or _is_code(core):
        return False
    if any(s in core for s in ("^", "_", "|", "±", "<=", ">=")):
        return True
    if re.fullmatch(r"(?:sqrt|O)\(.*|[A-Za-z]=-?[\d.]+", core):
        return True
    if core in _GREEK or (len(core) == 1 and core.isalpha() and core != "a"):
        return True
    if re.fullmatch(r"[A-Za-z]\d+(?:perp)?(?:\(.*)?|[A-Za-z]perp", core):  # s1, X0, Aperp
        return True
    if re.fullmatch(r"[\d.]+/(?:[A-Za-z]|log|sqrt).*|[A-Za-z]/\d.*", core):  # 1/T, e/2
        return True
    return bool(re.fullmatch(r"[A-Za-z]+\([^()]*\)", core)) and core.split("(")[0] in _MATH_WORDS


def _joins(core: str) -> bool:
    # may sit inside a math run without starting one
    return (core in _OPERATORS or core in _MATH_WORDS or _NUMBER.fullmatch(core) is not None)


def _group(src: str, i: int) -> int:
    # index just past the parenthesis group opening at src[i], or -1 when unbalanced
    depth = 0
    for j in range(i, len(src)):
        depth += {"(": 1, ")": -1}.get(src[j], 0)
        if depth == 0:
            return j + 1
    return -1


def _ident(word: str, script: bool = False) -> str:
    if word in _GREEK:
        return _GREEK_TEX.get(word, "\\" + word)
    if word == "l":
        return r"\ell"
    if word in _MATH_WORDS and (not script or word in ("perp", "oo")):
        return _MATH_WORDS[word].replace("^{\\perp}", "\\perp") if script else _MATH_WORDS[word]
    m = re.fullmatch(r"([A-Za-z])perp", word)
    if m:
        return f"{m.group(1)}^{{\\perp}}"
    if len(word) > 1 and not script:
        return r"\mathrm{" + word + "}"
    return word


def _ascii_math(src: str, script: bool = False) -> str:
    """LaTeX math for a run of the registry's ASCII math (``||A||_F^2``, ``T^-2/3``,
    ``sqrt(log T / 4T)``, ``kappa^(2l)``, ``s_i^4/s_1^4``)."""
    out, i = [], 0
    while i < len(src):
        ch = src[i]
        if src.startswith("||", i):
            out.append(r"\|")
            i += 2
        elif src.startswith("sqrt(", i):
            end = _group(src, i + 4)
            if end < 0:
                out.append(r"\sqrt")
                i += 4
            else:
                out.append(r"\sqrt{" + _ascii_math(src[i + 5:end - 1]) + "}")
                i = end
        elif ch in "^_":
            rest = src[i + 1:]
            if rest.startswith("("):
                end = _group(src, i + 1)
                if end > 0:
                    out.append(ch + "{" + _ascii_math(src[i + 2:end - 1], script=True) + "}")
                    i = end
                    continue
            m = re.match(r"-?[A-Za-z0-9]+(?:\.\d+)?(?:/\d+)?", rest)
            if m is None:
                out.append(ch + "{}")
                i += 1
                continue
            body = m.group(0)
            if ch == "^" and body == "T":
                out.append(r"^{\top}")
            else:
                out.append(ch + "{" + _ascii_math(body, script=True) + "}")
            i += 1 + len(body)
        elif ch.isascii() and ch.isalpha():
            m = re.match(r"([A-Za-z])(\d+)(perp)?(?![A-Za-z])|[A-Za-z]+", src[i:])
            word = m.group(0)
            if word == "x" and src[i - 1:i] == " " and src[i + 1:i + 2] == " ":
                out.append(r"\times")
            elif m.group(2) and not script:  # s1 -> s_1, X1perp -> X_1^perp; s2 is s^2
                if word == "s2" and not re.search(r"\\sqrt\{T\}\s*$", "".join(out)):
                    out.append("s^{2}")
                else:
                    out.append(f"{m.group(1)}_{{{m.group(2)}}}" + (r"^{\perp}" if m.group(3) else ""))
            else:
                out.append(_ident(word, script) + (" " if word in _MATH_WORDS or word in _GREEK else ""))
            i += len(word)
        elif src.startswith("<=", i) or src.startswith(">=", i) or src.startswith("->", i):
            out.append(" " + _OPERATORS[src[i:i + 2]] + " ")
            i += 2
        elif ch in "~±*":
            out.append(" " + _OPERATORS[ch] + " ")
            i += 1
        elif ch in "%&#$":
            out.append("\\" + ch)
            i += 1
        elif ch in "{}":
            out.append("\\" + ch)
            i += 1
        elif ch == "\\":
            out.append(r"\backslash ")
            i += 1
        else:
            out.append(ch)
            i += 1
    text = re.sub(r"([A-Za-z])_\{hat\}", r"\\hat{\1}", "".join(out))  # L_hat -> \hat{L}
    return re.sub(r" {2,}", " ", text)


def _split_token(token: str) -> tuple[str, str, str]:
    # (leading punctuation, core, trailing punctuation); unbalanced brackets stay outside
    lead, core, trail = "", token, ""
    while True:
        if core[:1] in ("(", "[") and core.count(core[0]) > core.count(")" if core[0] == "(" else "]"):
            lead, core = lead + core[0], core[1:]
        elif core[-1:] in (",", ";", ":", ".", "'") and not _NUMBER.fullmatch(core):
            core, trail = core[:-1], core[-1] + trail
        elif core[-1:] in (")", "]") and core.count(core[-1]) > core.count("(" if core[-1] == ")" else "["):
            core, trail = core[:-1], core[-1] + trail
        else:
            return lead, core, trail


def prose(text: object) -> TeX:
    r"""A note of the claim registry (plain text with ASCII math) as LaTeX, its math typeset
    as math: ``sd ~ 1/T`` -> ``$\operatorname{sd} \sim 1/T$``, ``||A||_F^2`` ->
    ``$\|A\|_{F}^{2}$``, ``T^-2/3`` -> ``$T^{-2/3}$``, ``kappa`` -> ``$\kappa$``; check labels
    and claim ids (``sr_X1``, ``width.stable_rank``) in typewriter type; everything else is
    escaped text (:func:`escape`).

    Words are grouped into math runs: a run holds at least one math token (one with
    ``^``, ``_``, ``||``, ``±``, ``<=``, a Greek letter, a single letter other than "a", a
    fraction ``1/T``, ``s1``, ``Aperp``, ``sqrt(...)``, ``O(...)``) and the operators,
    numbers and function words (``log``, ``sd``, ``tr``) around it. A run whose LaTeX is
    not safe to compile with the table's packages falls back to escaped text.
    """
    if isinstance(text, TeX):
        return text
    parts: list[tuple[str, str, str, str]] = []  # (lead, core, trail, space after)
    for token, space in _merged_tokens(str(text)):
        lead, core, trail = _split_token(token)
        parts.append((lead, core, trail, space))
    out: list[str] = []
    i = 0
    while i < len(parts):
        lead, core, trail, space = parts[i]
        if not _is_math(core) and not (_joins(core) and not trail and _run_end(parts, i) > i):
            out.append(_text_token(lead, core, trail, space))
            i += 1
            continue
        end = _run_end(parts, i)
        run = parts[i:end + 1]
        # operators may not end a run; numbers and function words may not start one unless a
        # math token follows
        while len(run) > 1 and (run[-1][1] in _OPERATORS or run[-1][1] in _PREFIX_WORDS):
            run.pop()
        if not any(_is_math(p[1]) for p in run):
            out.append(_text_token(lead, core, trail, space))
            i += 1
            continue
        src = " ".join(p[1] for p in run)
        math = _ascii_math(src)
        if _balanced(math) and set(_MACRO.findall(math)) <= _ALLOWED_MACROS | {"ell", "backslash"} \
                and all(ord(c) < 128 for c in math):
            out.append(escape(run[0][0]) + "$" + math.strip() + "$" + escape(run[-1][2])
                       + run[-1][3])
        else:
            out.append("".join(_text_token(*p) for p in run))
        i += len(run)
    return TeX("".join(out).rstrip() if str(text) == str(text).rstrip() else "".join(out))


def _merged_tokens(text: str) -> list[tuple[str, str]]:
    """Whitespace-separated tokens, those of one parenthesised math expression merged:
    a call ``sqrt(log T / 4T)`` or a group raised to a power ``(T d)^(-1/2)``."""
    tokens = [(m.group(1), m.group(2)) for m in re.finditer(r"(\S+)(\s*)", text)]
    out, i = [], 0
    while i < len(tokens):
        tok, space = tokens[i]
        opens = re.search(r"[A-Za-z0-9]\($", tok) or re.search(r"[A-Za-z0-9]\([^)]*$", tok)
        j, depth, merged = i, 0, ""
        if opens or tok.startswith("("):
            for j in range(i, min(i + 8, len(tokens))):
                merged += tokens[j][0] + (tokens[j][1] if j < i + 7 else "")
                depth = sum({"(": 1, ")": -1}.get(c, 0) for c in merged)
                if depth <= 0 or re.search(r"[;:]", tokens[j][0]):
                    break
            joined = "".join(t + (s if k < j else "") for k, (t, s) in enumerate(tokens[i:j + 1], i))
            close = _group(joined, 0) if joined.startswith("(") else -1
            powered = close > 0 and joined[close:close + 1] in ("^", "_")
            prose_words = [w for w in _WORD.findall(joined) if len(w) > 3 and w not in _GREEK
                           and w not in _MATH_WORDS]
            if (depth == 0 and j > i and (opens or powered) and not prose_words
                    and not re.search(r"[;:]", joined[:-1])):
                out.append((joined, tokens[j][1]))
                i = j + 1
                continue
        out.append((tok, space))
        i += 1
    return out


def _run_end(parts, i: int) -> int:
    # last index of the math run starting at i: consecutive math or joining tokens, broken
    # by punctuation between them
    end = i
    if parts[i][2]:
        return end
    while end + 1 < len(parts):
        lead, core, trail, _ = parts[end + 1]
        if lead or not (_is_math(core) or _joins(core)):
            break
        end += 1
        if trail:
            break
    return end


def _text_token(lead: str, core: str, trail: str, space: str) -> str:
    if _is_code(core) and "_" in core:
        while core.startswith("(") and core.endswith(")"):
            lead, core, trail = lead + "(", core[1:-1], ")" + trail
        return escape(lead) + r"\texttt{" + escape(core) + "}" + escape(trail) + space
    return escape(lead + core + trail) + space


# ----------------------------------------------------------------------------- siunitx S columns
_S_NUMBER = re.compile(r"(-?)(\d+)(?:\.(\d+))?(?:\((\d+)\))?(?:e(-?)(\d+))?")


def s_number(value: float, se: float | None = None) -> str:
    r"""A number for a siunitx ``S`` column: ``0.0490(12)`` (:func:`shorthand`, the error in
    parentheses in units of the last digit, never with its own decimal point:
    ``123.4(5.6)`` -> ``123.4(56)``), or a braced ``{---}`` (text, not parsed) when the
    value is missing."""
    text = shorthand(value, se) if se is not None else significant(value, 3)
    if text == DASH:
        return "{" + DASH + "}"
    m = re.fullmatch(r"(.*)\(([\d.]+)\)(.*)", text)
    if m and "." in m.group(2):
        text = m.group(1) + "(" + m.group(2).replace(".", "").lstrip("0") + ")" + m.group(3)
    return text


def table_format(cells) -> str:
    r"""siunitx ``table-format`` that holds every numeric cell of an ``S`` column (braced
    cells are text and do not count): sign, integer and decimal digits, uncertainty digits
    and exponent, e.g. ``-1.4(2)`` or ``2.3e-1``."""
    sign = exp_sign = False
    whole = frac = unc = exp = 0
    for cell in cells:
        cell = str(cell)
        if cell.startswith("{"):
            continue
        m = _S_NUMBER.fullmatch(cell)
        if not m:
            continue
        sign |= bool(m.group(1))
        whole = max(whole, len(m.group(2)))
        frac = max(frac, len(m.group(3) or ""))
        unc = max(unc, len(m.group(4) or ""))
        if m.group(6):
            exp_sign |= bool(m.group(5))
            exp = max(exp, len(m.group(6)))
    fmt = ("-" if sign else "") + str(max(whole, 1)) + (f".{frac}" if frac else ".0")
    if unc:
        fmt += f"({unc})"
    if exp:
        fmt += "e" + ("-" if exp_sign else "") + str(exp)
    return fmt
