"""``python -m verification`` is ``gapverify``."""
import sys

from verification.cli import main

sys.exit(main())
