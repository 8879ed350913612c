r"""LaTeX source for the report: the :class:`TeX` marker, escaping of plain text and the
registry's own LaTeX (titles, quantities) kept when it compiles with the tables' packages.

* **Escaping.** Every plain string (claim ids such as ``markov.singular_law``, reasons,
  commands) goes through :func:`escape` (pylatexenc's ``unicode_to_latex``): ``_``, ``%``,
  ``&``, ``#``, ``$``, ``{``, ``}``, ``~``, ``^``, ``\`` and non-ASCII characters become
  LaTeX that compiles. Text that is LaTeX already is wrapped in :class:`TeX`; the template
  environment (:mod:`reports.render`) escapes everything else automatically.
* **Registry LaTeX.** Titles and quantities are LaTeX already and are kept when every
  macro is in a known list of kernel and amsmath macros (:func:`math_or_text`), else
  turned to text.

Numbers are in :mod:`reports.numbers` (digits from the standard error, siunitx cells),
the registry's plain-text notes with their math typeset in :mod:`reports.prose`.
"""
from __future__ import annotations

import re
import unicodedata

from pylatexenc.latex2text import LatexNodes2Text
from pylatexenc.latexencode import unicode_to_latex

__all__ = ["TeX", "escape", "math_or_text", "single_scripts", "PACKAGES", "PACKAGES_COMMENT",
           "DASH"]

#: The LaTeX packages a generated table needs, and the comment line that opens every table.
PACKAGES = ("booktabs", "siunitx", "amsmath", "threeparttable", "tabularx")
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


#: Characters pylatexenc encodes at a time: its ``unicode_to_latex`` takes time quadratic
#: in the length (0.5 s for 100 000 characters, an estimated 20 minutes for a 5 MB claim id
#: of a damaged results file); in pieces it is linear, and the same text: a piece never
#: ends before a combining character (the one place where pylatexenc reads a character
#: together with the one before it, ``U`` + U+0308 -> ``\"U``).
_PIECE = 512


def _encode(text: str) -> str:
    if len(text) <= _PIECE:
        return _encode_piece(text)
    out, start = [], 0
    while start < len(text):
        end = min(start + _PIECE, len(text))
        while end < len(text) and unicodedata.combining(text[end]):
            end += 1
        out.append(_encode_piece(text[start:end]))
        start = end
    return "".join(out)


def _encode_piece(text: str) -> str:
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
