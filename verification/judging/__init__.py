"""Judging: confidence intervals and finite-size models (:mod:`.inference`), one check
judged on its per-size means (:mod:`.checks`), a claim's verdict (:mod:`.verdict`), power
and wrong variants (:mod:`.power`), exit codes (:mod:`.outcomes`)."""
