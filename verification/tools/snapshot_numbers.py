r"""The numbers a snapshot keeps (:mod:`gapverify.verification.tools.snapshot`).

A statement's sympy expression can stay the same while the number it gives moves (a law
object scaled, an entry law's ``kappa`` changed); so beside the statement the snapshot
keeps, per claim:

* ``reference_points``: every prediction at the defaults and with one parameter moved to
  :data:`REFERENCE_VALUES`, as ``sympy.N(expr, 30)`` (:func:`canonical_number`);
* ``profile_cases``: every prediction at each case a profile samples, and there the
  number of every rate stated by a rule (:class:`~verification.claims.model.RateRule`:
  its text alone, kept with the checks, would not show a changed value);
* ``law_quantiles``: for every distance check, the law it judges with
  (``check.cdf(params, 1)``) at the reference points and the profile cases, as its
  quantiles at :data:`QUANTILE_LEVELS` (Brent's method on the CDF);
* ``entry_laws``: for the claims that take ``--entries``, each of
  :data:`REFERENCE_ENTRY_LAWS` with ``kappa``, ``kappa^2``, ``s2_eff = log(1 + kappa^2)``,
  its hypotheses, the predictions whose status drops and the predictions at ``s2_eff``.

Sympy values are compared to a relative :data:`REL_TOL` (``1e-25``), values computed in
floating point to :data:`FLOAT_REL_TOL` (``1e-9``), both by :func:`close`.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Mapping

import mpmath
import numpy as np
import sympy as sp

from gapverify.verification.claims.model import Claim, RateRule

__all__ = ["DIGITS", "REL_TOL", "FLOAT_REL_TOL", "REFERENCE_VALUES", "QUANTILE_LEVELS",
           "REFERENCE_ENTRY_LAWS", "canonical_number", "reference_points", "close",
           "profile_cases", "law_quantiles", "entry_laws"]

DIGITS = 30
REL_TOL = Decimal(10) ** -(DIGITS - 5)

EPS = float(np.finfo(float).eps)

#: The one non-default value of each parameter at which every claim's predictions are kept.
REFERENCE_VALUES: dict[str, float] = {"s2": 1.0, "mu": 0.0, "gamma": 0.5, "depth": 2,
                                      "sigma_V": 2.0, "d_qk": 8}
#: Levels at which the law of every distance check is kept (its quantiles).
QUANTILE_LEVELS = (0.1, 0.25, 0.5, 0.75, 0.9)
#: Entry laws whose ``kappa`` (and the predictions at their ``s2_eff``) every claim that
#: takes ``--entries`` keeps: the named laws, a bounded, a gamma, a log-normal and a
#: Pareto law without a fourth moment (its predictions drop to conjecture).
REFERENCE_ENTRY_LAWS = ("exponential", "gaussian-logits(0.5)", "scipy:gamma(2)",
                        "scipy:uniform", "scipy:lognorm(0.5)", "scipy:pareto(3.5)")
#: Numbers computed in floating point (quantiles by root finding on a float64 CDF, scipy
#: moments, s2_eff): kept to 16 digits, equal to a relative 1e-9. The root is found to
#: 4 eps; a CDF's round-off of a few eps moves it by eps/(x pdf(x)) < 1e-13 at these
#: levels; a real change (a law scaled by 1.05, kappa by 1.04) is 1e7 times larger.
FLOAT_REL_TOL = Decimal(10) ** -9


def canonical_number(expr: sp.Expr) -> str:
    """``N(expr, 30)`` as ``d.ddd...e+X`` (a complex value as ``re + im j``)."""
    value = sp.N(expr, DIGITS)
    if not value.is_number:
        return "not a number: " + sp.sstr(value)
    re, im = value.as_real_imag()
    text = _scientific(re)
    return text if im.is_zero else f"{text} + {_scientific(im)}j"


def _scientific(x: sp.Expr) -> str:
    x = sp.Float(x, DIGITS)
    if x.is_zero:  # not ``x == 0``: sympy >= 1.13 has Float(0) != 0
        return "0"
    raw = mpmath.libmp.to_str(x._mpf_, DIGITS, strip_zeros=False)
    return f"{Decimal(raw):.{DIGITS - 1}e}"


def _reference_value(name: str, default: float) -> float:
    from gapverify.theory.parameters import PARAMETERS

    if name in REFERENCE_VALUES:
        return REFERENCE_VALUES[name]
    low, high = PARAMETERS[name].typical  # a parameter added after this module
    other = high if high != default else low
    return int(other) if PARAMETERS[name].integer else other


def reference_points(claim: Claim) -> list[tuple[str, dict]]:
    """``(label, parameter values)``: the defaults, then one parameter moved at a time."""
    base = claim.resolve({})
    points = [("defaults", base)]
    for name in claim.parameters:
        if name in claim.fixed_parameters:
            continue
        value = _reference_value(name, base[name])
        if value != base[name]:
            points.append((f"{name}={value:g}", claim.resolve({name: value})))
    return points


def _predictions_at(claim: Claim, values: Mapping[str, float]) -> dict[str, str]:
    try:
        exact = claim.predict(values)
    except Exception as exc:  # noqa: BLE001 - recorded: a formula that stops failing is a change
        return {p.name: f"error: {type(exc).__name__}" for p in claim.predictions}
    return {name: canonical_number(expr) for name, expr in exact.items()}


def _check_key(check, seen: dict) -> str:
    key = check.label
    seen[key] = seen.get(key, 0) + 1
    return key if seen[key] == 1 else f"{key}#{seen[key]}"


def _checks_by_label(claim: Claim) -> list[tuple[str, object]]:
    seen: dict[str, int] = {}
    return [(_check_key(c, seen), c) for c in claim.checks]



def _json_number(value: float) -> float | int:
    return int(value) if isinstance(value, int) else float(value)



def _float_text(value: float) -> str:
    """A float in one fixed scientific format, 16 significant digits."""
    return f"{float(value):.15e}"


def _parameters(values: Mapping[str, float | int]) -> dict:
    return {k: _json_number(v) for k, v in values.items()}


def profile_cases(claim: Claim) -> list[dict]:
    """The predictions at every case a profile samples, each case once with its profiles."""
    out: list[dict] = []
    for profile in claim.profiles:
        for values in claim.cases_for(profile):
            same = [e for e in out if e["parameters"] == _parameters(values)]
            if same:
                same[0]["profiles"].append(profile)
            else:
                entry = {"parameters": _parameters(values), "profiles": [profile],
                         "values": _predictions_at(claim, values)}
                rates = _rule_rates_at(claim, values)
                if rates:
                    entry["rates"] = rates
                out.append(entry)
    return out


def _rule_rates_at(claim: Claim, values: Mapping[str, float]) -> dict[str, str]:
    """The number of each rate a rule states, at ``values``, by check (none: ``{}``)."""
    out = {}
    for key, check in _checks_by_label(claim):
        if isinstance(check.rate, RateRule):
            try:
                out[key] = canonical_number(sp.sympify(check.rate.fn(values)))
            except Exception as exc:  # noqa: BLE001 - recorded: a rule that stops failing is a change
                out[key] = f"error: {type(exc).__name__}"
    return out


#: the sizes at which a check's known finite-size term (``Check.correction``) is recorded
CORRECTION_SIZES = (128, 1024)


def finite_size_terms(claim: Claim) -> list[dict]:
    """Each check's known finite-size term ``E x_T - L`` (``Check.correction``, subtracted
    before the fit) at every profile case, at ``T`` = :data:`CORRECTION_SIZES`: a term
    scaled or mis-signed moves the verdict without touching a prediction."""
    checks = [(key, c) for key, c in _checks_by_label(claim) if c.correction is not None]
    out: list[dict] = []
    for case in profile_cases(claim) if checks else ():
        values = case["parameters"]
        terms: dict[str, object] = {}
        for key, check in checks:
            try:
                got = np.asarray(check.correction(values, np.array(CORRECTION_SIZES)), dtype=float)
                terms[key] = {f"T={T}": _float_text(v) for T, v in zip(CORRECTION_SIZES, got)}
            except Exception as exc:  # noqa: BLE001 - recorded: a term that stops failing is a change
                terms[key] = f"error: {type(exc).__name__}"
        out.append({"parameters": values, "terms": terms})
    return out


def _quantiles(cdf) -> dict[str, str]:
    """Quantiles of a law given by its CDF (the callable a distance check judges with),
    at :data:`QUANTILE_LEVELS`: the root of ``F(x) = q`` by Brent's method, bracketed
    by doubling from ``[0, 1]``."""
    from scipy.optimize import brentq

    def F(t: float) -> float:
        return float(np.asarray(cdf(np.asarray([t], dtype=float)), dtype=float)[0])

    out = {}
    for q in QUANTILE_LEVELS:
        lo, hi = 0.0, 1.0
        for _ in range(1100):  # F(lo) <= q <= F(hi), within the float range
            if F(lo) <= q:
                break
            lo = 2 * lo - 1
        for _ in range(1100):
            if F(hi) >= q:
                break
            hi *= 2
        x = brentq(lambda t: F(t) - q, lo, hi, xtol=1e-300, rtol=4 * EPS, maxiter=500)
        out[f"{q:g}"] = _float_text(x)
    return out


def law_quantiles(claim: Claim) -> list[dict]:
    """Each distance check's law (``check.cdf(params, 1)``, the object it judges with) at
    the reference points and the profiles' cases, as its quantiles."""
    laws = [(label, c) for label, c in _checks_by_label(claim) if c.cdf is not None]
    if not laws:
        return []
    points = [values for _, values in reference_points(claim)]
    points += [v for profile in claim.profiles for v in claim.cases_for(profile)]
    out, seen = [], []
    for values in points:
        if values in seen:
            continue
        seen.append(values)
        for label, check in laws:
            out.append({"check": label, "parameters": _parameters(values),
                        "quantiles": _quantiles(check.cdf(values, 1.0))})
    return out


def entry_laws(claim: Claim) -> dict | None:
    """For a claim that takes ``--entries``: each of :data:`REFERENCE_ENTRY_LAWS` with its
    ``kappa``, ``kappa^2``, ``s2_eff``, hypotheses, the predictions whose status drops, and
    the predictions at ``s2 = s2_eff`` (where a run under that law evaluates them)."""
    from gapverify.theory.entry_laws import parse_entry_law
    from gapverify.verification.claims.registry.markov import (
        ENTRY_LAW_HYPOTHESES, entry_law_drops,
    )

    if claim.id not in ENTRY_LAW_HYPOTHESES:
        return None
    out = {}
    for spec in REFERENCE_ENTRY_LAWS:
        law = parse_entry_law(spec)
        values = claim.resolve({"s2": law.s2_eff})
        out[law.spec] = {"kappa": _float_text(law.kappa), "kappa2": canonical_number(law.kappa2),
                         "s2_eff": _float_text(law.s2_eff), "kappa_method": law.kappa_method,
                         "fourth_moment": law.fourth_moment,
                         "bounded_density": law.bounded_density,
                         "dropped": sorted(entry_law_drops(claim, law)),
                         "values": _predictions_at(claim, values)}
    return out



def _numbers_close(old: str, new: str, tol: Decimal = REL_TOL) -> bool:
    if old == new:
        return True
    try:
        a, b = Decimal(old), Decimal(new)
    except ArithmeticError:
        return False  # "error: ...", complex or non-numbers: text must match
    return abs(a - b) <= tol * max(abs(a), abs(b), Decimal(1) / 10**5)


#: The snapshot's parts holding numbers as text, and the relative tolerance of each: 30-digit sympy
#: values (:data:`REL_TOL`), or float computations (:data:`FLOAT_REL_TOL`).
NUMERIC_PARTS = {"reference_points": REL_TOL, "profile_cases": REL_TOL,
                  "law_quantiles": FLOAT_REL_TOL, "entry_laws": FLOAT_REL_TOL,
                  "finite_size_terms": FLOAT_REL_TOL}


def close(old: object, new: object, tol: Decimal) -> bool:
    """Equal JSON trees, number strings equal to ``tol`` (everything else exactly)."""
    if isinstance(old, dict) and isinstance(new, dict):
        return old.keys() == new.keys() and all(close(old[k], new[k], tol) for k in old)
    if isinstance(old, list) and isinstance(new, list):
        return len(old) == len(new) and all(close(a, b, tol) for a, b in zip(old, new))
    if isinstance(old, str) and isinstance(new, str):
        return _numbers_close(old, new, tol)
    return type(old) is type(new) and old == new
