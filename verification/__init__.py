"""Verification: the claim registry, the verifier (theory against numerics) and the CLI."""
from verification.claims import Check, Claim, Prediction, Profile
from verification.registry import CLAIMS, get_claim
from verification.verdict import Variant, judge_claim

__all__ = ["CLAIMS", "get_claim", "Claim", "Check", "Prediction", "Profile", "Variant",
           "judge_claim"]
