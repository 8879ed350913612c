"""The import graph of ``gapverify``: one direction, no cycle.

Layers, lowest first, as installed (pyproject.toml's package-dir applied): theory <
numerics < the claim model < judging < running < tools < reports < the Python API < the
command line < the package root < the peers' claims (written, as a user's, on the public
API). A module may import its own layer or a lower one; nothing imports the command
line; no import cycle exists among modules, counting imports inside functions (a local
import that dodges a cycle is still a cycle) and imports under ``if TYPE_CHECKING:`` (an
annotation that needs a module above is an arrow back up all the same).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Repository folder -> the package it installs as (pyproject.toml's package-dir).
FOLDERS = {"gapverify": "gapverify", "theory": "gapverify.theory",
           "numerics": "gapverify.numerics", "verification": "gapverify.verification",
           "reports": "gapverify.reports", "peers": "gapverify.peers"}
V = "gapverify.verification"
#: Module-name prefix -> layer; the longest prefix applies.
LAYERS = {
    "gapverify.theory": 0,
    "gapverify.numerics": 1,
    f"{V}.claims": 2,
    f"{V}.judging": 3,
    f"{V}.running": 4,
    f"{V}.tools": 5,
    "gapverify.reports": 6,
    "gapverify.api": 7,
    "gapverify.cli": 8,
    V: 9,  # the package's own __init__ (import-free)
    "gapverify": 9,
    "gapverify.peers": 10,  # claims written as a user writes them: on top of the public API
}


def _modules() -> dict[str, Path]:
    out = {}
    for folder, package in FOLDERS.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join([package, *parts])] = path
    return out


MODULES = _modules()


def layer(module: str) -> int:
    best = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return LAYERS[best]


def imports_of(module: str) -> set[str]:
    """The package modules ``module`` imports anywhere in its source (functions and
    ``if TYPE_CHECKING:`` blocks too)."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against the package
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for a in node.names:  # a submodule, else a name defined in ``base``
                found.add(f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base)
    return {m for m in found if m in MODULES and m != module}


GRAPH = {m: imports_of(m) for m in MODULES}


def test_the_old_top_level_names_are_not_imported():
    old = ("theory", "numerics", "verification", "reports", "peers")
    offenders = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) and not node.level
                     and node.module else [])
            offenders += [f"{module}: {n}" for n in names if n.split(".")[0] in old]
    assert not offenders, offenders


def test_imports_go_down_the_layers():
    upward = [f"{m} (layer {layer(m)}) imports {t} (layer {layer(t)})"
              for m, targets in GRAPH.items() for t in targets if layer(t) > layer(m)]
    assert not upward, "\n".join(upward)


def test_nothing_below_the_command_line_imports_it():
    cli = "gapverify.cli"
    users = [m for m, targets in GRAPH.items()
             if not (m == cli or m.startswith(cli + ".")) and m != "gapverify.__main__"
             and any(t == cli or t.startswith(cli + ".") for t in targets)]
    assert not users, users


def _cycle() -> list[str] | None:
    """One import cycle among the modules, or None (depth-first search)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for t in sorted(GRAPH[m]):
            if state.get(t) == 1:
                return stack[stack.index(t):] + [t]
            if t not in state:
                found = visit(t)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(GRAPH):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_there_is_no_import_cycle():
    cycle = _cycle()
    assert cycle is None, " -> ".join(cycle)


@pytest.mark.parametrize("bad", [("gapverify.theory.laws", "gapverify.numerics.statistics"),
                                 (f"{V}.running.suite", "gapverify.cli.args"),
                                 (f"{V}.claims.model", f"{V}.judging.inference")])
def test_the_checks_see_an_upward_import_and_a_cycle(bad, monkeypatch):
    """The test can fail: an upward edge is reported, and an edge back closes a cycle."""
    source, target = bad
    monkeypatch.setitem(GRAPH, source, GRAPH[source] | {target})
    with pytest.raises(AssertionError):
        test_imports_go_down_the_layers()
    back = next(iter(GRAPH[source] - {target}), None)
    if back is not None:
        monkeypatch.setitem(GRAPH, back, GRAPH[back] | {source})
        assert _cycle() is not None


def test_the_command_line_starts_without_sympy_or_scipy():
    """``gapverify --version`` and ``--help`` build the parser only: sympy and scipy (a
    second of imports) are loaded by the commands that need them
    (docs/performance.md, "Start-up time")."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from gapverify.cli import build_parser\n"
            "build_parser().format_help()\n"
            "heavy = sorted(m for m in ('sympy', 'scipy', 'matplotlib') if m in sys.modules)\n"
            "assert not heavy, heavy\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_an_import_under_type_checking_is_an_arrow_too(tmp_path, monkeypatch):
    """An annotation-only import of a module above (the way two cycles once hid) is read."""
    source = ("from typing import TYPE_CHECKING\n"
              "if TYPE_CHECKING:\n"
              "    from gapverify.verification.running.suite import RunOptions\n")
    path = tmp_path / "probe.py"
    path.write_text(source)
    name = f"{V}.claims.probe"
    monkeypatch.setitem(MODULES, name, path)
    assert f"{V}.running.suite" in imports_of(name)
