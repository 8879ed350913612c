"""What a run samples, beyond a claim's cases: an entry law (``--entries``) and an array
backend (``--backend``, ``--device``, ``--dtype``). Each adds keys to what an experiment is
given and what the store is keyed by (:func:`_sampling`), and each limits the claims a run
may name, with errors that name the parameter and the claims that take it."""
from __future__ import annotations

from typing import Mapping, Sequence

from gapverify.verification.claims.inputs import UsageError
from gapverify.verification.claims.model import Claim
from gapverify.verification.running.options import RunOptions, RunPlan, entry_law_of

__all__ = ["entry_law_of", "select_entry_claims", "entry_law_lines", "backend_keys",
           "backend_claim_ids", "backend_claims", "case_overrides"]


def case_overrides(opts: RunOptions, law) -> dict:
    """``--set`` overrides as a run's cases take them, checked against ``--entries`` (the
    one place a run's ``s2`` meets its entry law): ``gaussian-logits(S2)``/
    ``lognormal(S2)`` set ``s2 = S2`` (a different ``--set s2`` is bad input); a law
    other than softmax's (``law``) samples Z itself, so ``--set s2`` or ``mu`` is bad
    input too (its cases: :func:`_law_cases`)."""
    from gapverify.theory.entry_laws import parse_entry_law
    from gapverify.theory.parameters import ParameterError

    overrides = dict(opts.overrides)
    if law is not None:
        for name in ("s2", "mu"):
            if name in overrides:
                raise ParameterError(
                    f"parameter '--set {name}' sets the softmax logits, but --entries {law.spec} "
                    f"samples Z itself (kappa = {law.kappa:.6g}, from its moments); drop --set "
                    f"{name} or use --entries gaussian-logits")
        return overrides
    given = parse_entry_law(opts.entries)
    if given.s2 is not None:
        if "s2" in overrides and float(overrides["s2"]) != given.s2:
            raise ParameterError(f"parameter '--entries': {given.spec} sets s2 = {given.s2:g}, "
                                 f"but --set s2={overrides['s2']:g} differs; give one of them")
        overrides["s2"] = given.s2
    return overrides


def select_entry_claims(claims: Sequence[str], entries: str | None, named: bool) -> list[str]:
    """The claims a run with ``--entries`` judges: with a law other than softmax's, the
    claims that take entry laws (:data:`verification.claims.registry.markov.ENTRY_LAW_HYPOTHESES`);
    without claim names, those are selected; a named claim that takes none is an error
    (exit 2) naming it and the claims that do."""
    from gapverify.theory.parameters import ParameterError
    from gapverify.verification.claims.registry.markov import ENTRY_LAW_HYPOTHESES

    law = entry_law_of(entries)
    if law is None:
        return list(claims)
    takes = [c for c in claims if c in ENTRY_LAW_HYPOTHESES]
    if named and len(takes) < len(claims):
        others = [c for c in claims if c not in ENTRY_LAW_HYPOTHESES]
        raise ParameterError(
            f"parameter '--entries': claim(s) {', '.join(others)} take no entry law (their "
            f"experiments sample softmax logits through layers, heads or elementwise maps); "
            f"claims that take --entries: {', '.join(ENTRY_LAW_HYPOTHESES)}")
    return takes or list(ENTRY_LAW_HYPOTHESES)


def _law_cases(claim: Claim, profile: str, overrides: Mapping[str, float], law) -> list[dict]:
    """One case under a law other than softmax's: the profile's first case (``--set`` wins,
    checked by :func:`case_overrides`) with ``s2`` the law's equivalent logit variance
    ``log(1 + kappa^2)``, at which every prediction (a function of ``kappa`` alone) is
    evaluated."""
    first = claim.cases_for(profile, overrides)[0]
    return [claim.resolve({**{k: v for k, v in first.items() if k in claim.parameters},
                           "s2": law.s2_eff})]


def _sampling(values: Mapping[str, float], law, backend: Mapping[str, str] | None = None) -> dict:
    """What an experiment is given (and the store keyed by): the case, plus the law, plus
    the backend keys (none for numpy in float64)."""
    out = dict(values) if law is None else {**values, "entries": law.spec}
    return {**out, **(backend or {})}


def takes_backend(claim_id: str, profile: str) -> bool:
    """Whether ``claim_id`` samples on any array library at ``profile``: whether the
    record of the experiment it runs there names an array-API version
    (:attr:`~gapverify.numerics.experiment_record.Experiment.array_api`): ``markov.outliers``
    and ``width.stable_rank`` at every profile, and at ``long`` ``fix.spectrum`` too (the
    profile's ``markov.edge``)."""
    from gapverify.numerics.plugins import record
    from gapverify.verification.claims.registry import get_claim

    return bool(record(get_claim(claim_id).for_profile(profile).experiment).array_api)


def backend_claim_ids(profile: str) -> list[str]:
    """The default claims that take ``--backend`` at ``profile`` (:func:`takes_backend`)."""
    from gapverify.verification.claims.registry import default_claim_ids

    return [c for c in default_claim_ids() if takes_backend(c, profile)]


def backend_keys(opts: RunOptions) -> dict:
    """The backend's sampling keys of a run whose claims are named (empty for numpy in
    float64), with the run checked by :func:`backend_claims`, the one place the backend
    rules are (a :class:`~verification.claims.inputs.UsageError`, exit 2)."""
    from gapverify.numerics.backends import sampling_keys

    backend_claims(list(opts.claims), backend=opts.backend, device=opts.device,
                   dtype=opts.dtype, profile=opts.profile, entries=opts.entries, named=True)
    return sampling_keys(opts.backend, opts.device, opts.dtype)


def entry_law_lines(run: RunPlan) -> list[str]:
    """What a run with ``--entries`` prints under its verdicts: the law, its kappa and how
    it was computed, the equivalent s2, and every prediction whose status dropped."""
    from gapverify.verification.claims.registry.markov import entry_law_drops
    from gapverify.verification.claims.registry import get_claim

    law = run.law
    if law is None:
        return []
    lines = [f"Entry law {law.spec}: kappa = {law.kappa:.10g} (kappa^2 = {law.kappa2}; "
             f"{law.kappa_method}); predictions evaluated at s2_eff = log(1 + kappa^2) = "
             f"{law.s2_eff:.10g}; fourth moment {'finite' if law.fourth_moment else 'INFINITE'} "
             f"({law.fourth_moment_note}); density: {law.density_note}"]
    for claim in run.claims:
        for name, why in entry_law_drops(get_claim(claim.id), law).items():
            lines.append(f"  - {claim.id}: {name}: {why}")
    return lines


def backend_claims(claims: list[str], *, backend: str, device: str, dtype: str, profile: str,
                   entries: str | None, named: bool) -> list[str]:
    """``--backend/--device/--dtype`` and ``--profile gpu``: the library installed (else exit
    2 with the install command), the claims that take a backend (all of them when none is
    ``named``), the gpu profile only with a GPU library, never an entry law. The one
    check of the backend, shared by ``run``, :func:`gapverify.api.verify` and
    :func:`backend_keys`; bad input raises :class:`~verification.claims.inputs.UsageError`
    (exit 2)."""
    from gapverify.numerics.backends import BackendUnavailable, check_backend, sampling_keys

    # numpy on cuda is no default: refused (it would sample with numpy on the CPU, silently)
    default = not sampling_keys(backend, device, dtype) and device == "cpu"
    if profile == "gpu" and backend == "numpy":
        raise UsageError("parameter '--profile gpu': its sizes reach T = 65536 (a 32 GiB float64 "
                         "matrix per task, Lanczos passes over it); it runs with --backend torch "
                         "or cupy (--device cuda), not numpy")
    if default:
        return claims
    try:
        check_backend(backend, device, dtype)
    except (BackendUnavailable, ValueError) as exc:
        raise UsageError(str(exc)) from None
    if entries is not None:
        raise UsageError("parameter '--backend': --entries laws are sampled with numpy in float64 "
                         "only")
    if not named:
        return [c for c in claims if takes_backend(c, profile)]
    others = [c for c in claims if not takes_backend(c, profile)]
    if others:
        raise UsageError(f"parameter '--backend': claim(s) {', '.join(others)} sample with numpy "
                         f"in float64 only; claims that take --backend, --device, --dtype: "
                         f"{', '.join(backend_claim_ids(profile))}")
    return claims
