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

from .base import Interval, ParamError


class PreferencePerceptron:
    _constraints = {"n_features": Interval(int, 1, None), "n_users": Interval(int, 1, None),
                    "batch": Interval(int, 1, None), "G": Interval(float, 0.0, None, left_open=True)}

    def __init__(self, *, n_features: int, n_users: int = 1, variant: str = "perceptron", batch: int = 1,
                 radius: float | None = None, G: float = 1.0):
        self.n_features, self.n_users, self.variant = n_features, n_users, variant
        self.batch, self.radius, self.G = batch, radius, G
        for name, rule in self._constraints.items():
            if not rule.check(getattr(self, name)):
                raise ParamError(name, getattr(self, name), rule.describe(), "PreferencePerceptron")
        if variant not in ("perceptron", "convex"):
            raise ParamError("variant", variant, "must be 'perceptron' or 'convex'", "PreferencePerceptron")
        if variant == "convex" and (radius is None or not radius > 0):
            raise ParamError("radius", radius, "the convex variant needs a positive radius", "PreferencePerceptron")
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


class CoactiveLearner:
    """Config-level description of a coactive cell: the learner (``variant``: perceptron,
    convex, or ranksvm -- the Ranking SVM baseline; batch, radius), the simulated user's
    feedback (``feedback``: strict with quality ``alpha``, or noisy; ``noisy_pick``: which of
    several available movies rated one higher the noisy user returns -- ``random`` or ``best``,
    the one of highest true utility) and ``max_users``, the number of users of each group
    simulated (None: all)."""

    name = "preference_perceptron"

    def __init__(self, *, variant: str = "perceptron", batch: int = 1, radius: float | None = None,
                 feedback: str = "strict", alpha: float = 1.0, max_users: int | None = None,
                 noisy_pick: str = "random"):
        self.variant, self.batch, self.radius, self.feedback, self.alpha = variant, batch, radius, feedback, alpha
        self.max_users, self.noisy_pick = max_users, noisy_pick

    @classmethod
    def _param_names(cls) -> list[str]:
        return ["variant", "batch", "radius", "feedback", "alpha", "max_users", "noisy_pick"]

    def validate(self) -> "CoactiveLearner":
        if self.feedback not in ("strict", "noisy"):
            raise ParamError("feedback", self.feedback, "must be 'strict' or 'noisy'", "CoactiveLearner")
        if self.noisy_pick not in ("random", "best"):
            raise ParamError("noisy_pick", self.noisy_pick, "must be 'random' or 'best'", "CoactiveLearner")
        if not Interval(float, 0.0, 1.0, left_open=True).check(self.alpha):
            raise ParamError("alpha", self.alpha, "must be a number in (0, 1]", "CoactiveLearner")
        if self.max_users is not None and not Interval(int, 1, None).check(self.max_users):
            raise ParamError("max_users", self.max_users, "must be an integer >= 1 or null", "CoactiveLearner")
        if self.variant != "ranksvm":
            PreferencePerceptron(n_features=1, variant=self.variant, batch=self.batch, radius=self.radius)
        return self

    def make(self, n_features: int, n_users: int) -> PreferencePerceptron:
        return PreferencePerceptron(n_features=n_features, n_users=n_users, variant=self.variant, batch=self.batch,
                                    radius=self.radius)


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
