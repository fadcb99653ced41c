"""Pairwise learners of document ranking functions (Elsas, Carvalho & Carbonell 2008).

Training pairs: within each query, every (less relevant, more relevant) document pair with
different labels; the difference vector D = d_more - d_less must score positive.

* :class:`PairwisePerceptron` runs the perceptron of Elsas et al.'s Table 1 / Table 2 once
  and exposes all its outputs: *last*, *pocket* (the hypothesis with the largest success
  counter c_i), *average* (sum_i c_i w_i / sum_i c_i) and the *committee* (the N_com
  hypotheses with the largest c_i; a hypothesis joins while the committee is not full, as
  Table 2's text says, else when its counter beats the smallest).  Updates are balanced per
  query, eta_q = 1/|S_q|; the alpha-bound drops a pair once it has been misranked more than
  alpha * alpha_iterations times, "a fraction of the number of iterations" (Sec. 4), fixed
  whatever the number of iterations a run is capped at.

  The order in which "each training sample in S" is visited is not given.  ``order='random'``
  (default): one random permutation of the pairs, drawn once from ``seed`` and laid out in
  memory, then every pass in that order -- the usual reading of an online perceptron over a
  training set; ``'file'``: query by query in file order, which lets the last queries of
  every pass dominate the weights; ``'reshuffle'``: a new permutation every pass (slower).
* :func:`committee_scores` combines committee members weighted by their validation score:
  "A" averages the weight vectors, "B" is the weighted Borda count (BordaFuse).
* :class:`RankSVM` and :class:`RankBoost` are the baselines (see their docstrings).

The pair loop is compiled; an iteration over ~300,000 OHSUMED pairs takes milliseconds.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..metrics import query_groups


ORDERS = ("random", "file", "reshuffle")


def make_pairs(y: np.ndarray, qid: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(more relevant index, less relevant index, eta_q) of every preference pair: queries in
    increasing id order, within a query the more relevant document in file order, then the
    less relevant one in file order (:func:`_make_pairs_numpy`, which a compiled loop gives
    bit for bit for numeric labels)."""
    y = np.asarray(y)
    if y.dtype.kind not in "biuf" or y.ndim != 1:
        return _make_pairs_numpy(y, qid)
    qid = np.asarray(qid)
    order = np.argsort(qid, kind="stable")
    starts = np.concatenate(([0], np.flatnonzero(np.diff(qid[order])) + 1, [order.size])).astype(np.int64)
    return _pairs_in_groups(y, order.astype(np.int64), starts)


@njit(cache=True, nogil=True)
def _pairs_in_groups(y, order, starts):
    """make_pairs over the rows ``order`` lists grouped by query (group g: order[starts[g]:starts[g+1]])."""
    total = 0
    for g in range(starts.size - 1):
        for a in range(starts[g], starts[g + 1]):
            ya = y[order[a]]
            for b in range(starts[g], starts[g + 1]):
                if ya > y[order[b]]:
                    total += 1
    hi = np.empty(total, np.int64)
    lo = np.empty(total, np.int64)
    eta = np.empty(total)
    k = 0
    for g in range(starts.size - 1):
        k0 = k
        for a in range(starts[g], starts[g + 1]):
            ya = y[order[a]]
            for b in range(starts[g], starts[g + 1]):
                if ya > y[order[b]]:
                    hi[k] = order[a]
                    lo[k] = order[b]
                    k += 1
        for i in range(k0, k):
            eta[i] = 1.0 / (k - k0)
    return hi, lo, eta


def _make_pairs_numpy(y: np.ndarray, qid: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """make_pairs query by query in NumPy (labels of any ordered type)."""
    y = np.asarray(y)
    hi, lo, eta = [], [], []
    for idx in query_groups(qid):
        yy = y[idx]
        a, b = np.nonzero(yy[:, None] > yy[None, :])
        if a.size == 0:
            continue
        hi.append(idx[a])
        lo.append(idx[b])
        eta.append(np.full(a.size, 1.0 / a.size))
    if not hi:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    return np.concatenate(hi), np.concatenate(lo), np.concatenate(eta)


@njit(cache=True, nogil=True)
def _pair_differences(X, hi, lo, D):
    for p in range(hi.size):
        h, l = hi[p], lo[p]
        for j in range(X.shape[1]):
            D[p, j] = X[h, j] - X[l, j]


def pair_differences(X: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """D = X[hi] - X[lo] (float64, one row per pair), written in one pass: the same doubles as
    NumPy's two gathers and a subtraction, without their two pairs x features temporaries."""
    D = np.empty((hi.size, X.shape[1]))
    _pair_differences(X, np.ascontiguousarray(hi, dtype=np.int64), np.ascontiguousarray(lo, dtype=np.int64), D)
    return D


@njit(cache=True, nogil=True)
def _perceptron_pass(D, eta, order, w, c, alive, miss, bound, K_W, K_c, K_n, avg_acc, avg_z,
                     pocket_w, pocket_c):
    """One pass over the pairs in ``order``.  ``c[0]`` is the current success counter."""
    d = D.shape[1]
    for p in order:
        if not alive[p]:
            continue
        s = 0.0
        for j in range(d):
            s += w[j] * D[p, j]
        if s > 0.0:
            c[0] += 1.0
            continue
        # a ranking mistake: the current hypothesis retires with its counter
        ci = c[0]
        if ci > 0.0:
            for j in range(d):
                avg_acc[j] += ci * w[j]
            avg_z[0] += ci
            if ci > pocket_c[0]:
                pocket_c[0] = ci
                pocket_w[:] = w
        # Table 2: it joins the committee while the committee is not full, else when its
        # counter beats the smallest member's
        n = K_n[0]
        if n < K_W.shape[0]:
            K_W[n, :] = w
            K_c[n] = ci
            K_n[0] = n + 1
        else:
            m = 0
            for k in range(1, n):
                if K_c[k] < K_c[m]:
                    m = k
            if ci > K_c[m]:
                K_W[m, :] = w
                K_c[m] = ci
        e = eta[p]
        for j in range(d):
            w[j] += e * D[p, j]
        c[0] = 0.0
        miss[p] += 1
        if miss[p] > bound:
            alive[p] = False


class PairwisePerceptron:
    """The perceptron of Elsas et al. (2008), Tables 1-2, with every output variant.

    ``partial_fit_iteration()`` runs one pass; the outputs then reflect the hypotheses so
    far (the current one counted with its running counter)."""

    def __init__(self, *, n_iter: int = 50, committee: int = 30, alpha: float = 0.85, alpha_iterations: int = 100,
                 order: str = "random", seed=None):
        if n_iter < 1 or committee < 1 or not (0 < alpha <= 1) or alpha_iterations < 1:
            raise ValueError("n_iter >= 1, committee >= 1, alpha in (0, 1] and alpha_iterations >= 1 are required")
        if order not in ORDERS:
            raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
        self.n_iter, self.committee, self.alpha, self.order, self.seed = n_iter, committee, alpha, order, seed
        self.alpha_iterations = alpha_iterations

    def start(self, X: np.ndarray, y: np.ndarray, qid: np.ndarray) -> "PairwisePerceptron":
        hi, lo, eta = make_pairs(y, qid)
        self.rng_ = np.random.default_rng(self.seed)
        if self.order == "random":  # one permutation, laid out in memory: passes then run in order
            perm = self.rng_.permutation(hi.size)
            hi, lo, eta = hi[perm], lo[perm], eta[perm]
        self.D_ = pair_differences(np.ascontiguousarray(X, dtype=np.float64), hi, lo)
        self.eta_ = eta
        self.n_pairs_ = hi.size
        d = X.shape[1]
        self.w_ = np.zeros(d)
        self.c_ = np.zeros(1)
        self.alive_ = np.ones(hi.size, dtype=np.bool_)
        self.miss_ = np.zeros(hi.size, dtype=np.int64)
        self.K_W_ = np.zeros((self.committee, d))
        self.K_c_ = np.zeros(self.committee)
        self.K_n_ = np.zeros(1, dtype=np.int64)
        self.avg_acc_ = np.zeros(d)
        self.avg_z_ = np.zeros(1)
        self.pocket_w_ = np.zeros(d)
        self.pocket_c_ = np.zeros(1)
        self.iterations_ = 0
        return self

    def partial_fit_iteration(self) -> None:
        order = self.rng_.permutation(self.n_pairs_) if self.order == "reshuffle" else np.arange(self.n_pairs_)
        _perceptron_pass(self.D_, self.eta_, order, self.w_, self.c_, self.alive_, self.miss_,
                         self.alpha * self.alpha_iterations, self.K_W_, self.K_c_, self.K_n_, self.avg_acc_, self.avg_z_,
                         self.pocket_w_, self.pocket_c_)
        self.iterations_ += 1

    def fit(self, X, y, qid) -> "PairwisePerceptron":
        self.start(X, y, qid)
        for _ in range(self.n_iter):
            self.partial_fit_iteration()
        return self

    # outputs ------------------------------------------------------------------------
    def last(self) -> np.ndarray:
        return self.w_.copy()

    def pocket(self) -> np.ndarray:
        return self.w_.copy() if self.c_[0] > self.pocket_c_[0] else self.pocket_w_.copy()

    def average(self) -> np.ndarray:
        z = self.avg_z_[0] + self.c_[0]
        if z == 0:
            return self.w_.copy()
        return (self.avg_acc_ + self.c_[0] * self.w_) / z

    def members(self) -> tuple[np.ndarray, np.ndarray]:
        """The committee: the current hypothesis competes with its running counter."""
        n = int(self.K_n_[0])
        W, c = self.K_W_[:n].copy(), self.K_c_[:n].copy()
        cur = self.c_[0]
        if n < self.committee:
            W, c = np.vstack([W, self.w_]), np.append(c, cur)
        elif n and cur > c.min():
            m = int(np.argmin(c))
            W[m], c[m] = self.w_, cur
        return W, c


def borda(scores: np.ndarray, qid: np.ndarray) -> np.ndarray:
    """Borda points: in each query, n - (rank - 1) for the document at rank r.  ``scores``
    may be a matrix (documents x rankers): each column is ranked separately."""
    scores = np.asarray(scores, dtype=float)
    out = np.zeros(scores.shape)
    for idx in query_groups(qid):
        r = np.argsort(np.argsort(-scores[idx], axis=0, kind="stable"), axis=0, kind="stable")
        out[idx] = idx.size - r
    return out


def mean_ndcg_columns(S: np.ndarray, y: np.ndarray, qid: np.ndarray, k: int = 10) -> np.ndarray:
    """Mean over queries of NDCG@k of every column of the score matrix S (LETOR's
    conventions, as :func:`rankrepro.metrics.ndcg_at`; queries without relevant documents
    count 0)."""
    from ..metrics import _discounts

    S = np.asarray(S, dtype=float)
    tot = np.zeros(S.shape[1])
    groups = query_groups(qid)
    for idx in groups:
        g = 2.0 ** y[idx].astype(float) - 1.0
        n = min(k, idx.size)
        disc = _discounts(n)
        ideal = float(np.sort(g)[::-1][:n] @ disc)
        if ideal == 0:
            continue
        top = np.argsort(-S[idx], axis=0, kind="stable")[:n]
        tot += (g[top] * disc[:, None]).sum(axis=0) / ideal
    return tot / len(groups)


def committee_scores(W: np.ndarray, weights: np.ndarray, X: np.ndarray, qid: np.ndarray, how: str) -> np.ndarray:
    """Scores of the combined committee.  ``weights``: one per member (validation metric)."""
    weights = np.asarray(weights, dtype=float)
    if weights.sum() <= 0:
        weights = np.ones_like(weights)
    if how == "A":
        return X @ (weights @ W / weights.sum())
    if how == "B":
        return borda(X @ W.T, qid) @ weights
    raise ValueError(f"unknown combination {how!r} (A: weighted averaging, B: weighted Borda count)")
