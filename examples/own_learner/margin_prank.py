"""A learner written outside rankrepro: PRank with a margin (an example of
``_target_: margin_prank.MarginPRank``; docs/own_learner.md).

PRank (Crammer & Singer 2005) updates only on a rank mistake.  This variant also updates when
the score lies within ``margin`` of a threshold on the correct side, moving the thresholds
and the weights by one unit per such threshold, as PRank does for the wrong-side ones.  With
``margin=0`` it is PRank.  It is plain NumPy (the package's own learners run compiled loops):
a few thousand rounds take well under a second.
"""

from __future__ import annotations

import numpy as np

from rankrepro.algorithms.base import OnlineRanker, Range


class MarginPRank(OnlineRanker):
    """PRank updating on rank mistakes and on correct ranks predicted with less than ``margin``."""

    name = "margin_prank"
    _constraints = {"margin": Range(float, 0.0, None)}

    def __init__(self, *, n_ranks: int = 5, margin: float = 0.5):
        self.n_ranks, self.margin = n_ranks, margin

    def _init_state(self, n_features: int) -> None:
        self.coef_ = np.zeros(n_features)
        self.thresholds_ = np.zeros(self.n_ranks - 1)

    def _rank(self, score: float) -> int:
        return 1 + int(np.sum(score >= self.thresholds_))

    def _online(self, X, y):
        out = np.empty(X.shape[0], dtype=np.int64)
        for t in range(X.shape[0]):
            x = X[t].toarray().ravel()
            s = float(x @ self.coef_)
            out[t] = self._rank(s)
            # y_r = +1 for thresholds below the true rank, -1 above: the side s should be on
            side = np.where(np.arange(1, self.n_ranks) < y[t], 1.0, -1.0)
            tau = np.where(side * (s - self.thresholds_) <= self.margin, side, 0.0)
            if tau.any():
                self.coef_ += tau.sum() * x
                self.thresholds_ -= tau
        return out

    def _predict(self, X):
        s = X @ self.coef_
        return (1 + np.sum(s[:, None] >= self.thresholds_[None, :], axis=1)).astype(np.int64)
