"""Every metric name the package knows.  :data:`rankrepro.metrics.METRICS` lists the papers'
metrics; two modules register more into it, kept apart because :mod:`rankrepro.metrics` is in
every cell's code fingerprint: :mod:`rankrepro.fold_metrics` (the LETOR seeds' by-fold values)
and :mod:`rankrepro.ordinal_metrics` (AMAE and quadratic weighted kappa).  Code that reads
``METRICS`` outside a trial (configs, records, the report) imports this module first."""

from __future__ import annotations

from . import fold_metrics, ordinal_metrics  # noqa: F401 - they register their names on import
from .metrics import METRICS  # noqa: F401

__all__ = ["METRICS"]
