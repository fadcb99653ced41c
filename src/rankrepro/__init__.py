"""rankrepro: a reproducible replication of five online ranking papers."""

__version__ = "0.1.0"

from . import fold_metrics  # noqa: E402,F401 - the LETOR seeds protocol's by-fold metric names (see the module)
