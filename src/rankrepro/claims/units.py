"""The unit a claim on a LETOR test metric is tested over (``experiment.claims_unit``).

``trials`` (the default): the per-trial values, as every claim.  ``queries``: as Elsas et al.
(2008) test their learners -- paired over the test queries of the five folds.  A test query
belongs to one fold's test part, so the query ids of the five folds are distinct and pool into
one sample; a learner run over several seeds (the letor_seeds protocol) contributes each
query's value averaged over its seeds (the cell's expected per-query value under its own
randomness; a deterministic learner, run once, its one value).  A claim on ``test_<m>`` then
reads the rows ``query_<m>`` (round = the query id) and ``n_needed`` counts queries.

Beside it, the by-fold view: each fold's value (``fold_<m>`` rows of a seeds run averaged over
the seeds; in a by-fold run, trial i is fold i + 1 and its value is the fold's) paired over the
five folds, kept in the claim's evidence and ``stats["by_fold"]``.
"""

from __future__ import annotations

import pandas as pd

from .testing import cell_metric_rows, value_columns

#: the units ``experiment.claims_unit`` may name
UNITS = ("trials", "queries")


def _rows(trials: pd.DataFrame, cell: str, metric: str) -> pd.DataFrame:
    pos = cell_metric_rows(trials).get((cell, metric))
    narrow = value_columns(trials)
    return narrow.iloc[pos] if pos is not None else narrow.iloc[:0]


def query_metric(metric: str) -> str | None:
    """The per-query metric behind a test metric (``test_map`` -> ``query_map``), else None."""
    return "query_" + metric[len("test_"):] if metric.startswith("test_") else None


def query_values(trials: pd.DataFrame, cell: str, metric: str) -> pd.Series | None:
    """A cell's value of test metric ``metric`` per test query (index: the query id, sorted),
    averaged over the trials that hold the query; None when the cell has no per-query rows."""
    q = query_metric(metric)
    if q is None:
        return None
    t = _rows(trials, cell, q)
    if t.empty:
        return None
    return t.groupby(t["round"].astype("int64"))["value"].mean().sort_index()


def fold_values(trials: pd.DataFrame, cell: str, metric: str) -> pd.Series | None:
    """A cell's value of ``metric`` per fold (index: the fold, 1..5): the ``fold_<metric>``
    rows averaged over the seeds, or, in a by-fold run (no such rows), trial i as fold i + 1."""
    t = _rows(trials, cell, f"fold_{metric}")
    if not t.empty:
        return t.groupby(t["round"].astype("int64"))["value"].mean().sort_index()
    t = _rows(trials, cell, metric)
    if t.empty:
        return None
    s = t.groupby("trial")["value"].last().sort_index()
    s.index = s.index.astype("int64") + 1
    return s
