"""An example gapverify plug-in (see ``claims.py``)."""
