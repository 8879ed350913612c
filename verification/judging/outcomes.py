"""The verdict vocabulary: one table of words and exit codes, used by the terminal, the
results JSON, the LaTeX tables and the Python API alike.

A *claim* ends in one of :data:`CLAIM_VERDICTS`; a run's exit code is the most severe of
its claims' codes (:func:`exit_code`): 1 when a claim failed or is flaky, else 3 when one
is not verified, else 0. Claims whose checks are recorded by design (``recorded``) do not
keep a run from exit 0. A *check* ends in one of :data:`CHECK_VERDICTS`.

A run whose claim's own code misbehaves (an experiment that raises or returns no dict of
finite numbers with every statistic its checks read, a prediction that is not a finite
real at a case, a domain that raises) ends in no verdict at all: a :class:`ClaimError`,
one line naming the file and line, the claim, the case, the size and the replicate, and
exit code :data:`EXIT_CLAIM_ERROR` (4), neither "failed" (1) nor "not verified" (3): a
typo in a claim file is not a refutation. Every exit code is in :data:`EXIT_CODES`.

The judging's machine outcomes (:class:`Outcome`: ``pass``, ``fail``, ``not verified``
with a reason, ...) map onto these words through :func:`claim_word` and
:func:`check_word`; nothing else spells a verdict, and no other module compares an
outcome as a string: it compares :class:`Outcome` members.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_UNVERIFIED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_TERMINATED = 143  # 128 + SIGTERM
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: the reader of stdout went away
#: A claim's own code misbehaved during the run (:class:`ClaimError`): no verdict
EXIT_CLAIM_ERROR = 4

#: Every exit code of the command line with its meaning (README.md's exit-code table,
#: :func:`exit_code_table`, and ``gapverify --help``).
EXIT_CODES: tuple[tuple[str, str], ...] = (
    (f"{EXIT_OK}", "every claim verified, supported, reproduced or recorded"),
    (f"{EXIT_FAIL}", "some claim failed (or is flaky); `snapshot`: a statement changed; "
                     "`audit`: a wrong variant was not rejected"),
    (f"{EXIT_USAGE}", "bad usage or input; the message names the parameter and its allowed "
                      "range"),
    (f"{EXIT_UNVERIFIED}", "no claim failed, but some claim is not verified (outside domain, "
                           "not assessed or lacks power)"),
    (f"{EXIT_CLAIM_ERROR}", "claim error: a claim's own code misbehaved (an experiment raised or "
                            "returned no dict of finite numbers with every statistic its checks "
                            "read, a prediction is not a finite real at a case, a domain "
                            "raised); one line names the file and line, the claim, the case, "
                            "the size and the replicate; nothing is judged"),
    (f"{EXIT_INTERRUPTED}, {EXIT_TERMINATED}, {EXIT_BROKEN_PIPE}",
     "interrupted (SIGINT), terminated (SIGTERM), stdout closed early; finished work is kept"),
)


class ClaimError(Exception):
    """A claim's own code misbehaved during a run: not a verdict (exit code
    :data:`EXIT_CLAIM_ERROR`). ``where`` is ``FILE:LINE`` of the user's code, ``claim``
    the claim id, ``case`` its parameters, ``T`` and ``replicate`` the sample (when one is
    concerned); ``str()`` is the one line the command line prints. Picklable (a pool
    worker raises it), and :meth:`within` adds what the raiser did not know."""

    def __init__(self, message: str, where: str = "", claim: str = "",
                 case: dict | None = None, T: int | None = None,
                 replicate: int | None = None) -> None:
        super().__init__(message, where, claim, case, T, replicate)
        self.message, self.where, self.claim = message, where, claim
        self.case, self.T, self.replicate = case, T, replicate

    def within(self, **context) -> "ClaimError":
        """This error with ``context`` (``where``, ``claim``, ``case``, ``T``,
        ``replicate``) filled in where it is empty."""
        fields = dict(where=self.where, claim=self.claim, case=self.case, T=self.T,
                      replicate=self.replicate)
        fields.update({k: v for k, v in context.items()
                       if fields.get(k) in (None, "") and v is not None})
        return ClaimError(self.message, **fields)

    def __str__(self) -> str:
        parts = [f"claim {self.claim}" if self.claim else ""]
        if self.case:
            parts.append("case " + ", ".join(f"{k}={v:g}" if isinstance(v, (int, float))
                                             else f"{k}={v}" for k, v in self.case.items()))
        if self.T is not None:
            parts.append(f"T={self.T}")
        if self.replicate is not None:
            parts.append(f"replicate {self.replicate}")
        context = ", ".join(p for p in parts if p)
        head = ": ".join(p for p in (self.where, context) if p)
        return f"{head}: {self.message}" if head else self.message


class Outcome(str, Enum):
    """The judging's machine outcome of a check or a claim. A ``str`` subclass, so that the
    results JSON, the store and old results files keep the same words
    (``Outcome("lacks power") is Outcome.LACKS_POWER``; ``Outcome.PASS == "pass"``)."""

    PASS = "pass"
    FAIL = "fail"
    FLAKY = "flaky"  # a claim's failure that did not recur on a fresh root seed
    RECORDED = "recorded"
    NOT_VERIFIED = "not verified"  # a claim's, with a reason among the three below
    LACKS_POWER = "lacks power"
    OUTSIDE_DOMAIN = "outside domain"
    NOT_ASSESSED = "not assessed"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


@dataclass(frozen=True)
class VerdictWord:
    """A verdict as every output spells it, with its exit-code contribution."""

    word: str
    exit_code: int
    meaning: str


#: A claim's verdicts, in order of severity (last: most severe).
CLAIM_VERDICTS: tuple[VerdictWord, ...] = (
    VerdictWord("verified", EXIT_OK, "every theorem and derived prediction was judged and "
                "passed with power"),
    VerdictWord("supported", EXIT_OK, "as verified, for a claim that includes a conjecture: "
                "evidence, not a proof"),
    VerdictWord("reproduced", EXIT_OK, "an empirical law, reproduced with power"),
    VerdictWord("recorded", EXIT_OK, "nothing is asserted by design: the measurements are "
                "recorded and shown, never judged"),
    VerdictWord("not verified: outside domain", EXIT_UNVERIFIED, "nothing failed, but a "
                "prediction is outside the domain of its checks at these parameters or "
                "sizes"),
    VerdictWord("not verified: not assessed", EXIT_UNVERIFIED, "nothing failed, but a "
                "prediction could not be judged (too few sizes, or a missing optional "
                "dependency)"),
    VerdictWord("not verified: lacks power", EXIT_UNVERIFIED, "nothing failed, but a "
                "prediction was judged without power: a statement a few percent wrong "
                "would have passed too"),
    VerdictWord("flaky", EXIT_FAIL, "a check failed, and did not fail again when replayed on "
                "a fresh root seed"),
    VerdictWord("failed", EXIT_FAIL, "an asserted prediction was rejected by the samples"),
)

#: A check's verdicts (one prediction measured at one parameter case).
CHECK_VERDICTS: tuple[VerdictWord, ...] = (
    VerdictWord("verified", EXIT_OK, "passed with power (theorem or derived)"),
    VerdictWord("supported", EXIT_OK, "passed with power (conjecture)"),
    VerdictWord("reproduced", EXIT_OK, "passed with power (empirical)"),
    VerdictWord("recorded", EXIT_OK, "measured and shown, never asserted"),
    VerdictWord("outside domain", EXIT_UNVERIFIED, "not judged: the parameters, or the "
                "sizes (below the smallest its claim's profiles sample), are outside the "
                "domain of the check's finite-size model"),
    VerdictWord("not assessed", EXIT_UNVERIFIED, "not judged: too few sizes, or a missing "
                "optional dependency"),
    VerdictWord("lacks power", EXIT_UNVERIFIED, "passed, but without power"),
    VerdictWord("failed", EXIT_FAIL, "rejected by the samples"),
)

_CLAIMS = {v.word: v for v in CLAIM_VERDICTS}
_CHECKS = {v.word: v for v in CHECK_VERDICTS}
#: The word of a passing claim or check, by the weakest status of its predictions.
PASS_WORDS = {"theorem": "verified", "derived": "verified", "conjecture": "supported",
              "empirical": "reproduced"}
#: The reasons a claim is not verified, by the machine outcome of its weakest check.
NOT_VERIFIED_REASONS = (Outcome.OUTSIDE_DOMAIN, Outcome.NOT_ASSESSED, Outcome.LACKS_POWER)


def claim_word(outcome: str, status: str, reason: str = "lacks power") -> str:
    """The word for a claim's machine outcome (``pass``, ``fail``, ``flaky``,
    ``recorded``, ``not verified`` with ``reason`` one of :data:`NOT_VERIFIED_REASONS`,
    ``not assessed``)."""
    if outcome == Outcome.PASS:
        return PASS_WORDS[status]
    if outcome == Outcome.FAIL:
        return "failed"
    if outcome in (Outcome.FLAKY, Outcome.RECORDED):
        return str(outcome)
    if outcome == Outcome.NOT_ASSESSED:
        return "not verified: not assessed"
    if outcome == Outcome.NOT_VERIFIED:
        if reason not in NOT_VERIFIED_REASONS:
            raise ValueError(f"unknown reason {reason!r}; one of {NOT_VERIFIED_REASONS}")
        return f"not verified: {reason}"
    raise ValueError(f"unknown claim outcome {outcome!r}")


def check_word(outcome: str, status: str) -> str:
    """The word for a check's machine outcome (``pass``, ``fail``, ``lacks power``,
    ``outside domain``, ``recorded``, ``not assessed``)."""
    if outcome == Outcome.PASS:
        return PASS_WORDS[status]
    if outcome == Outcome.FAIL:
        return "failed"
    if outcome in _CHECKS:
        return str(outcome)
    raise ValueError(f"unknown check outcome {outcome!r}")


def claim_exit_code(word: str) -> int:
    """The exit-code contribution of a claim's verdict word."""
    return _CLAIMS[word].exit_code


def exit_code(words) -> int:
    """A run's exit code from its claims' verdict words: 1 if any failed or is flaky,
    else 3 if any is not verified, else 0 (an empty run is bad usage, not success)."""
    codes = [claim_exit_code(w) for w in words]
    if not codes:
        return EXIT_USAGE
    if EXIT_FAIL in codes:
        return EXIT_FAIL
    return EXIT_UNVERIFIED if EXIT_UNVERIFIED in codes else EXIT_OK


def markdown_table() -> str:
    """The claim and check words with their exit codes and meanings as two Markdown tables
    (README.md, "Reading a run", holds this text verbatim; a test keeps them equal)."""
    lines = ["| claim verdict | exit code | meaning |", "| --- | ---: | --- |"]
    lines += [f"| `{v.word}` | {v.exit_code} | {v.meaning} |" for v in CLAIM_VERDICTS]
    lines += ["", "| check verdict | meaning |", "| --- | --- |"]
    lines += [f"| `{v.word}` | {v.meaning} |" for v in CHECK_VERDICTS]
    return "\n".join(lines) + "\n"


def exit_code_table() -> str:
    """Every exit code with its meaning as a Markdown table (README.md, "Reading a run",
    holds this text verbatim; a test keeps them equal)."""
    lines = ["| exit code | meaning |", "| ---: | --- |"]
    lines += [f"| {code} | {meaning} |" for code, meaning in EXIT_CODES]
    return "\n".join(lines) + "\n"
