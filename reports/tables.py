r"""LaTeX tables of a judged run, as files: a per-claim summary
(:mod:`reports.summary_table`), a per-check table (:mod:`reports.checks_table`), the notes
on the checks (:mod:`reports.check_notes`) and one per-size convergence table per claim
(:mod:`reports.claim_tables`). A run that holds peers' results (``peers.*``) beside the
paper's claims has a second per-check table, :data:`PEERS_CHECKS_NAME`.

Read from the run's results (:mod:`reports.results`), never from new samples. Every
caption stands alone: what is measured, the profile, the root seed and the level. Output
is deterministic: claims in the run's order, checks in the claim's order, numbers from
:mod:`reports.numbers` (precision from the error, no fixed format), no timestamps and no
input paths. Every file opens with :data:`reports.latex.PACKAGES_COMMENT` and uses nothing
beyond booktabs, siunitx, amsmath, threeparttable and tabularx, so it can be ``\input``
in any class: the summary fits ``\columnwidth`` of a two-column paper, the per-check and
per-size tables span the text (``table*``) and fit the standard article's 345 pt and a
float page of 550 pt (issue 35).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from gapverify.reports.check_notes import check_notes
from gapverify.reports.checks_table import checks_table
from gapverify.reports.claim_tables import claim_table
from gapverify.reports.summary_table import summary_table
from gapverify.reports.table_cells import _slug, claim_blocks

__all__ = ["table_files", "markdown_files", "write_tables", "FORMATS", "table_names", "SUMMARY_NAME", "CHECKS_NAME",
           "NOTES_NAME", "PEERS_CHECKS_NAME", "PEERS_LABEL"]

SUMMARY_NAME = "summary.tex"
CHECKS_NAME = "checks.tex"
NOTES_NAME = "check-notes.tex"
#: The per-check table of the peers' results, beside a run's claims of the paper.
PEERS_CHECKS_NAME = "checks-peers.tex"
PEERS_LABEL = "tab:gapverify:peers-checks"


def table_names(run: Mapping[str, Any]) -> list[str]:
    """File names of the claim tables, in the run's order: ``claim-<id with every run of
    non-alphanumerics as '-'>.tex``, made unique by a numeric suffix (plain names that
    ``\\input`` and every file system accept)."""
    names, seen = [], set()
    for claim in run["claims"]:
        base = "claim-" + _slug(str(claim["claim"]))
        name, k = base, 2
        while name in seen:
            name, k = f"{base}-{k}", k + 1
        seen.add(name)
        names.append(name + ".tex")
    return names


def table_files(run: Mapping[str, Any]) -> dict[str, str]:
    """Every table of ``run`` as ``{file name: LaTeX source}``: the per-claim summary, the
    per-check table and the notes on the checks first, then the per-size convergence table
    of each claim in the run's order (:func:`table_names`; the report's appendix).

    A run that holds peers' results and claims of the paper has two per-check tables:
    :data:`CHECKS_NAME` of the paper's claims and :data:`PEERS_CHECKS_NAME` of the peers'
    (:func:`reports.table_cells.claim_blocks`)."""
    blocks = claim_blocks(run)
    files = {SUMMARY_NAME: summary_table(run)}
    if len(blocks) == 1:
        files[CHECKS_NAME] = checks_table(run, title=blocks[0].title)
    else:
        files[CHECKS_NAME] = checks_table(run, blocks[0].claims)
        files[PEERS_CHECKS_NAME] = checks_table(run, blocks[1].claims, label=PEERS_LABEL,
                                                title=blocks[1].title)
    files[NOTES_NAME] = check_notes(run)
    for name, claim in zip(table_names(run), run["claims"]):
        files[name] = claim_table(run, claim, name)
    return files


def markdown_files(run: Mapping[str, Any]) -> dict[str, str]:
    """The tables of :func:`table_files` as GitHub Markdown (:mod:`reports.markdown`): the
    same names with ``.md`` for ``.tex``, the same rows and verdict words."""
    from gapverify.reports import markdown as md

    blocks = claim_blocks(run)
    files = {SUMMARY_NAME: md.summary_markdown(run)}
    if len(blocks) == 1:
        files[CHECKS_NAME] = md.checks_markdown(run, title=blocks[0].title)
    else:
        files[CHECKS_NAME] = md.checks_markdown(run, blocks[0].claims)
        files[PEERS_CHECKS_NAME] = md.checks_markdown(run, blocks[1].claims, title=blocks[1].title)
    files[NOTES_NAME] = md.check_notes_markdown(run)
    for name, claim in zip(table_names(run), run["claims"]):
        files[name] = md.claim_markdown(run, claim)
    return {name.removesuffix(".tex") + ".md": text for name, text in files.items()}


#: The formats of ``gapverify tables --format``, and their files.
FORMATS = {"latex": table_files, "markdown": markdown_files}


def write_tables(run: Mapping[str, Any], out_dir: str | Path, format: str = "latex") -> list[Path]:
    """Write :func:`table_files` (``format="markdown"``: :func:`markdown_files`) into
    ``out_dir`` (created); returns the paths in order. Files are written as UTF-8 bytes
    with ``\\n`` line ends, so equal runs give equal files."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in FORMATS[format](run).items():
        path = out / name
        path.write_bytes(text.encode("utf-8"))
        paths.append(path)
    return paths
