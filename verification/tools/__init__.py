"""Tools built on running and judging: the power audit (:mod:`.audit`), false-failure
calibration (:mod:`.calibrate`), the statement snapshots (:mod:`.snapshot`), the generated
theory document (:mod:`.claimdocs`), the paper's depth figure (:mod:`.paper`) and the
normalization figure (:mod:`.normalization`)."""
