"""``python -m verification`` is ``gapverify``."""
from verification.cli import entry

entry()
