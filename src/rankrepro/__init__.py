"""rankrepro: a reproducible replication of five online ranking papers."""

__version__ = "0.1.0"


from . import numba_cache as _numba_cache

_numba_cache.ensure()  # a checkout this user cannot write: numba's cache in a folder of the user's own
