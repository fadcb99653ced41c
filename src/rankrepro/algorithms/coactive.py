"""Coactive learning (Shivaswamy & Joachims 2012): the preference perceptron and its variants,
run for many users at once (their weight vectors are the rows of one matrix).

The learner presents, for each user, the object that maximises w_u . phi(x, y); the user
returns an object ybar (feedback); the update moves w_u along phi(x, ybar) - phi(x, y).

* ``variant="perceptron"`` -- Algorithm 1: w <- w + (phi(x, ybar) - phi(x, y)); with
  ``batch=k`` the updates of k rounds are applied together every k rounds (Sec. 4.2).
* ``variant="convex"`` -- Algorithm 2: eta_t = 1/sqrt(t), w <- Proj_B(w + eta_t G delta), B the
  l2 ball of radius ``radius``.

The movie simulator uses :func:`strictly_alpha_informative_item`; the experiments (Figs. 2-5)
are run by :mod:`rankrepro.protocols.coactive`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .base import Estimator, OneOf, ParamError, QueryRanker, Range


def _needs_radius(obj) -> None:
    if obj.variant == "convex" and obj.radius is None:
        raise ParamError("radius", obj.radius, "the convex variant needs a positive radius", type(obj).__name__)


class PreferencePerceptron(Estimator):
    """The learner's state for ``n_users`` users at once (the rows of ``W``); created by
    :meth:`CoactiveLearner.make`, checked on creation by the shared validation."""

    _constraints = {"n_features": Range(int, 1, None), "n_users": Range(int, 1, None),
                    "variant": OneOf(("perceptron", "convex")), "batch": Range(int, 1, None),
                    "radius": Range(float, 0.0, None, left_open=True, none_ok=True),
                    "G": Range(float, 0.0, None, left_open=True)}

    def __init__(self, *, n_features: int, n_users: int = 1, variant: str = "perceptron", batch: int = 1,
                 radius: float | None = None, G: float = 1.0):
        self.n_features, self.n_users, self.variant = n_features, n_users, variant
        self.batch, self.radius, self.G = batch, radius, G
        self._validate_params()
        _needs_radius(self)
        self.W = np.zeros((n_users, n_features))
        self.t = 0
        self._pending = np.zeros_like(self.W)

    def scores(self, Phi: np.ndarray) -> np.ndarray:
        """Utility estimates: Phi is (objects x features), shared by all users, or
        (users x objects x features); returns (users x objects)."""
        if Phi.ndim == 2:
            return self.W @ Phi.T
        return np.einsum("uf,uof->uo", self.W, Phi)

    def update(self, delta: np.ndarray) -> None:
        """delta = phi(x, ybar) - phi(x, y) for every user (users x features)."""
        delta = np.asarray(delta, dtype=float).reshape(self.n_users, self.n_features)
        self.t += 1
        if self.variant == "convex":
            self.W = self.W + (self.G / np.sqrt(self.t)) * delta
            norms = np.linalg.norm(self.W, axis=1, keepdims=True)
            self.W = np.where(norms > self.radius, self.W * (self.radius / np.maximum(norms, 1e-300)), self.W)
            return
        self._pending += delta
        if self.t % self.batch == 0:
            self.W = self.W + self._pending
            self._pending[:] = 0.0


def strictly_alpha_informative_item(utility: np.ndarray, presented: np.ndarray, alpha: float,
                                    available: np.ndarray | None = None,
                                    masked: np.ndarray | None = None) -> np.ndarray:
    """For each user (row), the lowest-utility available item whose utility gain over the
    presented item is at least alpha times the largest possible gain (eq. 4).  When the
    presented item is already the best, the feedback is the presented item itself.
    ``masked`` (the utilities with unavailable items at -inf) may be passed instead of
    ``available`` to save recomputing it every round."""
    U = np.asarray(utility, dtype=float)
    if masked is None:
        avail = np.ones_like(U, dtype=bool) if available is None else np.asarray(available, dtype=bool)
        masked = np.where(avail, U, -np.inf)
    rows = np.arange(U.shape[0])
    u_pres = U[rows, presented]
    u_best = masked.max(axis=1)
    need = u_pres + alpha * (u_best - u_pres) - 1e-12
    return np.argmin(np.where(masked >= need[:, None], masked, np.inf), axis=1)


class SortedUtilities:
    """Each user's items in decreasing true utility (ties by item index), for the simulated
    user's two questions, answered in O(log m) per round instead of a pass over all items:
    the best available item, and the lowest-utility available item that is still strictly
    alpha-informative.  Identical answers to :func:`strictly_alpha_informative_item` and to
    the max over the available items (ties included; tested)."""

    def __init__(self, U: np.ndarray):
        self.U = U
        self.order = np.argsort(-U, axis=1, kind="stable")
        self.Us = np.take_along_axis(U, self.order, axis=1)
        self.ptr = np.zeros(U.shape[0], dtype=np.int64)  # no available item lies before it

    def feedback(self, avail: np.ndarray, presented: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
        """(feedback items, utility of the best available item) per user."""
        return _sorted_feedback(self.order, self.Us, self.U, avail, presented, float(alpha), self.ptr)

    def best(self, avail: np.ndarray) -> np.ndarray:
        """Utility of the best available item per user."""
        return _sorted_feedback(self.order, self.Us, self.U, avail, np.zeros(self.U.shape[0], dtype=np.int64), -1.0,
                                self.ptr)[1]


@njit(cache=True, nogil=True)
def _sorted_feedback(order, Us, U, avail, presented, alpha, ptr):
    n, m = Us.shape
    fb = np.zeros(n, dtype=np.int64)
    best = np.empty(n)
    for r in range(n):
        p = ptr[r]
        while not avail[r, order[r, p]]:
            p += 1
        ptr[r] = p
        ub = Us[r, p]
        best[r] = ub
        if alpha < 0:  # the best only
            continue
        up = U[r, presented[r]]
        need = up + alpha * (ub - up) - 1e-12
        lo, hi = p, m  # first sorted position whose utility is below need
        while lo < hi:
            mid = (lo + hi) // 2
            if Us[r, mid] >= need:
                lo = mid + 1
            else:
                hi = mid
        q = lo - 1
        while not avail[r, order[r, q]]:  # the lowest available one still >= need
            q -= 1
        v = Us[r, q]
        k = q  # among equal utilities, the smallest item index (the first in sorted order)
        while k > 0 and Us[r, k - 1] == v:
            k -= 1
            if avail[r, order[r, k]]:
                q = k
        fb[r] = order[r, q]
    return fb, best


class CoactiveLearner(QueryRanker):
    """A coactive cell's learner (``variant``: perceptron, convex, or ranksvm -- the Ranking
    SVM baseline; batch, radius) and simulated user (``feedback``: strict with quality
    ``alpha``, or noisy; ``noisy_pick``: which of several available movies rated one higher
    the noisy user returns -- ``random`` or ``best``, the one of highest true utility);
    ``max_users``: the number of users of each group simulated in the movie experiments (None:
    all).

    As a scikit-learn ranker, ``fit(X, y, qid)`` runs the web-search rounds of Sec. 5.1 on the
    given queries: one pass in a random order (``seed``), the learner presenting each query's
    documents by its scores and the simulated user improving the top five from the relevance
    labels ``y`` (strict: w*, the least-squares fit of y on X, is the user's utility; noisy:
    the labels of the top ten); ``regret_`` holds each round's regret, ``coef_`` the final
    weights, ``predict`` scores documents with them.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 4)); y = (X @ [1.0, 0.5, 0, 0] > 0).astype(int)
    >>> m = CoactiveLearner(seed=0).fit(X, y, qid=np.repeat(np.arange(20), 10))
    >>> bool(m.regret_[-5:].mean() < m.regret_[:5].mean())
    True
    """

    name = "preference_perceptron"
    _constraints = {"variant": OneOf(("perceptron", "convex", "ranksvm")), "batch": Range(int, 1, None),
                    "radius": Range(float, 0.0, None, left_open=True, none_ok=True),
                    "feedback": OneOf(("strict", "noisy")), "alpha": Range(float, 0.0, 1.0, left_open=True),
                    "max_users": Range(int, 1, None, none_ok=True), "noisy_pick": OneOf(("random", "best"))}

    def __init__(self, *, variant: str = "perceptron", batch: int = 1, radius: float | None = None,
                 feedback: str = "strict", alpha: float = 1.0, max_users: int | None = None,
                 noisy_pick: str = "random", seed=None):
        self.variant, self.batch, self.radius, self.feedback, self.alpha = variant, batch, radius, feedback, alpha
        self.max_users, self.noisy_pick, self.seed = max_users, noisy_pick, seed

    def _validate_params(self) -> None:
        super()._validate_params()
        _needs_radius(self)

    def make(self, n_features: int, n_users: int) -> PreferencePerceptron:
        return PreferencePerceptron(n_features=n_features, n_users=n_users, variant=self.variant, batch=self.batch,
                                    radius=self.radius)

    def fit(self, X, y, qid=None) -> "CoactiveLearner":
        self._reset()
        self._validate_params()
        X, y, qid = self._check_Xyq(X, y, qid)
        order = np.argsort(qid, kind="stable")
        X, y, qid = X[order], y[order], qid[order]
        bounds = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1], True])
        u_all = X @ least_squares_w(X, y)
        rng = np.random.default_rng(self.seed)
        queries = rng.permutation(bounds.size - 1)
        if self.variant == "ranksvm":
            svm, learner = CoactiveRankSVM(X.shape[1], seed=int(rng.integers(2**31))), None
        else:
            svm, learner = None, self.make(X.shape[1], 1)
        self.regret_ = ranking_rounds(self, learner, svm, X, y, u_all, bounds[:-1], bounds[1:], queries, rng)
        self.coef_ = (learner.W[0] if learner is not None else svm.w).copy()
        self.n_features_in_ = X.shape[1]
        return self

    def _scores(self, X, qid):
        return row_dots(np.ascontiguousarray(X, dtype=np.float64), self.coef_)


COACTIVE = {CoactiveLearner.name: CoactiveLearner}


class CoactiveRankSVM:
    """The Ranking SVM baseline of Shivaswamy & Joachims (2012), Sec. 5.1.2 / 5.2.2, for one
    user: trained on the preference pairs (feedback over presented), retrained whenever the
    pairs have grown by ``growth`` (10%); C = ``C_initial`` until ``min_cv_pairs`` pairs, then
    chosen by ``cv_folds``-fold cross-validation (held-out pairwise accuracy) from ``C_grid``.
    Between retrainings it presents with the last model."""

    def __init__(self, n_features: int, *, C_grid=(0.01, 0.1, 1.0, 10.0, 100.0), C_initial: float = 100.0,
                 min_cv_pairs: int = 50, cv_folds: int = 5, growth: float = 0.1, seed: int = 0):
        self.w = np.zeros(n_features)
        self.pairs: list[np.ndarray] = []
        self.C_grid, self.C_initial, self.min_cv_pairs = list(C_grid), C_initial, min_cv_pairs
        self.cv_folds, self.growth, self.seed = cv_folds, growth, seed
        self.trained_on = 0
        self.n_fits = 0

    def _fit(self, D: np.ndarray, C: float) -> np.ndarray:
        from .rankers import _svm_dcd

        w = np.zeros(D.shape[1])
        _svm_dcd(D, float(C), 200, 0.01, np.array([self.seed | 1], dtype=np.uint64), np.zeros(D.shape[0]), w)
        self.n_fits += 1
        return w

    def add_pair(self, delta: np.ndarray) -> None:
        if np.any(delta != 0):
            self.pairs.append(np.asarray(delta, dtype=float))
        n = len(self.pairs)
        if n and (self.trained_on == 0 or n >= (1 + self.growth) * self.trained_on):
            self.retrain()

    def retrain(self) -> None:
        D = np.array(self.pairs)
        n = D.shape[0]
        C = self.C_initial
        if n >= self.min_cv_pairs:
            fold = np.random.default_rng(self.seed + n).permutation(n) % self.cv_folds
            acc = []
            for c in self.C_grid:
                hits = 0
                for k in range(self.cv_folds):
                    w = self._fit(D[fold != k], c)
                    hits += int(np.sum(D[fold == k] @ w > 0))
                acc.append(hits / n)
            C = self.C_grid[int(np.argmax(acc))]
        self.w = self._fit(D, C)
        self.trained_on = n


# -------------------------------------------------------------------------------------
# web search (Sec. 5.1): rankings of a query's documents, the joint feature map of eq. 12
# -------------------------------------------------------------------------------------
#: positions scored by the joint feature map of eq. 12
TOP = 5


def position_weights(n_docs: int, top: int = TOP) -> np.ndarray:
    """1/log(i+1) for positions i = 1..min(top, n_docs) (eq. 12; natural log, as printed)."""
    return 1.0 / np.log(np.arange(2, min(top, n_docs) + 2))


def least_squares_w(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """w*: the least-squares fit of the relevance labels on the features (with an intercept,
    dropped: it adds the same amount to every ranking of a query)."""
    A = np.hstack([X, np.ones((X.shape[0], 1))])
    return np.linalg.lstsq(A, y.astype(float), rcond=None)[0][:-1]


def strict_ranking_feedback(order: np.ndarray, u: np.ndarray, alpha: float, top: int = TOP) -> np.ndarray:
    """The simulated user of Sec. 5.1.1: go down the presented ranking ``order`` until the
    first depth d at which the best ``top`` documents (by true utility ``u``) among the first d,
    placed on top in that order, make the feedback strictly alpha-informative (eq. 4):
    U(ybar) - U(y) >= alpha (U(y*) - U(y)).  Returns the top of ybar (document indices)."""
    wts = position_weights(order.size, top)
    k = wts.size
    u_pres = u[order[:k]] @ wts
    u_best = np.sort(u)[::-1][:k] @ wts
    need = u_pres + alpha * (u_best - u_pres) - 1e-12 * max(1.0, abs(u_best))
    for d in range(k, order.size + 1):
        head = order[:d]
        pick = head[np.argsort(-u[head], kind="stable")[:k]]
        if u[pick] @ wts >= need:
            return pick
    return pick  # unreachable: at full depth the pick is optimal


@njit(cache=True, nogil=True)
def row_dots(X: np.ndarray, w: np.ndarray) -> np.ndarray:
    """X @ w summed in one fixed order (feature by feature), the same on every CPU: BLAS's
    matrix-vector product sums in an order that depends on the CPU kernel and on the row's
    place in its block, so two documents with the same features can score a last bit apart on
    one machine and tie on another, and a tie decides the presented order (issue 60, item 5)."""
    out = np.zeros(X.shape[0])
    for i in range(X.shape[0]):
        acc = 0.0
        for j in range(X.shape[1]):
            acc += X[i, j] * w[j]
        out[i] = acc
    return out


@njit(cache=True, nogil=True)
def weighted_rows(wts: np.ndarray, X: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """sum_k wts[k] X[rows[k]] in a fixed order (phi of a ranking's top), the same on every CPU."""
    out = np.zeros(X.shape[1])
    for k in range(rows.size):
        for j in range(X.shape[1]):
            out[j] += wts[k] * X[rows[k], j]
    return out


def noisy_ranking_feedback(order: np.ndarray, labels: np.ndarray, top: int = TOP, inspect: int = 10) -> np.ndarray:
    """The simulated user of Sec. 5.1.2: among the first ``inspect`` presented documents (all
    when fewer), the ``top`` with the highest relevance labels go on top (ties keep the
    presented order)."""
    head = order[:inspect]
    k = min(top, order.size)
    return head[np.argsort(-labels[head], kind="stable")[:k]]


def ranking_rounds(cfg: "CoactiveLearner", learner: "PreferencePerceptron | None", svm: "CoactiveRankSVM | None",
                   X: np.ndarray, labels: np.ndarray, u_all: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                   queries: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The rounds of Sec. 5.1, one per query of ``queries`` (indices into ``starts``/``ends``,
    the row ranges of the queries): the learner presents the query's documents sorted by its
    scores (ties broken at random), the simulated user (``cfg.feedback``) returns a ranking,
    the learner updates on phi(ybar) - phi(y).  Returns each round's regret U(y*) - U(y), U
    the position-weighted true utility ``u_all`` of the top five."""
    regret = np.zeros(queries.size)
    for t, q in enumerate(queries):
        s, e = starts[q], ends[q]
        Xq, u = X[s:e], u_all[s:e]
        w = learner.W[0] if learner is not None else svm.w
        order = np.lexsort((rng.random(e - s), -row_dots(Xq, w)))
        wts = position_weights(e - s)
        y = order[:wts.size]
        regret[t] = np.sort(u)[::-1][:wts.size] @ wts - u[y] @ wts
        if cfg.feedback == "strict":
            ybar = strict_ranking_feedback(order, u, cfg.alpha)
        else:
            ybar = noisy_ranking_feedback(order, labels[s:e])
        delta = weighted_rows(wts, Xq, ybar) - weighted_rows(wts, Xq, y)
        if learner is not None:
            learner.update(delta[None, :])
        else:
            svm.add_pair(delta)
    return regret
