"""``python -m gapverify`` is ``gapverify``."""
from gapverify.verification.cli import entry

entry()
