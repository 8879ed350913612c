"""Verification: theory against numerics, in layers that import only downwards.

* :mod:`~gapverify.verification.claims` -- the claim model (:mod:`.claims.model`), the
  input checks shared by the API and the command line (:mod:`.claims.inputs`) and the
  registry of claims by family (:mod:`.claims.registry`);
* :mod:`~gapverify.verification.judging` -- inference, checks judged on per-size means,
  a claim's verdict, power, exit codes;
* :mod:`~gapverify.verification.running` -- the suite, the task runner, executors, the
  SQLite store, provenance;
* :mod:`~gapverify.verification.tools` -- audit, calibrate, snapshot, the generated theory
  document, the paper's depth figure and the normalization figure;
* :mod:`~gapverify.api` -- the Python API (``gapverify.verify`` and friends);
* :mod:`~gapverify.cli` -- the command line, on top: nothing imports it.

Kept import-free (the command line's start-up does not pay for sympy or scipy).
"""
