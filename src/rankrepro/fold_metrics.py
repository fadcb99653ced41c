"""The by-fold metrics of the LETOR seeds protocol (:mod:`rankrepro.protocols.letor_seeds`):
``fold_<metric>`` holds one fold's value of a scalar metric (round = the fold, 1..5) beside
the trial's five-fold mean.  Registered into :data:`rankrepro.metrics.METRICS` from here
(imported by the package) rather than listed in :mod:`rankrepro.metrics`: that module is in
every cell's code fingerprint, and these names change no cell's computation."""

from __future__ import annotations

from .metrics import METRICS, MetricSpec

FOLD_BASES = ("test_map", "test_ndcg@1", "test_ndcg@5", "test_ndcg@10", "train_seconds", "selected_step",
              "selected_train_seconds", "selected_pairs_per_second")

FOLD_METRICS = {f"fold_{m}": MetricSpec(f"fold_{m}", f"{METRICS[m].description}, by fold (round = the fold; "
                                                     "LETOR seeds protocol)", False, False)
                for m in FOLD_BASES}

for _k, _v in FOLD_METRICS.items():
    METRICS.setdefault(_k, _v)
