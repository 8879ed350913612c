"""gapverify: the random-matrix theory of softmax attention at initialisation, encoded
symbolically and verified against sampled matrices (Mind the Gap, Naderi, Nait Saada,
Tanner, ICML 2025, arXiv:2410.07799).

The public API (stable)::

    from gapverify import verify, predict, statement, describe

* :func:`predict` -- a claim's predictions at parameters, as floats;
* :func:`statement` -- its statement as sympy equations;
* :func:`describe` -- parameters, predictions, checks, rates and profiles (plain data);
* :func:`verify` -- sample and judge claims, as ``gapverify run`` does: ids, or
  :class:`Claim` objects written in a notebook cell, and ``claims_from=`` claim files
  (``--claims-from``), both registered for that run only; its :class:`Run` reads as a
  line per claim (``repr``) and, in a notebook, as a table of claims, checks and verdicts;
* ``__version__`` -- the installed distribution's version (package metadata);
* :func:`load_claims` -- register the claims of claim files (``--claims-from``), which
  ``verify``, ``predict`` and the rest then take like built-in ones;
* the claim model, to write claims of your own (:mod:`gapverify.verification.claims.authoring`,
  ``docs/writing-a-claim.md``): :class:`Claim`, :class:`Prediction`, :class:`Check`,
  :class:`Profile`, :class:`Parameter`, :class:`RateRule`, :func:`profiles`,
  :class:`FiniteSizeModel` and the ready model families of ``Check(models=...)``
  (:data:`UNBIASED`, :data:`ONE_OVER_T`, :data:`ONE_OVER_T_SERIES`,
  :data:`ONE_OVER_LOG_T`): the built-in claims are written with these same names;
* the registry :data:`CLAIMS` (id -> claim) and :func:`get_claim`, which load the claim
  files of ``$GAPVERIFY_CLAIMS`` and the installed plug-ins on their first use.

The subpackages: :mod:`gapverify.theory` (sympy/mpmath: what is true),
:mod:`gapverify.numerics` (numpy/scipy: what is sampled and measured),
:mod:`gapverify.verification` (claims, judging, running, tools and the command line) and
:mod:`gapverify.reports` (LaTeX tables and figures). Names are imported on first use, so
``gapverify --version`` loads neither sympy nor scipy.
"""
from __future__ import annotations

import importlib

_V = "gapverify.verification"
_EXPORTS = {
    "verify": "gapverify.api", "predict": "gapverify.api", "statement": "gapverify.api",
    "describe": "gapverify.api", "Run": "gapverify.api", "ClaimVerdict": "gapverify.api",
    "CheckVerdict": "gapverify.api",
    "Claim": f"{_V}.claims.authoring", "Check": f"{_V}.claims.authoring",
    "Prediction": f"{_V}.claims.authoring", "Profile": f"{_V}.claims.authoring",
    "Parameter": f"{_V}.claims.authoring", "PARAMETERS": f"{_V}.claims.authoring",
    "profiles": f"{_V}.claims.authoring", "geometric_sizes": f"{_V}.claims.authoring",
    "FiniteSizeModel": f"{_V}.claims.authoring", "UNBIASED": f"{_V}.claims.authoring",
    "ONE_OVER_T": f"{_V}.claims.authoring", "ONE_OVER_T_SERIES": f"{_V}.claims.authoring",
    "ONE_OVER_LOG_T": f"{_V}.claims.authoring", "POWER_TARGETS": f"{_V}.claims.authoring",
    "RateRule": f"{_V}.claims.authoring",
    "CLAIMS": f"{_V}.claims.registry", "get_claim": f"{_V}.claims.registry",
    "UsageError": f"{_V}.claims.inputs",
    "load_claims": f"{_V}.claims.registry",
}
__all__ = list(_EXPORTS)


_RENAMED = {"load_claims": "load_claim_files"}  # public name -> the registry's


def _version() -> str:
    """The installed distribution's version (``importlib.metadata``), as ``gapverify
    --version`` says it; ``0+unknown`` when gapverify runs from a checkout not installed."""
    from gapverify.verification.running.output import package_version

    return package_version("gapverify") or "0+unknown"


def __getattr__(name: str):
    if name == "__version__":
        globals()[name] = _version()
        return globals()[name]
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), _RENAMED.get(name, name))
        globals()[name] = value
        return value
    raise AttributeError(f"module 'gapverify' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | {"__version__"})
