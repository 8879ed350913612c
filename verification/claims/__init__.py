"""The claim model (:mod:`.model`: :class:`Claim`, :class:`Prediction`, :class:`Check`,
:class:`Profile`), the input checks shared by the Python API and the command line
(:mod:`.inputs`) and the registry of claims by family (:mod:`.registry`)."""
