"""A claim's one machine outcome from its checks' results: ``pass``, ``fail``,
``recorded`` (nothing asserted by design) or ``not verified`` with the most severe reason of
its predictions (lacks power > not assessed > outside domain);
:mod:`verification.judging.outcomes` gives each its word and exit code."""
from __future__ import annotations

from typing import Sequence

from gapverify.verification.claims.model import Claim
from gapverify.verification.judging.checks import CheckResult
from gapverify.verification.judging.outcomes import NOT_VERIFIED_REASONS, Outcome
from gapverify.verification.judging.power import parameter_blind_spots, power_text

__all__ = ["VERIFYING_STATUSES", "asserted_predictions", "claim_reason", "claim_verdict"]

#: Predictions of these statuses must be verified with power for a claim to be verified,
#: and see every wrong parameter value; an empirical law with an asserted check needs
#: power too (:func:`asserted_predictions`).
VERIFYING_STATUSES = ("theorem", "derived", "conjecture")


def asserted_predictions(claim: Claim) -> list:
    """The predictions a claim's verdict needs: every theorem, derived or conjecture
    prediction (one measured by recorded checks alone is not verified: nothing could
    reject it), and every empirical law with at least one asserted check. An empirical
    law whose checks are all recorded by design (``heavy_tail.edge``) is shown, never
    judged: a claim of such laws alone reads ``recorded``."""
    asserted_checks = {c.prediction for c in claim.checks if c.asserted}
    return [p for p in claim.predictions if p.asserted
            and (p.status in VERIFYING_STATUSES or p.name in asserted_checks)]


def _unverified_line(name: str, reason: str, detail: str) -> str:
    # "NAME REASON...": the form claim_reason reads back (prediction names have no blank)
    assert reason in NOT_VERIFIED_REASONS and " " not in name, (name, reason)
    return f"{name} {reason}{detail}"


def claim_reason(verdict: str, unverified: Sequence[str]) -> str:
    """Why a claim is not verified: the most severe reason of its unverified predictions
    (:data:`~verification.judging.outcomes.NOT_VERIFIED_REASONS`, last the most severe:
    lacks power > not assessed > outside domain), read from the ``unverified`` lines
    :func:`claim_verdict` writes; ``""`` for a claim that is not ``not verified``."""
    if verdict == Outcome.NOT_ASSESSED:  # a claim outcome of older results
        return Outcome.NOT_ASSESSED
    if verdict != Outcome.NOT_VERIFIED:
        return ""
    found = [r for line in unverified for r in NOT_VERIFIED_REASONS
             if line.partition(" ")[2].startswith(r)]
    return max(found, key=NOT_VERIFIED_REASONS.index) if found else Outcome.LACKS_POWER


def _unjudged_reason(checks: Sequence[CheckResult]) -> str:
    # a prediction none of whose checks was judged: outside the checks' domain at these
    # parameters, or not assessed where that domain is a missing optional dependency
    # (registry/models.py: "not assessed: torch not installed"); recorded alone: nothing
    # could reject it, no power
    outside = [c for c in checks if c.verdict == Outcome.OUTSIDE_DOMAIN]
    if not outside:
        return Outcome.LACKS_POWER
    if all(c.reason.startswith(Outcome.NOT_ASSESSED) for c in outside):
        return Outcome.NOT_ASSESSED
    return Outcome.OUTSIDE_DOMAIN


#: the outcomes of a check that judged its prediction (not assessed: too few sizes to
#: judge; outside its domain or recorded by design, a check did not judge it)
_JUDGED = (Outcome.PASS, Outcome.FAIL, Outcome.LACKS_POWER, Outcome.NOT_ASSESSED)


def claim_verdict(claim: Claim, checks: Sequence[CheckResult], T_max: int, *,
                  parameter_coverage: bool = True) -> tuple[Outcome, list[str], str]:
    """The claim's machine outcome from its checks (of one case or of all its cases):

    * ``fail`` if an asserted check failed;
    * ``not verified`` if an asserted prediction (:func:`asserted_predictions`: theorem,
      derived, conjecture, and empirical laws with an asserted check) has no check that
      passed with power (each of its judged checks must pass with power, at least one must
      be judged, and for a theorem, derived or conjecture every wrong parameter value that
      moves it must be seen at some case: :func:`parameter_blind_spots`;
      ``parameter_coverage=False`` leaves that to the audit's parameter variants); one line
      per such prediction, ``NAME REASON ...`` with REASON one of
      :data:`~verification.judging.outcomes.NOT_VERIFIED_REASONS` (:func:`claim_reason`
      picks the claim's);
    * ``recorded`` if the claim asserts no prediction (its checks are recorded by design);
    * ``pass`` otherwise.

    Also "k of n predictions verified with power"."""
    verdict = Outcome.FAIL if any(c.verdict == Outcome.FAIL for c in checks) else None
    needed = asserted_predictions(claim)
    unverified, verified = [], 0
    for p in needed:
        mine = [c for c in checks if c.prediction == p.name]
        judged = [c for c in mine if c.verdict in _JUDGED]
        weak = [c for c in judged if c.verdict == Outcome.LACKS_POWER]
        if not judged:
            why = "; ".join(sorted({c.reason for c in mine if c.reason})) or "no check measures it"
            reason = _unjudged_reason(mine)
            where = (" at these parameters" if reason == Outcome.OUTSIDE_DOMAIN else
                     f" at T <= {T_max}" if reason == Outcome.LACKS_POWER else "")
            unverified.append(_unverified_line(p.name, reason, f"{where}: not judged ({why})"))
        elif weak:
            too_weak = [c for c in weak if not c.power <= c.power_target]
            parts = []
            if too_weak:
                parts.append(f"power {', '.join(power_text(c.power) for c in too_weak)}, target "
                             f"{too_weak[0].power_target:.0%}")
            parts += [c.reason.rsplit("; ", 1)[-1].rsplit(" at T <=", 1)[0]
                      for c in weak if c not in too_weak]
            unverified.append(_unverified_line(p.name, Outcome.LACKS_POWER,
                                               f" at T <= {T_max} ({'; '.join(parts)})"))
        elif any(c.verdict == Outcome.NOT_ASSESSED for c in judged):
            why = "; ".join(sorted({c.reason for c in judged if c.verdict == Outcome.NOT_ASSESSED}))
            unverified.append(_unverified_line(p.name, Outcome.NOT_ASSESSED,
                                               f": {why or 'too few sizes'}"))
        elif (parameter_coverage and p.status in VERIFYING_STATUSES
              and (blind := parameter_blind_spots(judged))):
            unverified.append(_unverified_line(p.name, Outcome.LACKS_POWER, f" at T <= {T_max} (a "
                                               f"wrong parameter no case can see: {'; '.join(blind)})"))
        elif all(c.verdict == Outcome.PASS for c in judged):
            verified += 1
    summary = f"{verified} of {len(needed)} predictions verified with power"
    missing = [c for c in checks if c.verdict == Outcome.OUTSIDE_DOMAIN
               and c.reason.startswith(Outcome.NOT_ASSESSED)]
    if not needed and missing:
        # recorded by design, but nothing could be measured (a missing optional dependency):
        # not assessed, not "recorded"
        for name in dict.fromkeys(c.prediction for c in missing):
            unverified.append(_unverified_line(name, Outcome.NOT_ASSESSED, f": {missing[0].reason}"))
    if not needed:
        summary = "nothing asserted (recorded by design): " + summary
    if verdict is None:
        verdict = (Outcome.NOT_VERIFIED if unverified else Outcome.PASS if needed
                   else Outcome.RECORDED)
    return verdict, unverified, summary
