"""Figure files of the tools' figures: PNG for people and PDF for LaTeX, with no creation
date, so that the same figure gives the same bytes."""
from __future__ import annotations

from pathlib import Path


def save_png_pdf(fig, out: Path, stem: str) -> list[Path]:
    """Write ``out/stem.png`` and ``out/stem.pdf`` and close ``fig``."""
    import matplotlib.pyplot as plt

    paths = []
    for ext in ("png", "pdf"):
        path = out / f"{stem}.{ext}"
        fig.savefig(path, metadata={"CreationDate": None} if ext == "pdf" else None)
        paths.append(path)
    plt.close(fig)
    return paths
