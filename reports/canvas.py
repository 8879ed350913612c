"""The matplotlib canvas every report figure is drawn on: the shared style, a figure on an
Agg canvas (no pyplot, no global backend), :class:`Drawn` (a figure with its file stem and
caption) and :func:`save` (PDF and PNG without creation dates, so equal runs give equal
files)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from gapverify.reports.latex import TeX

__all__ = ["Drawn", "STYLE", "new_figure", "save", "layout_problems"]

#: matplotlib settings of every figure: sizes that stay legible at text width.
STYLE = {
    "font.size": 10, "axes.titlesize": 10.5, "axes.labelsize": 10, "legend.fontsize": 8.5,
    "xtick.labelsize": 9, "ytick.labelsize": 9, "axes.grid": True, "grid.alpha": 0.3,
    "axes.spines.top": False, "axes.spines.right": False, "savefig.dpi": 150,
    "figure.constrained_layout.use": True, "lines.linewidth": 1.6,
}
_METADATA = {"pdf": {"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None},
             "png": {"Software": None}}


@dataclass
class Drawn:
    """A figure with the file stem it is saved under and its LaTeX caption."""

    name: str
    figure: Figure
    caption: TeX
    #: the claim a per-claim figure shows (the report's appendix sets it beside that
    #: claim's per-size table); ``None`` for a figure of the whole run
    claim: str | None = None
    #: the convergence overview (:mod:`reports.overview_figure`): set in the main report
    #: after the summary, not among the figures of the whole run
    overview: bool = False


def new_figure(width: float, height: float) -> Figure:
    """A ``width`` x ``height`` inch figure on its own Agg canvas, laid out by
    constrained layout (:data:`STYLE`)."""
    with rc_context(STYLE):
        fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def save(drawn: Drawn, out_dir: str | Path) -> tuple[Path, Path]:
    """Write ``<name>.pdf`` (vector, for LaTeX) and ``<name>.png`` (150 dpi) into
    ``out_dir``; no creation dates, so the same figure gives the same bytes."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    pdf, png = out / f"{drawn.name}.pdf", out / f"{drawn.name}.png"
    with rc_context(STYLE):
        drawn.figure.savefig(pdf, metadata=_METADATA["pdf"])
        drawn.figure.savefig(png, metadata=_METADATA["png"])
    return pdf, png


def _text_artists(fig) -> list[tuple[str, object]]:
    # every visible, non-empty text of the figure: titles, labels, tick labels, legends
    out = [("suptitle" if t is getattr(fig, "_suptitle", None) else "figure text", t)
           for t in fig.texts]
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        for loc, t in (("title", ax.title), ("left title", ax._left_title),
                       ("right title", ax._right_title)):
            out.append((f"axes {i} {loc}", t))
        out.append((f"axes {i} x label", ax.xaxis.label))
        out.append((f"axes {i} y label", ax.yaxis.label))
        for axis, xy in ((ax.xaxis, "x"), (ax.yaxis, "y")):
            if not ax.axison:  # axis("off"): no tick is drawn
                break
            for tick in axis._update_ticks():  # the ticks drawn: inside the view limits
                for t in (tick.label1, tick.label2):
                    if t.get_visible():
                        out.append((f"axes {i} {xy} tick {t.get_text()!r}", t))
        for t in ax.texts:
            out.append((f"axes {i} text", t))
        out.append((f"axes {i} x offset", ax.xaxis.offsetText))
        out.append((f"axes {i} y offset", ax.yaxis.offsetText))
    for j, leg in enumerate(fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend()]):
        for t in leg.get_texts():
            out.append((f"legend {j} {t.get_text()!r}", t))
        out.append((f"legend {j} title", leg.get_title()))
    return [(name, t) for name, t in out if t.get_visible() and t.get_text().strip()]


def layout_problems(fig, legends_off_data: bool = True) -> list[str]:
    """Why ``fig`` does not read cleanly, one sentence each; empty when it does.

    Draws the figure with every warning an error (matplotlib's "constrained_layout not
    applied" among them), then compares the window extents of every visible text (titles,
    axis labels, tick labels, legend entries, annotations) with each other and with the
    figure: two texts that overlap, or a text that leaves the figure, is a problem. With
    ``legends_off_data``, a figure-level legend that covers an axes is one too."""
    with rc_context(STYLE):  # tick density follows the tick font size: draw and measure alike
        return _problems(fig, legends_off_data)


def _problems(fig, legends_off_data: bool) -> list[str]:
    import warnings

    problems = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            fig.canvas.draw()
        except Warning as exc:  # a layout warning: the figure is not laid out
            return [f"drawing warns: {exc}"]
    renderer = fig.canvas.get_renderer()
    page = fig.bbox
    boxes = [(name, t.get_window_extent(renderer)) for name, t in _text_artists(fig)]
    tol = 0.5  # pixels: touching is not overlapping
    for name, b in boxes:
        if b.x0 < page.x0 - tol or b.y0 < page.y0 - tol or b.x1 > page.x1 + tol or b.y1 > page.y1 + tol:
            problems.append(f"{name} is clipped by the figure edge")
    for i, (n1, b1) in enumerate(boxes):
        for n2, b2 in boxes[i + 1:]:
            w = min(b1.x1, b2.x1) - max(b1.x0, b2.x0)
            h = min(b1.y1, b2.y1) - max(b1.y0, b2.y0)
            if w > tol and h > tol:
                problems.append(f"{n1} overlaps {n2}")
    if legends_off_data:
        for leg in fig.legends:
            lb = leg.get_window_extent(renderer)
            for k, ax in enumerate(fig.axes):
                if ax.get_visible() and lb.overlaps(ax.get_window_extent(renderer)):
                    problems.append(f"a figure legend covers axes {k}")
    return problems
