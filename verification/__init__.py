"""Verification: the claim registry, the verifier (theory against numerics), the CLI and
the Python API (:mod:`verification.api`: ``verify``, ``predict``, ``statement``,
``describe``)."""
from verification.claims import Check, Claim, Prediction, Profile
from verification.registry import CLAIMS, get_claim
from verification.verdict import Variant, judge_claim
from verification.api import describe, predict, statement, verify

__all__ = ["CLAIMS", "get_claim", "Claim", "Check", "Prediction", "Profile", "Variant",
           "judge_claim", "verify", "predict", "statement", "describe"]
