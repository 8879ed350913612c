"""House rules read off the source (docs/architecture.md): no function over 80 lines, and
no outcome word compared as a string outside the outcome module (a verdict is compared
as an :class:`~gapverify.verification.judging.outcomes.Outcome` member, so a renamed word
cannot silently stop matching)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gapverify.verification.judging.outcomes import Outcome

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("gapverify", "theory", "numerics", "verification", "reports", "peers")
OUTCOME_MODULE = ROOT / "verification" / "judging" / "outcomes.py"
MAX_FUNCTION_LINES = 80
#: the machine outcomes, and the words a claim's "not verified" carries
WORDS = {o.value for o in Outcome} | {f"not verified: {o.value}" for o in Outcome}


def _sources() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py"))


def long_functions(tree: ast.AST) -> list[str]:
    return [f"{node.name} ({node.end_lineno - node.lineno + 1} lines, line {node.lineno})"
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]


def _words(node: ast.AST) -> list[str]:
    """The outcome words a comparison operand spells: a string, or a tuple/list/set of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value] if node.value in WORDS else []
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [w for e in node.elts for w in _words(e)]
    return []


def outcome_strings(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for operand in [node.left, *node.comparators]:
                found += [f"line {node.lineno}: {w!r}" for w in _words(operand)]
        elif isinstance(node, ast.match_case) and isinstance(node.pattern, ast.MatchValue):
            found += [f"line {node.pattern.lineno}: {w!r}" for w in _words(node.pattern.value)]
    return found


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_function_is_over_80_lines(path):
    found = long_functions(ast.parse(path.read_text()))
    assert not found, found


@pytest.mark.parametrize("path", [p for p in _sources() if p != OUTCOME_MODULE],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_no_outcome_word_is_compared_as_a_string(path):
    found = outcome_strings(ast.parse(path.read_text()))
    assert not found, found


def test_the_rules_see_a_long_function_and_a_compared_word():
    long = "def f():\n" + "    x = 1\n" * MAX_FUNCTION_LINES
    assert long_functions(ast.parse(long))
    assert outcome_strings(ast.parse("ok = verdict == 'lacks power'"))
    assert outcome_strings(ast.parse("ok = verdict in ('pass', 'fail')"))
    assert not outcome_strings(ast.parse("ok = verdict == Outcome.PASS"))
