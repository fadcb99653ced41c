"""``python -m rankrepro.cli``."""

import sys

from . import main

sys.exit(main())
