r"""The cells of the report's tables, whatever they are printed in: a table row is built
once from the judged run (:mod:`reports.summary_table`, :mod:`reports.checks_table`,
:mod:`reports.claim_tables`) as cells that say what they hold (a plain text, an
identifier, math, a number in its concise form, an interval, a verdict word, lines, a
footnote mark), and each renderer prints them:

* :meth:`Cell.latex`: LaTeX source (escaped text, ``\texttt``, ``\num`` and ``$...$``),
  and :func:`s_cell` a cell of a siunitx ``S`` column;
* :meth:`Cell.markdown`: GitHub Markdown (``|`` escaped, identifiers in backticks, math in
  ``$...$``, a failed verdict in bold, lines joined by ``<br>``).

Each presentation rule is written once, here: the tables' modules decide what a cell
holds, never how a format spells it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from gapverify.reports.latex import DASH, TeX, escape, math_or_text
from gapverify.reports.numbers import plain_decimal

__all__ = ["Cell", "Text", "Code", "Math", "RegistryMath", "RegistryText", "Number",
           "Interval", "Verdict", "Lines", "Joined", "Marked", "Bold", "Raw", "md_escape",
           "s_cell", "two_lines"]


def md_escape(text: object) -> str:
    """``text`` for a cell of a GitHub pipe table: ``|`` escaped (it ends a cell), line
    breaks as spaces."""
    return str(text).replace("\\|", "|").replace("|", "\\|").replace("\n", " ")


def two_lines(first: str, second: str) -> str:
    r"""A cell of two lines (LaTeX already escaped) whose first line sits on the row's
    baseline, as every other cell of the row (a ``\shortstack`` put its second line
    there and its first above the row)."""
    return r"\begin{tabular}[t]{@{}l@{}}" + first + r"\\ " + second + r"\end{tabular}"


class Cell:
    """A table cell, printed by :meth:`latex` or :meth:`markdown`."""

    def latex(self) -> TeX:
        raise NotImplementedError

    def markdown(self) -> str:
        raise NotImplementedError

    def __bool__(self) -> bool:
        return bool(self.markdown())


@dataclass(frozen=True)
class Text(Cell):
    """Plain text, typeset literally."""

    text: str

    def latex(self) -> TeX:
        return escape(self.text)

    def markdown(self) -> str:
        return md_escape(self.text)


@dataclass(frozen=True)
class Code(Cell):
    """An identifier (a claim id, a version, a seed), in typewriter type."""

    text: str

    def latex(self) -> TeX:
        return TeX(r"\texttt{" + escape(self.text) + "}")

    def markdown(self) -> str:
        return "`" + str(self.text).replace("`", "'").replace("|", "\\|") + "`"


@dataclass(frozen=True)
class Math(Cell):
    """Math this suite writes (``T\\to\\infty``, ``T^{-1/2}``), LaTeX source without the
    dollars."""

    src: str

    def latex(self) -> TeX:
        return TeX("$" + self.src + "$")

    def markdown(self) -> str:
        return "$" + md_escape(self.src) + "$"


@dataclass(frozen=True)
class RegistryMath(Math):
    """Math of the claim registry (a quantity): kept where it compiles with the tables'
    packages, else turned to text (:func:`reports.latex.math_or_text`)."""

    def latex(self) -> TeX:
        return math_or_text(self.src, math=True)


@dataclass(frozen=True)
class RegistryText(Cell):
    """Text of the claim registry with inline ``$...$`` math (a claim's title)."""

    src: str

    def latex(self) -> TeX:
        return math_or_text(self.src)

    def markdown(self) -> str:
        return md_escape(self.src)


@dataclass(frozen=True)
class Number(Cell):
    """A number as :mod:`reports.numbers` writes it (``0.0490(12)``, ``2.2e-16``, or
    ``---`` when missing), a small exponent written out (``6.6(71)e-5`` ->
    ``0.000066(71)``, :func:`reports.numbers.plain_decimal`) in every format.
    ``aligned=False``: a number of an ``S`` column set but not aligned on its decimal
    point."""

    text: str
    aligned: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", plain_decimal(self.text))

    def latex(self) -> TeX:
        return TeX(DASH if self.text == DASH else r"\num{" + self.text + "}")

    def markdown(self) -> str:
        return self.text


@dataclass(frozen=True)
class Interval(Cell):
    """``[lo, hi]``, both ends numbers of :mod:`reports.numbers` (small exponents written
    out, as :class:`Number`)."""

    low: str
    high: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "low", plain_decimal(self.low))
        object.__setattr__(self, "high", plain_decimal(self.high))

    def latex(self) -> TeX:
        return TeX(r"[\num{" + self.low + r"}, \num{" + self.high + "}]")

    def markdown(self) -> str:
        return f"[{self.low}, {self.high}]"


@dataclass(frozen=True)
class Verdict(Cell):
    """A verdict word of :mod:`verification.judging.outcomes`, bold when it failed;
    ``split``: where a long word goes on two lines in a narrow LaTeX column (``" "`` for
    "lacks power", ``": "`` for "not verified: REASON"; the first keeps its colon)."""

    word: str
    failed: bool = False
    split: str = ""

    def latex(self) -> TeX:
        word = escape(self.word)
        if self.split and self.split in word:
            head, tail = word.split(self.split, 1)
            word = two_lines(head + self.split.strip(), tail)
        return TeX(r"\textbf{" + word + "}" if self.failed else word)

    def markdown(self) -> str:
        return f"**{md_escape(self.word)}**" if self.failed else md_escape(self.word)


@dataclass(frozen=True)
class Bold(Cell):
    """A cell in bold type."""

    cell: Cell

    def latex(self) -> TeX:
        return TeX(r"\textbf{" + self.cell.latex() + "}")

    def markdown(self) -> str:
        return f"**{self.cell.markdown()}**"


@dataclass(frozen=True)
class Lines(Cell):
    """A cell of two lines (a narrow column's model or verdict)."""

    first: Cell
    second: Cell

    def latex(self) -> TeX:
        return TeX(two_lines(self.first.latex(), self.second.latex()))

    def markdown(self) -> str:
        return self.first.markdown() + "<br>" + self.second.markdown()


@dataclass(frozen=True)
class Joined(Cell):
    """Cells one after the other, ``sep`` (plain text) between them."""

    parts: tuple
    sep: str = ""

    def latex(self) -> TeX:
        return TeX(self.sep.join(p.latex() for p in self.parts))

    def markdown(self) -> str:
        return md_escape(self.sep).join(p.markdown() for p in self.parts)


@dataclass(frozen=True)
class Marked(Cell):
    """A cell with a footnote mark (``\\tnote{g}``; a superscript in Markdown)."""

    cell: Cell
    mark: str

    def latex(self) -> TeX:
        return TeX(self.cell.latex() + r"\tnote{" + self.mark + "}")

    def markdown(self) -> str:
        return self.cell.markdown() + f"<sup>{self.mark}</sup>"


@dataclass(frozen=True)
class Raw(Cell):
    """LaTeX this module has no type for (a case the registry's math could not typeset),
    and its text for the other formats (by default the LaTeX read as text)."""

    tex: str
    text: str | None = None

    def latex(self) -> TeX:
        return TeX(self.tex)

    def markdown(self) -> str:
        if self.text is not None:
            return md_escape(self.text)
        from pylatexenc.latex2text import LatexNodes2Text

        return md_escape(LatexNodes2Text().latex_to_text(str(self.tex)))


_ERROR_WITH_POINT = re.compile(r"(.*)\(([\d.]+)\)(.*)")
_EXPONENT = re.compile(r"[\d)]e[-+]?\d")


def _s_number(text: str) -> str:
    # the error in units of the last digit, without its own point: 123.4(5.6) -> 123.4(56)
    m = _ERROR_WITH_POINT.fullmatch(text)
    if m and "." in m.group(2):
        return m.group(1) + "(" + m.group(2).replace(".", "").lstrip("0") + ")" + m.group(3)
    return text


def s_cell(cell: Cell, unalign_exponent: bool = False) -> TeX:
    r"""``cell`` in a siunitx ``S`` column: a number as siunitx parses it (``0.0490(12)``),
    a missing one or any text braced (``{---}``, ``{identity}``: set as it is), an
    unaligned number (and with ``unalign_exponent`` one in exponent form, which would give
    the whole column an exponent field) as a braced ``{\num{...}}``; an empty cell stays
    empty."""
    if isinstance(cell, Number):
        if not cell.aligned:
            return TeX("{" + r"\num{" + _s_number(cell.text) + "}}")
        if cell.text == DASH:
            return TeX("{" + DASH + "}")
        text = _s_number(cell.text)
        if unalign_exponent and _EXPONENT.search(text):
            return TeX("{" + r"\num{" + text + "}}")
        return TeX(text)
    tex = cell.latex()
    return TeX("{" + tex + "}") if tex else TeX("")
