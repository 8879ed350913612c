"""``python -m gapverify`` is ``gapverify``."""
from gapverify.cli import entry

entry()
