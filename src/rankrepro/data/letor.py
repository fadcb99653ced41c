"""LETOR folds from a processed LETOR data set.

* ``folds`` layout (LETOR 2.0/3.0, MSLR): Fold1..Fold5 each with train/valid/test files;
* ``parts`` layout (LETOR 4.0 MQ2008): S1..S5 combined by the fold recipe of its readme
  (Fold1 = S1, S2, S3 train / S4 validation / S5 test, and so on).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .arrays import load_cached
from .registry import MQ2008_FOLDS


@dataclass(frozen=True)
class Part:
    X: np.ndarray
    y: np.ndarray
    qid: np.ndarray


@dataclass(frozen=True)
class Fold:
    train: Part
    valid: Part
    test: Part


def _part(d, mask) -> Part:
    return Part(d["X"][mask].astype(np.float64), d["y"][mask].astype(np.int64), d["qid"][mask])


def letor_fold(fold: int, *, data_path: str) -> Fold:
    d = load_cached(data_path)
    if fold < 1 or fold > 5:
        raise ValueError(f"fold must be 1..5, got {fold}")
    parts = d["part"]
    if np.any(d["fold"] > 0):  # folds layout
        m = d["fold"] == fold
        return Fold(*(_part(d, m & (parts == p)) for p in ("train", "valid", "test")))
    train, valid, test = MQ2008_FOLDS[fold]
    return Fold(_part(d, np.isin(parts, train)), _part(d, np.isin(parts, valid)), _part(d, np.isin(parts, test)))


def letor_all(*, data_path: str) -> Part:
    """Every row of a processed LETOR-format data set (all folds or parts), rows grouped by
    query in increasing query id (file order within a query).  Duplicated rows of the
    ``folds`` layout (a query in several folds' files) are kept once: fold 1's copy."""
    d = load_cached(data_path)
    rows = np.flatnonzero(d["fold"] == 1) if np.any(d["fold"] > 0) else np.arange(d["qid"].size)
    return _part(d, rows[np.argsort(d["qid"][rows], kind="stable")])
