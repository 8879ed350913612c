r"""Which result of the paper each claim checks, and where its derived predictions are
derived: one table, applied to every claim when it is registered (:func:`annotate`).

Numbers are those the project could confirm: the paper's Theorem 2 (the random Markov
matrix law, Bordenave-Caputo-Chafai 2012 Theorem 1.1) and Proposition 1 (key-query
attention) are named so by ``THEORY.md`` and the authors' rebuttal; the rebuttal numbers
other results (Propositions 3-6, Figures 1c, 3, 4, 9, 12) in the version it answers,
which need not be the numbering of arXiv:2410.07799v3, so those are named by what they
state, without a number. Claims that extend the paper say "beyond the paper".
"""
from __future__ import annotations

import dataclasses

from gapverify.verification.claims.model import Claim

__all__ = ["BEYOND", "PAPER_RESULTS", "DERIVED_IN", "annotate"]

#: The value of ``paper_result`` for this project's extensions.
BEYOND = "beyond the paper"

_BCC = "Bordenave-Caputo-Chafai 2012"
PAPER_RESULTS: dict[str, str] = {
    "softmax.kappa": "the paper's softmax Markov model: kappa = sigma/m of the entries "
                     "(its model section; no numbered result)",
    "markov.singular_law": f"{_BCC} Theorem 1.1 (the paper's Theorem 2)",
    "markov.circular_law": f"{_BCC}, circular law theorem for random Markov matrices "
                           "(their main theorem; number not confirmed here)",
    "markov.outliers": f"the paper's spectral gap, from {_BCC} (s_1 -> 1, sqrt(T) s_2 -> "
                       "2 kappa; number not confirmed here); sqrt(T)|lambda_2| -> kappa "
                       "is open",
    "fix.spectrum": "the paper's fix A - 11^T/T (removing the outlier; number not "
                    "confirmed here)",
    "width.stable_rank": "the paper's proposition on rank collapse in width (number not "
                         "confirmed here); the fix's limits sr/T beyond the paper",
    "depth.stable_rank": "the paper's proposition on rank collapse in depth (number not "
                         "confirmed here); the fix's free-probability law beyond the paper",
    "depth.frobenius": "the paper's proposition on rank collapse in depth, Frobenius norms "
                       "of A_l...A_1 (number not confirmed here)",
    "gradient.value_frobenius": "the paper's proposition on exploding gradients of the "
                                "value matrices (number not confirmed here)",
    "gradient.input_jacobian": "the paper's proposition on the input Jacobian with and "
                               "without the fix (number not confirmed here)",
    "kq.attention": "the paper's Proposition 1 (key-query attention at initialisation) "
                    "and its remarks",
    "variants.relu": f"{BEYOND} (the paper shows ReLU attention's spectrum in a figure)",
    "variants.sigmoid": f"{BEYOND} (the paper shows sigmoid attention's spectrum in a figure)",
    "variants.linear": f"{BEYOND} (the paper shows linear attention's spectrum: no gap)",
    "causal.cesaro": BEYOND,
    "causal.depth": BEYOND,
    "heavy_tail.edge": BEYOND,
    "variants.normalization": f"{BEYOND} (the paper's experiments with LayerNorm and skip "
                              "connections, measured here)",
    "models.bert": "the paper's Proposition 1 (key-query attention at initialisation) in "
                   "BERT-base's first layer (iso_std_frob_first); the rest beyond the paper "
                   "(its figure of untrained real-world models)",
    "models.roberta": "the paper's Proposition 1 (key-query attention at initialisation) in "
                      "RoBERTa-base's first layer (iso_std_frob_first); the rest beyond the "
                      "paper (its figure of untrained real-world models)",
    "models.gpt2": f"{BEYOND} (causal attention, causal.cesaro, in GPT-2's first layer; the "
                   "paper's figure of untrained real-world models)",
    "training.fix": f"{BEYOND} (the paper's training experiment with the fix)",
}

_DOCS = "docs/claims.md"
#: Where each claim's derived predictions are derived (this project: the module that
#: computes them, whose derivation docs/claims.md carries).
DERIVED_IN: dict[str, str] = {
    "softmax.kappa": f"{_DOCS} (softmax.kappa): theory/softmax.py, sympy moments of e^M",
    "fix.spectrum": f"{_DOCS} (fix.spectrum): theory/markov.py, exact algebra in sympy; "
                    "the law and edge by interlacing from BCC 2012",
    "width.stable_rank": f"{_DOCS} (family layers): theory/layers.py, free probability",
    "depth.stable_rank": f"{_DOCS} (family layers): theory/layers.py, free probability",
    "depth.frobenius": f"{_DOCS} (family layers): theory/layers.py, frob_A and "
                       "frob_Aperp_scaled",
    "gradient.value_frobenius": f"{_DOCS} (family gradients): theory/layers.py, the "
                                "Kronecker identity of the value gradient",
    "gradient.input_jacobian": f"{_DOCS} (family gradients): theory/layers.py, "
                               "input_jacobian_sq_norm",
    "kq.attention": f"{_DOCS} (kq.attention): orthogonal invariance and the logit moments "
                    "(theory/softmax.py)",
    "variants.relu": f"{_DOCS} (family variants): theory/elementwise.py",
    "variants.sigmoid": f"{_DOCS} (family variants): theory/elementwise.py",
    "variants.linear": f"{_DOCS} (family variants): theory/elementwise.py",
    "models.bert": f"{_DOCS} (family models): theory/real_models.py, the head's "
                   "conditional logit law",
    "models.roberta": f"{_DOCS} (family models): theory/real_models.py, the head's "
                      "conditional logit law",
    "models.gpt2": f"{_DOCS} (family models): theory/real_models.py, second-order "
                   "perturbation of s_1(C_T)",
    "causal.cesaro": f"{_DOCS} (family causal): theory/causal.py",
}


def annotate(claim: Claim) -> Claim:
    """``claim`` with its ``paper_result`` and ``derived_in`` from the tables (values the
    claim sets itself win)."""
    return dataclasses.replace(
        claim, paper_result=claim.paper_result or PAPER_RESULTS.get(claim.id, ""),
        derived_in=claim.derived_in or DERIVED_IN.get(claim.id, ""))
