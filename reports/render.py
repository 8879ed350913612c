r"""The jinja2 environment of the LaTeX templates in ``reports/templates/``.

Delimiters that LaTeX never writes: ``((( value )))`` for a value, ``((* for ... *))`` for a
statement, ``((= comment =))`` for a comment, so a template reads as LaTeX (braces and
``%`` stay LaTeX's). Every value is escaped on output (:func:`reports.latex.escape`)
unless it is a :class:`reports.latex.TeX` string: a plain string such as a claim id can
never reach the document unescaped. ``StrictUndefined`` turns a misspelt field into an
error instead of an empty cell.
"""
from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2

from gapverify.reports.latex import TeX, escape

__all__ = ["TEMPLATES", "environment", "render"]

#: Folder of the LaTeX templates.
TEMPLATES = Path(__file__).parent / "templates"


def _finalize(value: object) -> str:
    # the automatic escape: LaTeX source passes, anything else is typeset literally
    if value is None:
        return ""
    return value if isinstance(value, TeX) else escape(value)


@cache
def environment() -> jinja2.Environment:
    """The template environment (LaTeX-friendly delimiters, auto-escape, strict)."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        block_start_string="((*", block_end_string="*))",
        variable_start_string="(((", variable_end_string=")))",
        comment_start_string="((=", comment_end_string="=))",
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
        autoescape=False, finalize=_finalize, undefined=jinja2.StrictUndefined,
    )


def render(template: str, **context: object) -> str:
    """Render ``reports/templates/<template>`` with ``context``; output ends with one
    newline and has no trailing spaces (byte-stable across runs)."""
    text = environment().get_template(template).render(**context)
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"
