"""The peers' theorems beside the paper's, written through the public claim API only.

Each module is a claim file (``from gapverify import Check, Claim, Prediction, profiles``)
with a ``CLAIMS`` list, installed as ``gapverify.peers`` and registered through the
entry-point group ``gapverify.claims``:

* :mod:`gapverify.peers.entropy` -- ``peers.entropy``: the entropy of a softmax row,
  ``H - log T -> -s2/2``; Zhai et al.'s lower bound (ICML 2023, Theorem 3.1); the REM
  condensation at ``s2 ~ 2 log T``;
* :mod:`gapverify.peers.collapsed_gradients` -- ``peers.collapsed_gradients``: Noci et
  al.'s vanishing query/key gradients under rank collapse (NeurIPS 2022);
* :mod:`gapverify.peers.kedia_attention` -- ``peers.kedia_attention``: Kedia et al.'s
  closed form for the output variance of single-head attention (ICML 2024).
* :mod:`gapverify.peers.kq_spectrum` -- ``peers.kq_spectrum``: the spectrum of key-query
  attention is not the i.i.d. model's (Hayase, Collins, Karakida 2025);
* :mod:`gapverify.peers.cubic_collapse` -- ``peers.cubic_collapse``: near collapse, one
  pure attention layer maps the residual cubically (Dong, Cordonnier, Loukas, ICML 2021);
* :mod:`gapverify.peers.token_clustering` -- ``peers.token_clustering``: tokens cluster
  along an ODE in high dimension (Geshkovski, Letrouit, Polyanskiy, Rigollet);
* :mod:`gapverify.peers.attention_kernel` -- ``peers.attention_kernel``: the
  infinite-width attention kernel (Hron, Bahri, Sohl-Dickstein, Novak, ICML 2020).

``docs/peers.md`` states each claim, its source, derivation, status and measured verdict.
"""
