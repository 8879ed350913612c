"""What a run's JSON carries beside its numbers: provenance and the verdict words.

* :func:`provenance`: the git commit of the checkout (when there is one), the versions of
  gapverify, Python, numpy, scipy, sympy and mpmath, a UTC timestamp and
  :data:`RESULTS_SCHEMA`, the version of the results format.
* :func:`with_words`: the JSON's ``verdict`` of a claim and of each check is its word in
  the one table of :mod:`verification.judging.outcomes` (``verified``, ``recorded``,
  ``not verified: lacks power``, ``failed``, ...), the word the verdict table prints; the
  machine verdict the judging used (``pass``, ``fail``, ...) is kept as ``outcome``, and
  a claim's ``reason`` says why it is not verified. ``outcomes.exit_code`` of the claims'
  words is the run's exit code.
  Readers of older files (``verdict`` = ``pass``) go through
  :func:`reports.results.load_run`, which accepts both.
"""
from __future__ import annotations

import datetime as _dt
import platform
import subprocess
from pathlib import Path
from typing import Any, Mapping

__all__ = ["RESULTS_SCHEMA", "provenance", "package_version", "git_commit", "with_words",
           "normalise_claim"]

#: Version of the results JSON: 2 added ``provenance``, ``schema`` and ``outcome`` (the
#: machine verdict), and made ``verdict`` the table's word; a claim's ``reason`` (why it is
#: not verified) came later within schema 2, readers default it.
RESULTS_SCHEMA = 2


def with_words(claim: dict[str, Any]) -> dict[str, Any]:
    """``claim`` (a ``ClaimResult`` as a dict) with ``outcome`` = the machine verdict,
    ``reason`` = why it is not verified (one of
    :data:`~verification.judging.outcomes.NOT_VERIFIED_REASONS`, else ``""``) and
    ``verdict`` = its word in :mod:`verification.judging.outcomes`, for the claim and
    each of its checks (checks have no ``reason`` beyond their own text)."""
    from gapverify.verification.judging.outcomes import Outcome, check_word, claim_word
    from gapverify.verification.judging.verdict import claim_reason

    # plain words, not Outcome members: the results are plain data (JSON, YAML, a repr)
    claim = dict(claim)
    claim["outcome"] = str(claim["verdict"])
    # from the unverified lines, so that a claim merged over its cases reads its own
    claim["reason"] = str(claim_reason(claim["outcome"], claim.get("unverified") or []))
    claim["verdict"] = claim_word(claim["outcome"], str(claim.get("status", "")),
                                  claim["reason"] or Outcome.LACKS_POWER)
    checks = []
    for c in claim.get("checks", []):
        c = dict(c)
        c["outcome"] = str(c["verdict"])
        c["verdict"] = check_word(c["outcome"], str(c.get("status", "")))
        checks.append(c)
    claim["checks"] = checks
    return claim


def package_version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def git_commit(where: Path | None = None) -> dict[str, Any] | None:
    """``{"commit": SHA, "dirty": bool}`` of the checkout holding the code, ``None``
    outside a git checkout or without git."""
    where = where or Path(__file__).resolve().parent.parent
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True,
                             text=True, timeout=10)
        if sha.returncode != 0:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=where, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": sha.stdout.strip(), "dirty": bool(dirty.stdout.strip())}


def provenance(now: _dt.datetime | None = None) -> dict[str, Any]:
    """Where and with what a run was computed (see the module docstring)."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    git = git_commit()
    return {
        "schema": RESULTS_SCHEMA,
        "timestamp": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "git_commit": git["commit"] if git else None,
        "git_dirty": git["dirty"] if git else None,
        "versions": {name: package_version(name)
                     for name in ("gapverify", "numpy", "scipy", "sympy", "mpmath")},
        "python": platform.python_version(),
    }


def normalise_claim(claim: Mapping[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`with_words` for readers: ``verdict`` back to the machine
    outcome (a file of schema 1 has no ``outcome`` and is returned as it is), the word
    kept as ``verdict_word``."""
    claim = dict(claim)
    if "outcome" in claim:
        claim["verdict_word"], claim["verdict"] = claim["verdict"], claim["outcome"]
    checks = []
    for c in claim.get("checks", []) or []:
        c = dict(c)
        if "outcome" in c:
            c["verdict_word"], c["verdict"] = c["verdict"], c["outcome"]
        checks.append(c)
    if "checks" in claim:
        claim["checks"] = checks
    return claim
