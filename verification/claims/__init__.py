"""The claim model (:mod:`.model`: :class:`Claim`, :class:`Prediction`, :class:`Check`,
:class:`Profile`), the public API for writing claims (:mod:`.authoring`, which the built-in
claims use too), the input checks shared by the Python API and the command line
(:mod:`.inputs`), the loader of claim files and plug-ins (:mod:`.loading`) and the
registry of claims by family (:mod:`.registry`: the :class:`~.registry.core.Registry`
object :data:`~.registry.REGISTRY`)."""
