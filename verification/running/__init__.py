"""Running: what a run samples and judges (:mod:`.suite`, :mod:`.sampling_inputs`), tasks
and random streams (:mod:`.runner`), local and Dask executors (:mod:`.executors`), the
SQLite store (:mod:`.store`, defaults in :mod:`.defaults`) and the results' provenance
(:mod:`.output`)."""
