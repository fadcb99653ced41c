"""rankrepro: a reproducible replication of five online ranking papers."""

__version__ = "0.1.0"

