"""Batch rankers of document lists for the LETOR experiments (Elsas et al. 2008).

Every ranker is an :class:`~rankrepro.algorithms.base.Estimator` (keyword-only
hyperparameters, one validation, scikit-learn's parameter protocol) with two faces:

* :meth:`BatchRanker.iterate`, a generator that trains step by step and yields
  ``(step, scores)`` after each step (a perceptron iteration, a boosting round, a value of
  C): the scores of the documents of each evaluation set, the first of which is the
  validation set (it also weights committee members).  The LETOR protocol uses it to record
  the validation curves, pick the step by validation NDCG@10, as the paper does, and time
  the training.
* scikit-learn's: ``fit(X, y, qid=..., eval_set=(Xv, yv, qv))`` (groups as query ids, as
  LightGBM's ``LGBMRanker`` takes them) trains the same way and keeps the model of the step
  with the best NDCG@10 on ``eval_set`` (the training set when none is given);
  ``predict(X, qid)`` gives its scores and ``score(X, y, qid)`` its mean NDCG@10 (higher is
  better).

>>> import numpy as np
>>> from rankrepro.algorithms.rankers import RankBoost
>>> X = np.array([[0.0, 1.0], [1.0, 0.0], [0.2, 0.4], [0.9, 0.1]]); y = np.array([0, 2, 0, 1])
>>> r = RankBoost(n_rounds=3).fit(X, y, qid=np.array([1, 1, 2, 2]))
>>> r.score(X, y, qid=np.array([1, 1, 2, 2]))
1.0

* ``perceptron`` (output: last, pocket, average, committee_A, committee_B): see
  :mod:`rankrepro.algorithms.pairwise`; committee members are weighted by their validation
  NDCG@10.
* ``ranksvm``: Joachims' Ranking SVM on the pairwise differences (L1-loss linear SVM,
  solved by dual coordinate descent, Hsieh et al. 2008); the step is the value of C.
* ``rankboost``: RankBoost (Freund, Iyer, Schapire & Singer 2003) with threshold weak
  rankers h(x) = [x_f > theta] on the distribution over preference pairs.
* ``lambdamart``: LambdaMART through LightGBM's lambdarank objective -- not in the paper.
"""

from __future__ import annotations

import time
from typing import ClassVar, Iterator

import numpy as np
from numba import njit

from ._hints import prefetch1, prefetch2
from .base import Estimator, OneOf, QueryRanker, Range, Rule
from .pairwise import ORDERS, PairwisePerceptron, committee_scores, make_pairs, mean_ndcg_columns, pair_differences

EvalSet = tuple[np.ndarray, np.ndarray, np.ndarray]  # X, y, qid


def _warm_up() -> None:
    """Compile (or load from the cache) the kernels on a toy problem, so that a timed fit
    measures training, not compilation."""
    X = np.array([[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]])
    y, q = np.array([1, 0, 0]), np.zeros(3, dtype=np.int64)
    PairwisePerceptron(n_iter=1, committee=1).fit(X, y, q)
    hi, lo, _ = make_pairs(y, q)
    _svm_dcd(X[hi] - X[lo], 1.0, 1, 0.1, np.array([1], dtype=np.uint64), np.zeros(hi.size), np.zeros(2))


class BatchRanker(QueryRanker):
    """A learner of document rankings from graded relevance labels grouped by query."""

    name: ClassVar[str] = "batch_ranker"

    def iterate(self, X, y, qid, evals: list[EvalSet]) -> Iterator[tuple[float, list[np.ndarray]]]:
        raise NotImplementedError  # pragma: no cover

    # -- scikit-learn's face ------------------------------------------------------------
    def fit(self, X, y, qid=None, eval_set=None) -> "BatchRanker":
        """Train on documents ``X`` with relevance labels ``y`` (integers >= 0) grouped by
        query ``qid`` (one query when None); keep the step with the best mean NDCG@10 on
        ``eval_set`` = (X, y, qid) (the first such step; the training set when None), as the
        LETOR protocol picks it."""
        from ..metrics import per_query

        self._reset()
        self._validate_params()
        X, y, qid = self._check_Xyq(X, y, qid)
        ev = (X, y, qid) if eval_set is None else self._check_Xyq(*eval_set)
        best = -np.inf
        for step, (scores,) in self.iterate(X, y, qid, [ev]):
            v = float(per_query(scores, ev[1], ev[2], ("ndcg@10",))["ndcg@10"].mean())
            if v > best:
                best, self.best_step_, self.model_ = v, step, self._snapshot()
        self.best_score_ = best
        self.n_features_in_ = X.shape[1]
        return self

    def _snapshot(self):  # pragma: no cover - abstract
        """What scores new documents at the current step."""
        raise NotImplementedError

    def _score_with(self, model, X, qid) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _scores(self, X, qid):
        return self._score_with(self.model_, X, qid)


class PerceptronRanker(BatchRanker):
    name = "perceptron"
    _constraints = {"n_iter": Range(int, 1, None), "committee": Range(int, 1, None),
                    "alpha": Range(float, 0.0, 1.0, left_open=True),
                    "output": OneOf(("last", "pocket", "average", "committee_A", "committee_B")),
                    "alpha_iterations": Range(int, 1, None), "order": OneOf(ORDERS)}

    def __init__(self, *, output: str = "committee_A", n_iter: int = 50, committee: int = 30, alpha: float = 0.85,
                 alpha_iterations: int = 100, order: str = "random", seed=None):
        self.output, self.n_iter, self.committee, self.alpha, self.seed = output, n_iter, committee, alpha, seed
        self.alpha_iterations, self.order = alpha_iterations, order

    def iterate(self, X, y, qid, evals):
        _warm_up()
        t0 = time.process_time()
        p = PairwisePerceptron(n_iter=self.n_iter, committee=self.committee, alpha=self.alpha,
                               alpha_iterations=self.alpha_iterations, order=self.order, seed=self.seed)
        p.start(X, y, qid)
        #: CPU time spent learning (pair construction and passes), without per-step evaluation
        self.train_seconds_ = time.process_time() - t0
        Xv, yv, qv = evals[0]
        for t in range(1, self.n_iter + 1):
            t0 = time.process_time()
            p.partial_fit_iteration()
            self.train_seconds_ += time.process_time() - t0
            # what training up to this step costs, and how many pairs it visited
            self.step_seconds_, self.step_pairs_ = self.train_seconds_, t * p.n_pairs_
            if self.output.startswith("committee"):
                W, _ = p.members()
                weights = mean_ndcg_columns(Xv @ W.T, yv, qv, 10)
                self._now = (W, weights)
                yield t, [committee_scores(W, weights, Xe, qe, self.output[-1]) for Xe, _, qe in evals]
            else:
                w = getattr(p, self.output)()
                self._now = w
                yield t, [Xe @ w for Xe, _, _ in evals]

    def _snapshot(self):
        return tuple(np.array(a) for a in self._now) if isinstance(self._now, tuple) else np.array(self._now)

    def _score_with(self, model, X, qid):
        if self.output.startswith("committee"):
            return committee_scores(model[0], model[1], X, qid, self.output[-1])
        return X @ model


# -------------------------------------------------------------------------------------
# Ranking SVM
# -------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _xorshift(state):
    x = state[0]
    x ^= (x << np.uint64(13)) & np.uint64(0xFFFFFFFFFFFFFFFF)
    x ^= x >> np.uint64(7)
    x ^= (x << np.uint64(17)) & np.uint64(0xFFFFFFFFFFFFFFFF)
    state[0] = x
    return x


#: how many pairs ahead of the one being visited the solver prefetches its row, alpha and Q
_AHEAD = 6
#: the size of D (elements) above which it prefetches: 4 MB of float64
_FAR = 1 << 19


@njit(cache=True, nogil=True)
def _svm_dcd(D, C, max_pass, eps, state, alpha, w):
    """L1-loss linear SVM dual coordinate descent on rows of D (labels all +1).  The
    visiting order is reshuffled each pass by a xorshift generator seeded through
    ``state`` (a one-element uint64 array), so a fit is repeatable bit for bit.

    The rows, alpha and Q of the pair ``_AHEAD`` places further in the pass's order are
    prefetched (:mod:`._hints`): on a LETOR fold D is 74 MB, read in random order, and the
    pass waited on memory; the arithmetic and its order are untouched, so are the numbers."""
    P, d = D.shape
    Q = np.empty(P)
    for p in range(P):
        s = 0.0
        for j in range(d):
            s += D[p, j] * D[p, j]
        Q[p] = s
    order = np.arange(P)
    # the hints pay beyond the caches only (a coactive user's few hundred pairs stay in them)
    far = P * d > _FAR
    for it in range(max_pass):
        for i in range(P - 1, 0, -1):  # Fisher-Yates
            k = np.int64(_xorshift(state) % np.uint64(i + 1))
            order[i], order[k] = order[k], order[i]
        pg_max, pg_min = -np.inf, np.inf
        for r in range(P):
            if far and r + _AHEAD < P:
                q = order[r + _AHEAD]
                for j in range(0, d, 8):  # every 64-byte line of the row
                    prefetch2(D, q, j)
                prefetch2(D, q, d - 1)
                prefetch1(alpha, q)
                prefetch1(Q, q)
            p = order[r]
            if Q[p] == 0.0:
                continue
            G = -1.0
            for j in range(d):
                G += w[j] * D[p, j]
            a = alpha[p]
            if a == 0.0:
                pg = min(G, 0.0)
            elif a == C:
                pg = max(G, 0.0)
            else:
                pg = G
            pg_max = max(pg_max, pg)
            pg_min = min(pg_min, pg)
            if pg != 0.0:
                na = min(max(a - G / Q[p], 0.0), C)
                da = na - a
                if da != 0.0:
                    alpha[p] = na
                    for j in range(d):
                        w[j] += da * D[p, j]
        if pg_max - pg_min < eps:
            return it + 1
    return max_pass


class RankSVM(BatchRanker):
    name = "ranksvm"

    _constraints = {
        "C_grid": Rule(lambda v: isinstance(v, (list, tuple)) and len(v) > 0 and all(
            c == "svmlight" or (isinstance(c, (int, float)) and not isinstance(c, bool) and c > 0) for c in v),
            "must be a non-empty list of positive C values ('svmlight': SVMlight's default, 1 / (mean ||x||)^2)"),
        "max_pass": Range(int, 1, None), "eps": Range(float, 0.0, None, True)}

    def __init__(self, *, C_grid=(0.001, 0.01, 0.1, 1.0), max_pass: int = 200, eps: float = 0.1, seed=None):
        self.C_grid, self.max_pass, self.eps, self.seed = C_grid, max_pass, eps, seed

    @staticmethod
    def svmlight_default_C(D: np.ndarray) -> float:
        """SVMlight's default C, 1 / (mean ||x||)^2 over the training examples, which in
        ranking mode (-z p) are the pair differences: SVM-Light V6.02's svm_learn.c sets
        svm_c = 1 / r_delta_avg^2 with r_delta_avg = estimate_r_delta_average(), the mean
        Euclidean length of the examples.  (1 / mean ||x||^2 is smaller, by Jensen.)"""
        return float(1.0 / np.mean(np.sqrt(np.einsum("ij,ij->i", D, D))) ** 2)

    def fit_C(self, D: np.ndarray, C: float, seed: int) -> np.ndarray:
        w = np.zeros(D.shape[1])
        state = np.array([seed | 1], dtype=np.uint64)
        self.passes_ = _svm_dcd(D, float(C), int(self.max_pass), float(self.eps), state, np.zeros(D.shape[0]), w)
        return w

    def iterate(self, X, y, qid, evals):
        _warm_up()
        t0 = time.process_time()
        hi, lo, _ = make_pairs(y, qid)
        D = pair_differences(np.ascontiguousarray(X, dtype=np.float64), hi, lo)
        seed = int(np.random.default_rng(self.seed).integers(1, 2**62))
        setup = time.process_time() - t0
        self.train_seconds_ = setup
        for C in self.C_grid:
            C = self.svmlight_default_C(D) if C == "svmlight" else float(C)
            t0 = time.process_time()
            w = self.fit_C(D, C, seed)
            fit = time.process_time() - t0
            self.train_seconds_ += fit
            # what training at this C alone costs (setup + one fit), and its pair visits
            self.step_seconds_, self.step_pairs_ = setup + fit, self.passes_ * D.shape[0]
            self.C_ = C
            self._now = w
            yield C, [Xe @ w for Xe, _, _ in evals]

    def _snapshot(self):
        return self._now.copy()

    def _score_with(self, model, X, qid):
        return X @ model


# -------------------------------------------------------------------------------------
# RankBoost
# -------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _rankboost_round(X, sorted_idx, hi, lo, Dp, pi):
    """Best threshold weak ranker for the pair distribution Dp: returns (f, theta, r)."""
    n, F = X.shape
    pi[:] = 0.0
    for p in range(hi.shape[0]):
        pi[hi[p]] += Dp[p]
        pi[lo[p]] -= Dp[p]
    best_r, best_f, best_t = 0.0, 0, np.inf
    for f in range(F):
        acc = 0.0
        for k in range(n - 1):  # documents in decreasing x_f; threshold between k and k+1
            i = sorted_idx[k, f]
            acc += pi[i]
            v, v_next = X[i, f], X[sorted_idx[k + 1, f], f]
            if v > v_next and abs(acc) > abs(best_r):
                best_r, best_f, best_t = acc, f, 0.5 * (v + v_next)
    return best_f, best_t, best_r


class RankBoost(BatchRanker):
    name = "rankboost"
    _constraints = {"n_rounds": Range(int, 1, None)}

    def __init__(self, *, n_rounds: int = 300, seed=None):
        self.n_rounds, self.seed = n_rounds, seed

    def iterate(self, X, y, qid, evals):
        X = np.asarray(X, dtype=np.float64)
        hi, lo, _ = make_pairs(y, qid)
        Dp = np.full(hi.size, 1.0 / max(hi.size, 1))
        sorted_idx = np.ascontiguousarray(np.argsort(-X, axis=0, kind="stable"))
        pi = np.zeros(X.shape[0])
        scores = [np.zeros(Xe.shape[0]) for Xe, _, _ in evals]
        self.weak_ = []
        for t in range(1, self.n_rounds + 1):
            f, theta, r = _rankboost_round(X, sorted_idx, hi, lo, Dp, pi)
            r = float(np.clip(r, -1 + 1e-12, 1 - 1e-12))
            a = 0.5 * np.log((1 + r) / (1 - r))
            h = (X[:, f] > theta).astype(np.float64)
            Dp = Dp * np.exp(a * (h[lo] - h[hi]))
            Dp /= Dp.sum()
            self.weak_.append((int(f), float(theta), float(a)))
            for sc, (Xe, _, _) in zip(scores, evals):
                sc += a * (Xe[:, f] > theta)
            yield t, [sc.copy() for sc in scores]

    def _snapshot(self):
        return list(self.weak_)

    def _score_with(self, model, X, qid):
        out = np.zeros(X.shape[0])
        for f, theta, a in model:
            out += a * (X[:, f] > theta)
        return out


class LambdaMART(BatchRanker):
    """LambdaMART (LightGBM, objective lambdarank) -- an extra row, not in the paper."""

    name = "lambdamart"
    _constraints = {"n_rounds": Range(int, 1, None), "learning_rate": Range(float, 0.0, None, True),
                    "num_leaves": Range(int, 2, None)}

    def __init__(self, *, n_rounds: int = 300, learning_rate: float = 0.05, num_leaves: int = 15, seed=None):
        self.n_rounds, self.learning_rate, self.num_leaves, self.seed = n_rounds, learning_rate, num_leaves, seed

    def iterate(self, X, y, qid, evals):
        import lightgbm as lgb

        order = np.argsort(qid, kind="stable")
        groups = np.unique(qid[order], return_counts=True)[1]
        seed = int(np.random.default_rng(self.seed).integers(2**31 - 1))
        params = {"objective": "lambdarank", "learning_rate": self.learning_rate, "num_leaves": self.num_leaves,
                  "seed": seed, "num_threads": 1, "verbose": -1, "deterministic": True, "force_row_wise": True}
        train = lgb.Dataset(X[order], label=y[order], group=groups)
        model = lgb.train(params, train, num_boost_round=self.n_rounds)
        # every tenth round, and the last
        for t in sorted(set(range(10, self.n_rounds + 1, 10)) | {self.n_rounds}):
            self._now = (model, t)
            yield t, [model.predict(Xe, num_iteration=t) for Xe, _, _ in evals]

    def _snapshot(self):
        return self._now

    def _score_with(self, model, X, qid):
        return model[0].predict(X, num_iteration=model[1])


RANKERS: dict[str, type[BatchRanker]] = {c.name: c for c in (PerceptronRanker, RankSVM, RankBoost, LambdaMART)}


class FixedList(Estimator):
    """A given ranked list of relevant (R) and non-relevant (N) documents, best first: the
    worked example of Elsas et al. (2008), Sec. 3, evaluated exactly (not a learner)."""

    name = "fixed_list"

    _constraints = {"ranking": Rule(lambda v: isinstance(v, str) and len(v) > 0 and set(v) <= {"R", "N"},
                                    "must be a non-empty string of R and N")}

    def __init__(self, *, ranking: str = "RN"):
        self.ranking = ranking

    def labels(self) -> np.ndarray:
        return np.array([1 if c == "R" else 0 for c in self.ranking])


LISTS: dict[str, type[Estimator]] = {FixedList.name: FixedList}
