"""The PRank family of Crammer & Singer (2005), plus the voted PRank of Harrington (2003).

>>> import numpy as np
>>> from rankrepro.algorithms import PRank
>>> X = np.array([[1.0, 0.0], [0.0, 1.0]]); y = np.array([1, 3])
>>> PRank(n_ranks=3).fit_online(X, y)      # predictions made before each update
array([3, 1])
"""

from __future__ import annotations

import numpy as np

from . import _compiled as K
from .base import rows, per_distinct_row, Range, OneOf, OnlineRanker, round_to_rank


class _ThresholdRanker(OnlineRanker):
    """A weight vector ``coef_`` and ordered thresholds ``thresholds_`` (b_1..b_{k-1})."""
    _dense_rows = True

    def decision_function(self, X) -> np.ndarray:
        self._check_fitted()
        return self._check_X(X) @ self.coef_

    def _predict(self, X: np.ndarray) -> np.ndarray:
        out = np.empty(X.shape[0], dtype=np.int64)
        K.predict_linear(*rows(X), self.coef_, self.thresholds_, out)
        return out


class PRank(_ThresholdRanker):
    """PRank (Crammer & Singer 2005, Fig. 2; Harrington 2003, Algorithm 1).

    On a rank mistake every threshold on the wrong side of ``w.x`` moves by one unit and
    ``w`` moves by the sum of those moves times ``x``.  Thresholds start at 0 and stay
    integers, so their order is preserved exactly (Lemma 1).
    """

    name = "prank"
    _kernel_state = ("coef_", "thresholds_")

    def __init__(self, *, n_ranks: int = 5):
        self.n_ranks = n_ranks

    _single = False

    def _init_state(self, n_features: int) -> None:
        self.coef_ = np.zeros(n_features)
        self.thresholds_ = np.zeros(self.n_ranks - 1)
        self.n_mistakes_ = 0

    def _online(self, X, y):
        out = np.empty(X.shape[0], dtype=np.int64)
        self.n_mistakes_ += int(K.prank_online(*rows(X), y, self.coef_, self.thresholds_, self._single, out))
        return out


class SiPRank(PRank):
    """Si-PRank (Crammer & Singer 2005, Sec. 3): on a mistake only the threshold next to
    the predicted interval moves (b_{yhat-1} if yhat > y, else b_{yhat}), with ``w``."""

    name = "si_prank"
    _single = True


class NoPRank(_ThresholdRanker):
    """No-PRank (Crammer & Singer 2005, Fig. 3): on a rank mistake, the closest rule (in
    Euclidean norm over (w, b)) that ranks x with margin ``beta`` at every threshold.

    The k-1 variable dual (eq. 4.5) is solved exactly (:func:`_compiled.noprank_dual`).
    ``tau_sum_`` accumulates sum_t sum_r tau_r^t, which Theorem 3 bounds by 2 beta/gamma^2.
    """

    name = "no_prank"
    _kernel_state = ("coef_", "thresholds_", "tau_sum_")
    _constraints = {"beta": Range(float, 0.0, None, left_open=True)}

    def __init__(self, *, n_ranks: int = 5, beta: float = 1.0):
        self.n_ranks = n_ranks
        self.beta = beta

    def _init_state(self, n_features: int) -> None:
        self.coef_ = np.zeros(n_features)
        self.thresholds_ = np.zeros(self.n_ranks - 1)
        self.tau_sum_ = np.zeros(1)

    def _online(self, X, y):
        out = np.empty(X.shape[0], dtype=np.int64)
        K.noprank_online(*rows(X), y, self.coef_, self.thresholds_, float(self.beta), out, self.tau_sum_)
        return out


class MuPRank(_ThresholdRanker):
    """Mu-PRank (Crammer & Singer 2005, Fig. 5): multiplicative updates of (w, b), kept
    l1-normalised.  State is held as logarithms (``log_coef_``; thresholds as
    eta * integer units + a shared shift, which keeps their order exact) and renormalised
    with log-sum-exp, so eta = 16 and beyond cannot overflow.  The paper
    assumes ||x||_inf <= 1 for its bound; the algorithm runs on any x."""

    name = "mu_prank"
    _kernel_state = ("log_coef_", "threshold_units_", "threshold_shift_")
    _constraints = {"eta": Range(float, 0.0, None, left_open=True)}

    def __init__(self, *, n_ranks: int = 5, eta: float = 1.0):
        self.n_ranks = n_ranks
        self.eta = eta

    def _init_state(self, n_features: int) -> None:
        m = n_features + self.n_ranks - 1
        self.log_coef_ = np.full(n_features, -np.log(m))
        # log b_r = eta * u_r + shift: u_r integer (Lemma 4), shift the shared normaliser
        self.threshold_units_ = np.zeros(self.n_ranks - 1)
        self.threshold_shift_ = np.array([-np.log(m)])

    @property
    def log_thresholds_(self) -> np.ndarray:
        return float(self.eta) * self.threshold_units_ + self.threshold_shift_[0]

    @property
    def coef_(self) -> np.ndarray:
        return np.exp(self.log_coef_)

    @property
    def thresholds_(self) -> np.ndarray:
        return np.exp(self.log_thresholds_)

    def _online(self, X, y):
        out = np.empty(X.shape[0], dtype=np.int64)
        K.muprank_online(*rows(X), y, self.log_coef_, self.threshold_units_, self.threshold_shift_, float(self.eta), out)
        return out


class VotedPRank(OnlineRanker):
    """PRank with the voted-perceptron output of Freund & Schapire (1999), as Harrington
    (2003, Sec. 4.1) tests it.  Every hypothesis (w_i, b_i) is stored with its survival
    count c_i; the output is H(x) = sum_i c_i h_i(x) / sum_i c_i (``output='mean'``, as
    Harrington writes it, unrounded) or the nearest rank to it (``output='rank'``).  Online
    predictions are those of the current PRank rule.

    ``count`` is where a new hypothesis's count starts (the initial zero rule starts at 0
    under both): ``'freund_schapire'`` (default) at 1, as in Freund & Schapire's Fig. 1
    (c_{k+1} = 1: the example whose mistake made the rule counts for it), then +1 per
    correct prediction; ``'harrington'`` at 0, "the number of correct ranks between
    updates" (Harrington 2003, Sec. 3.1), so c_i counts only the correct predictions the
    rule made.  The two differ by exactly 1 on every hypothesis but the first."""

    name = "voted_prank"
    _dense_rows = True
    _kernel_state = ("coef_", "thresholds_")  # the stored rules are written to new arrays
    #: parameters that change only how the final rule predicts, never the run (the online
    #: predictions are the current PRank rule's): rankrepro.pipeline.cells.reread_of
    PREDICT_ONLY = ("output",)
    _constraints = {"output": OneOf(("mean", "rank")), "count": OneOf(("freund_schapire", "harrington"))}

    def __init__(self, *, n_ranks: int = 5, output: str = "mean", count: str = "freund_schapire"):
        self.n_ranks = n_ranks
        self.output = output
        self.count = count

    def _init_state(self, n_features: int) -> None:
        self.coef_ = np.zeros(n_features)
        self.thresholds_ = np.zeros(self.n_ranks - 1)
        self.hyp_coef_ = np.zeros((1, n_features))
        self.hyp_thresholds_ = np.zeros((1, self.n_ranks - 1))
        self.hyp_counts_ = np.zeros(1)

    def _online(self, X, y):
        n_h = self.hyp_counts_.shape[0]
        T = X.shape[0]
        Wh = np.zeros((n_h + T, X.shape[1]))
        Bh = np.zeros((n_h + T, self.n_ranks - 1))
        C = np.zeros(n_h + T)
        Wh[:n_h], Bh[:n_h], C[:n_h] = self.hyp_coef_, self.hyp_thresholds_, self.hyp_counts_
        out = np.empty(T, dtype=np.int64)
        n_new = K.voted_prank_online(*rows(X), y, self.coef_, self.thresholds_, Wh, Bh, C, n_h, out)
        if self.count == "harrington":
            # the kernel starts every rule it creates (slots n_h..n_new-1) at 1 (Freund &
            # Schapire); Harrington's count of correct ranks between updates is 1 less.
            # Counts are small integers held exactly in floats, so this is exact.
            C[n_h:n_new] -= 1.0
        self.hyp_coef_, self.hyp_thresholds_, self.hyp_counts_ = Wh[:n_new].copy(), Bh[:n_new].copy(), C[:n_new].copy()
        return out

    def decision_function(self, X) -> np.ndarray:
        """The vote-weighted mean rank (a real number in [1, k])."""
        self._check_fitted()
        return per_distinct_row(self._check_X(X), self._voted_score)

    def _voted_score(self, X):
        # O(hypotheses x rows): computed once per distinct row (per_distinct_row)
        out = np.empty(X.shape[0])
        counts = self.hyp_counts_
        if not np.any(counts != 0):
            # every count 0 (count='harrington' after a stream of mistakes only): H(x)'s
            # ratio is undefined; equal weights, the convention of OAP-VP and the reference
            counts = np.ones_like(counts)
        K.predict_voted(*rows(X), self.hyp_coef_, self.hyp_thresholds_, counts, counts.shape[0], out)
        return out

    def _predict(self, X):
        out = per_distinct_row(X, self._voted_score)
        return out if self.output == "mean" else round_to_rank(out, self.n_ranks)
