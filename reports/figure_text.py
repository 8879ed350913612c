r"""Typeset text of the report's figures and the guard that checks it.

The registry writes statements and quantities in LaTeX; a figure renders them with
matplotlib's mathtext (never converted to plain text): :func:`mathtext` rewrites the few
macros mathtext lacks (``\tfrac``, ``\big/``, ``\lVert``, ``\ge``, arguments without
braces such as ``\frac1n`` or ``\sqrt n``) and checks that the result parses;
:func:`rich` does the same for a statement (text with ``$...$``); :func:`wrap` breaks such
text into lines without breaking a formula. :func:`quantity` is a check's measured quantity
(its prediction's, :func:`reports.table_cells._quantity`), :func:`case_text` a parameter
case, :func:`identifier` a claim id (typewriter, in math so its underscores are not text).

:class:`Key` collects what a figure's key says: every series drawn is marked with the key
entries that describe it (:meth:`Key.mark`) and the key lists exactly the entries drawn.

:func:`text_problems` is the text guard: no backslash, underscore or caret outside math in
any rendered text, at least two labelled ticks on every log axis, every series in a key
and every key entry drawn. :mod:`reports.canvas` guards the layout.
"""
from __future__ import annotations

import functools
import re
from typing import Any, Iterable, Mapping

from matplotlib.artist import Artist
from matplotlib.lines import Line2D

from gapverify.reports.latex import single_scripts

__all__ = ["mathtext", "math", "rich", "wrap", "identifier", "quantity", "case_text",
           "Key", "describe", "furniture", "line", "text_problems"]

# macros mathtext lacks, and their mathtext spelling
_RENAMED = {r"\tfrac": r"\frac", r"\dfrac": r"\frac", r"\lVert": r"\Vert",
            r"\rVert": r"\Vert", r"\lvert": "|", r"\rvert": "|", r"\ge": r"\geq",
            r"\le": r"\leq", r"\ne": r"\neq", r"\textstyle": "", r"\displaystyle": "",
            r"\scriptstyle": "", r"\big": "", r"\Big": "", r"\bigg": "", r"\Bigg": "",
            r"\bigl": "", r"\bigr": "", r"\Bigl": "", r"\Bigr": "", r"\biggl": "",
            r"\biggr": "", r"\middle": "", r"\nolimits": "", r"\limits": ""}
# commands whose arguments mathtext wants in braces: the number of arguments
_ARGUMENTS = {r"\frac": 2, r"\sqrt": 1, r"\mathbf": 1, r"\mathrm": 1, r"\mathit": 1,
              r"\mathbb": 1, r"\mathcal": 1, r"\mathtt": 1, r"\mathsf": 1, r"\hat": 1,
              r"\bar": 1, r"\tilde": 1, r"\vec": 1, r"\overline": 1, r"\dot": 1,
              r"\operatorname": 1, r"\text": 1, r"\widehat": 1, r"\widetilde": 1}
_COMMAND = re.compile(r"\\[A-Za-z]+")


def _rename(latex: str) -> str:
    return _COMMAND.sub(lambda m: _RENAMED.get(m.group(0), m.group(0)), latex)


def _token(text: str, i: int) -> int:
    """End of the argument starting at ``i``: a brace group, a command or one character."""
    if text[i] == "{":
        depth = 0
        for j in range(i, len(text)):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth == 0:
                return j + 1
        return len(text)
    match = _COMMAND.match(text, i)
    return match.end() if match else i + 1


def _brace(latex: str) -> str:
    r"""``\frac1n`` -> ``\frac{1}{n}``, ``\sqrt n`` -> ``\sqrt{n}``: every argument braced."""
    out, i = [], 0
    while i < len(latex):
        match = _COMMAND.match(latex, i)
        if not match:
            out.append(latex[i])
            i += 1
            continue
        out.append(match.group(0))
        i = match.end()
        for _ in range(_ARGUMENTS.get(match.group(0), 0)):
            while i < len(latex) and latex[i] == " ":
                i += 1
            if i >= len(latex):
                break
            end = _token(latex, i)
            arg = latex[i:end]
            out.append(arg if arg.startswith("{") else "{" + _brace(arg) + "}")
            i = end
    return "".join(out)


@functools.lru_cache(maxsize=1)
def _parser():
    from matplotlib.mathtext import MathTextParser

    return MathTextParser("path")  # building its grammar takes a while: once


def _parses(math_text: str) -> str | None:
    """``None`` when mathtext parses ``$math_text$``, else the parser's complaint."""
    try:
        _parser().parse(f"${math_text}$")
    except (ValueError, RuntimeError) as exc:
        return str(exc)
    return None


def mathtext(latex: str) -> str:
    r"""A formula (LaTeX, no ``$``) in the subset mathtext renders: the macros it lacks
    spelled its way, every argument in braces; a command it still refuses is dropped (its
    argument stays), so the formula is typeset, never shown as source."""
    text = single_scripts(_brace(_rename(str(latex).strip())))
    for _ in range(8):
        complaint = _parses(text)
        if complaint is None:
            return text
        unknown = re.search(r"Unknown symbol: (\\[A-Za-z]+)", complaint)
        if not unknown:
            break
        text = re.sub(re.escape(unknown.group(1)) + r"(?![A-Za-z])", "", text)
    from pylatexenc.latex2text import LatexNodes2Text  # a formula mathtext cannot read

    plain = re.sub(r"[\\{}^_$#%&~]", " ", LatexNodes2Text().latex_to_text(str(latex)))
    return r"\mathrm{" + r"\ ".join(plain.split()) + "}"


def math(latex: str) -> str:
    """:func:`mathtext` between dollars: a label's formula."""
    return f"${mathtext(latex)}$"


def _split(text: str) -> list[tuple[bool, str]]:
    """``[(is_math, piece), ...]`` of a text with ``$...$`` formulas (``\\$`` is a dollar)."""
    pieces = re.split(r"(?<!\\)\$", str(text))
    return [(k % 2 == 1, p) for k, p in enumerate(pieces) if p]


def _plain_text(text: str) -> str:
    # LaTeX text outside formulas: its few macros and escapes as the characters they mean
    for a, b in ((r"\&", "&"), (r"\%", "%"), (r"\_", "_"), ("~", " "), ("--", "–"),
                 ("``", "“"), ("''", "”")):
        text = text.replace(a, b)
    if "\\" in text:
        from pylatexenc.latex2text import LatexNodes2Text

        text = LatexNodes2Text().latex_to_text(text)
    return text


def rich(text: str) -> str:
    """A statement in LaTeX (text and ``$...$`` formulas) as a matplotlib string: the
    formulas through :func:`mathtext`, an underscore or caret in the text set in math."""
    out = []
    for is_math, piece in _split(text):
        if is_math:
            out.append(math(piece))
        else:
            plain = _plain_text(piece)
            out.append(plain.replace("_", r"$\_$").replace("^", r"$\wedge$"))
    return "".join(out)


def _width(piece: str) -> int:
    # characters a piece takes on the page: a formula's commands count as one
    return len(re.sub(r"\\[A-Za-z]+", "x", re.sub(r"[{}$^_]", "", piece)))


def _words(line: str) -> list[str]:
    # the words of a line: split at spaces outside $...$
    words, in_math, word = [], False, ""
    for ch in line:
        if ch == "$":
            in_math = not in_math
        if ch == " " and not in_math:
            words.append(word)
            word = ""
        else:
            word += ch
    return [w for w in words + [word] if w]


def _greedy(words: list[str], chars: int) -> list[str]:
    lines, current = [], ""
    for w in words:
        if current and _width(current) + 1 + _width(w) > chars:
            lines.append(current)
            current = w
        else:
            current = f"{current} {w}" if current else w
    return lines + [current]


def wrap(text: str, chars: int) -> str:
    """``text`` (from :func:`rich`) in lines of at most about ``chars`` characters,
    breaking at spaces outside formulas only, the lines of a paragraph as even as that
    many lines allow (no word left alone on the last); existing line breaks kept."""
    out = []
    for paragraph in text.split("\n"):
        words = _words(paragraph)
        lines = _greedy(words, chars)
        for even in range(-(-_width(paragraph) // len(lines)), chars):  # the ceiling
            balanced = _greedy(words, even)
            if len(balanced) == len(lines):
                lines = balanced
                break
        out += lines
    return "\n".join(out)


def identifier(name: str) -> str:
    r"""A claim id (or another identifier) in typewriter: ``$\mathtt{markov.singular\_law}$``."""
    text = str(name).replace("_", r"\_").replace(".", r".\!")  # no space after the dot
    return r"$\mathtt{" + text + "}$"


def quantity(claim_id: str, label: str) -> str:
    """The typeset quantity a check measures (its prediction's LaTeX, relative to another's
    for a ratio check), in dollars; a check the registry does not know: its label, in
    typewriter."""
    from gapverify.reports.table_cells import _quantity, split_case

    latex = _quantity(str(claim_id), str(label))
    return math(latex) if latex else identifier(split_case(str(label))[0])


def case_text(case: Mapping[str, Any] | None, keys: Iterable[str] | None = None) -> str:
    """A parameter case typeset, ``$s^2 = 0.25$, $\\gamma = 1$`` (only ``keys`` when given,
    in their order)."""
    from gapverify.reports.numbers import significant
    from gapverify.theory.parameters import PARAMETERS

    case = case or {}
    names = list(keys) if keys is not None else sorted(case)
    parts = []
    for k in (k for k in names if k in case):
        symbol = PARAMETERS[k].latex if k in PARAMETERS else r"\mathrm{" + k.replace("_", r"\_") + "}"
        try:
            value = significant(float(case[k]), 4)
        except (TypeError, ValueError):
            value = str(case[k])
        parts.append(f"${mathtext(symbol)} = {value}$")
    return ", ".join(parts)


def _set_keys(artist, entries: tuple[str, ...]) -> None:
    artist._gapverify_key = entries  # what the key says of this artist ( (): furniture )
    for child in _children(artist):
        child._gapverify_key = entries


def _children(artist) -> list:
    if isinstance(artist, (tuple, list)):  # a container: errorbar, bars
        out = []
        for part in artist:
            out += _children(part) if isinstance(part, (tuple, list)) else [part] if part is not None else []
        return out
    return []


def describe(artist, *texts: str):
    """Say that ``artist`` (or a container) is described by the key entries ``texts``
    (entries of one key or of several: a figure's and a panel's); returns ``artist``."""
    _set_keys(artist, tuple(getattr(artist, "_gapverify_key", ())) + tuple(texts))
    return artist


def furniture(artist):
    """Mark ``artist`` as no series (a separator, a guide line): the key need not name it."""
    _set_keys(artist, ())
    return artist


class Key:
    """The entries of a figure's key, in the order first drawn, each with its handle."""

    def __init__(self) -> None:
        self._handles: dict[str, Artist] = {}

    def mark(self, artist, *entries: tuple[str, Artist]):
        """Say that ``artist`` (or a container) is described by ``entries`` (text, handle)
        and add them to the key; returns ``artist``."""
        describe(artist, *(self.add(text, handle) for text, handle in entries))
        return artist

    def add(self, text: str, handle: Artist) -> str:
        """Add an entry (the first handle given for a text stays); returns ``text``."""
        if text not in self._handles:
            handle.set_label(text)
            self._handles[text] = handle
        return text

    def handles(self) -> list[Artist]:
        return list(self._handles.values())

    def __len__(self) -> int:
        return len(self._handles)


def line(colour="0.25", **style) -> Line2D:
    """A key handle: a proxy line (``linestyle``, ``marker``... as :class:`Line2D`)."""
    return Line2D([], [], color=colour, **style)


def _text_problem(where: str, text: str) -> str | None:
    for is_math, piece in _split(text):
        if is_math:
            continue
        for ch, what in (("\\", "a backslash"), ("_", "an underscore"), ("^", "a caret")):
            if ch in piece:
                return f"{where}: {what} outside math in {text!r}"
        for ascii_math in ("->", "sqrt(", "<=", ">="):
            if ascii_math in piece:
                return f"{where}: ASCII math {ascii_math!r} in {text!r}"
    return None


def _log_axis_problems(fig) -> list[str]:
    out = []
    for i, ax in enumerate(fig.axes):
        if not (ax.get_visible() and ax.axison):
            continue
        for name, axis, scale in (("x", ax.xaxis, ax.get_xscale()), ("y", ax.yaxis, ax.get_yscale())):
            if scale != "log":
                continue
            labels = [t for tick in axis._update_ticks() for t in (tick.label1, tick.label2)
                      if t.get_visible() and t.get_text().strip()]
            if len(labels) < 2:
                out.append(f"axes {i}: log {name} axis has {len(labels)} labelled tick(s)")
    return out


def _entries(artist) -> tuple[str, ...] | None:
    # what the key says of an artist: its marks, else its own label; None: nothing
    entries = getattr(artist, "_gapverify_key", None)
    if entries is not None:
        return entries
    label = str(artist.get_label() or "")
    return (label,) if label and not label.startswith("_") else None


def _series(ax) -> list[tuple[str, tuple[str, ...] | None]]:
    """``(what, key entries)`` of every artist with data in ``ax`` (``None``: unmarked);
    a part of a container (error bars, a histogram's bars) is described by the container,
    or by whichever part carries the label (``hist`` labels its first bar)."""
    owner = {}
    for container in ax.containers:
        parts = _children(container)
        said = _entries(container) or next((e for e in map(_entries, parts) if e), None)
        for child in parts:
            owner[id(child)] = said
    out = []
    for artist in list(ax.lines) + list(ax.collections) + list(ax.patches):
        if artist.get_visible():
            entries = _entries(artist)
            out.append((type(artist).__name__,
                        entries if entries is not None else owner.get(id(artist))))
    return out


def _key_problems(fig) -> list[str]:
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    shown = {t.get_text() for leg in legends for t in leg.get_texts()}
    drawn, out = set(), []
    for i, ax in enumerate(fig.axes):
        for what, entries in _series(ax):
            if entries is None:
                out.append(f"axes {i}: a {what} no key describes")
                continue
            drawn.update(entries)
            out += [f"axes {i}: {e!r} is not in a key" for e in entries if e not in shown]
    out += [f"the key lists {t!r}, which nothing drawn is" for t in sorted(shown - drawn)]
    return sorted(set(out))


def text_problems(fig, draw: bool = True) -> list[str]:
    """Why ``fig``'s text does not read as typeset, one sentence each; empty when it does:
    a backslash, underscore or caret (or ASCII math such as ``->``) outside math in a
    rendered text, a log axis with fewer than two labelled ticks, a series no key
    describes, a key entry nothing drawn is. ``draw=False``: the figure was just drawn
    (:func:`reports.figure_text.figure_problems`), as it stands."""
    from matplotlib import rc_context

    from gapverify.reports.canvas import STYLE, _text_artists

    with rc_context(STYLE):
        if draw:
            fig.canvas.draw()
        problems = [p for name, t in _text_artists(fig)
                    if (p := _text_problem(name, t.get_text())) is not None]
        problems += _log_axis_problems(fig)
    return problems + _key_problems(fig)


def figure_problems(fig) -> list[str]:
    """:func:`reports.canvas.layout_problems` and the text guard (:func:`text_problems`:
    typeset text, labelled log axes, a key for every series) of one drawing of ``fig``."""
    from matplotlib import rc_context

    from gapverify.reports.canvas import STYLE, layout_problems

    problems = layout_problems(fig)
    with rc_context(STYLE):
        return problems + text_problems(fig, draw=False)
