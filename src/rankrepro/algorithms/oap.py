"""Online Aggregate PRank ensembles of Harrington (2003): OAP-BPM, OAP-Bagg and OAP-VP.

N PRank rules run in parallel; on each round every member j sees the example with
probability tau (independent Bernoulli draws b_{j,t}, Algorithm 2).  The three differ only
in their output:

* OAP-BPM: the average rule (w~, c~) = (sum_j w_j / N, sum_j c_j / N), an estimate of the
  Bayes point.  Averaging ordered thresholds keeps them ordered.
* OAP-Bagg: the mean of the members' predicted ranks, H(x) = sum_j h_j(x) / N.
* OAP-VP: H(x) = sum_j v_j h_j(x) / sum_j v_j, v_j the number of correct predictions of
  member j on the examples it was shown (equal weights while all v_j = 0).

Harrington writes both outputs as these means, with no rounding: ``output='mean'`` predicts
the real-valued mean rank (the test rank loss is then |H(x) - y|), ``output='rank'`` the
nearest rank to it (halves rounded up).  Online predictions (before each update) are always
the nearest rank.

All members are advanced together in one compiled loop; the Bernoulli masks are drawn
from the estimator's own generator (``seed``), so a run is repeatable bit for bit.

>>> import numpy as np
>>> from rankrepro.algorithms import OAPBPM
>>> X = np.eye(3); y = np.array([1, 2, 3])
>>> OAPBPM(n_ranks=3, N=10, tau=0.5, seed=0).fit_online(X, y).tolist()
[3, 1, 2]
"""

from __future__ import annotations

import numpy as np

from . import _compiled as K
from .base import rows, per_distinct_row, Range, OneOf, OnlineRanker, round_to_rank

#: rows of Bernoulli masks drawn at once (bounds memory for long streams)
_MASK_CHUNK = 65536


class _OAP(OnlineRanker):
    _dense_rows = True
    _kernel_state = ("rng_", "member_coef_", "member_thresholds_", "coef_sum_", "thresholds_sum_", "votes_")
    _mode = K.MODE_BPM
    _constraints = {
        "N": Range(int, 1, None),
        "tau": Range(float, 0.0, 1.0, left_open=True),
    }

    def __init__(self, *, n_ranks: int = 5, N: int = 100, tau: float = 0.3, seed=None):
        self.n_ranks = n_ranks
        self.N = N
        self.tau = tau
        self.seed = seed

    def _init_state(self, n_features: int) -> None:
        self.rng_ = np.random.default_rng(self.seed)
        self.member_coef_ = np.zeros((self.N, n_features))
        self.member_thresholds_ = np.zeros((self.N, self.n_ranks - 1))
        self.coef_sum_ = np.zeros(n_features)
        self.thresholds_sum_ = np.zeros(self.n_ranks - 1)
        self.votes_ = np.zeros(self.N)

    def _online(self, X, y):
        T = X.shape[0]
        out = np.empty(T, dtype=np.int64)
        for start in range(0, T, _MASK_CHUNK):
            stop = min(T, start + _MASK_CHUNK)
            mask = self.rng_.random((stop - start, self.N)) < self.tau
            K.oap_online(*rows(X[start:stop]), y[start:stop], self.member_coef_, self.member_thresholds_,
                         self.coef_sum_, self.thresholds_sum_, self.votes_, mask, self._mode,
                         int(self.n_ranks), out[start:stop])
        return out

    @property
    def coef_(self) -> np.ndarray:
        """The averaged weight vector w~."""
        return self.coef_sum_ / self.N

    @property
    def thresholds_(self) -> np.ndarray:
        """The averaged thresholds c~ (ordered, as the average of ordered vectors)."""
        return self.thresholds_sum_ / self.N

    def _predict(self, X):
        out = np.empty(X.shape[0], dtype=np.int64)
        if self._mode == K.MODE_BPM:
            K.predict_linear(*rows(X), self.coef_sum_, self.thresholds_sum_, out)
        else:
            K.predict_ensemble(*rows(X), self.member_coef_, self.member_thresholds_, self.votes_, self._mode,
                               int(self.n_ranks), out)
        return out


class OAPBPM(_OAP):
    """OAP-BPM (Harrington 2003, Algorithm 2): the averaged PRank rule."""

    name = "oap_bpm"
    _mode = K.MODE_BPM

    def decision_function(self, X) -> np.ndarray:
        self._check_fitted()
        return self._check_X(X) @ self.coef_


class _OAPVote(_OAP):
    """An ensemble whose output is a (vote-weighted) mean of the members' ranks."""

    #: parameters that change only how the final rule predicts, never the run (the online
    #: predictions are always the nearest rank): rankrepro.pipeline.cells.reread_of
    PREDICT_ONLY = ("output",)
    _constraints = {"output": OneOf(("mean", "rank"))}

    def __init__(self, *, n_ranks: int = 5, N: int = 100, tau: float = 0.3, output: str = "mean", seed=None):
        super().__init__(n_ranks=n_ranks, N=N, tau=tau, seed=seed)
        self.output = output

    def decision_function(self, X) -> np.ndarray:
        """The (vote-weighted) mean rank, a real number in [1, k]."""
        self._check_fitted()
        return per_distinct_row(self._check_X(X), self._ensemble_score)

    def _ensemble_score(self, X):
        # O(N x rows): computed once per distinct row (per_distinct_row)
        out = np.empty(X.shape[0])
        K.ensemble_scores(*rows(X), self.member_coef_, self.member_thresholds_, self.votes_, self._mode, out)
        return out

    def _predict(self, X):
        out = per_distinct_row(X, self._ensemble_score)
        return out if self.output == "mean" else round_to_rank(out, self.n_ranks)


class OAPBagg(_OAPVote):
    """OAP-Bagg (Harrington 2003, Sec. 3.1): H(x) = sum_j h_j(x) / N."""

    name = "oap_bagg"
    _mode = K.MODE_BAGG


class OAPVP(_OAPVote):
    """OAP-VP (Harrington 2003, Sec. 3.1): H(x) = sum_j v_j h_j(x) / |sum_j v_j|."""

    name = "oap_vp"
    _mode = K.MODE_VP
