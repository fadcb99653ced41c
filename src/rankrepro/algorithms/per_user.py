"""PRank and OAP-BPM per user on the collaborative task of Yu, Yu & Tresp (2006): the arena's
online ordinal learners beside the Gaussian-process models, on the same users, items and draws.

Yu et al.'s task (:mod:`rankrepro.protocols.gp`): ``n_items`` training movies are drawn at
random; every task user's ranks of them train that user's model, which predicts the user's
ranks of all the other movies.  The models here fit PRank (Crammer & Singer 2005) or OAP-BPM
(Harrington 2003, Algorithm 2) separately for each user, on that user's rated training movies
only: an individual model, like GPR and GPOR (no information flows between users), with the
same prior knowledge of the movies, the kernel K.

**The kernel, not features.**  The movies have no feature vectors, only the correlation
kernel K (:mod:`rankrepro.data.collab_gp`: the cosine between the movies' centred rating
vectors by the feature users).  PRank with a kernel is the dual PRank: w = sum_t alpha_t
phi(x_t) over the rounds of the user's stream, and every score w.phi(x) = sum_t alpha_t
K(x_t, x) needs K only between a training movie and another movie.  Harrington (2003, Sec. 3)
writes OAP-BPM's kernel form the same way.  Rather than writing the PRank update a second
time in dual form, the models give the package's own PRank round and OAP-BPM (the compiled
loops of :class:`.prank.PRank`, called directly, and :class:`.oap.OAPBPM`) an *exact* feature
map of K on what PRank uses: with K_tt = Q Lambda Q^T on the p training movies of the draw,

* a training movie i gets z_i = Lambda^(1/2) Q^T e_i (so z_i.z_j = K_ij between training movies),
* any other movie x gets z_x = Lambda^(-1/2) Q^T K_tx (so z_i.z_x = K_ix for training i),

the Nystroem map on the training movies, which reproduces every inner product PRank computes
(w lies in the span of the training movies) whenever K_tt has full rank, and otherwise on the
span of the training movies' kernel features, which is all w can reach.  Eigenvalues below
``p * eps * max(Lambda)`` are dropped (directions K does not resolve).  The map is computed
once per draw (p <= 400 dimensions) and shared by the users; the predictions are those of the
dual PRank up to rounding (tests/test_per_user.py checks them against PRank on explicit
features with K = X X^T, and against a dual PRank written out in the test).  The empirical
kernel map (x -> K[train, x] as features) was not used: PRank on it is another learner (its
updates move w along K-rows, not along phi(x)), neither Crammer & Singer's nor Harrington's.

**Settings** (fixed before any result of these models was seen): Harrington's protocol for
collaborative filtering (Sec. 4.2, EachMovie): one online pass over the user's training movies
in random order (``n_passes`` = 1), the final rule predicts the held-out movies; OAP-BPM with
N = 100 PRanks and tau = 0.3, the setting the online arena enters (config/arena/online.yaml;
Harrington's Table 2 finds tau = 0.1-0.3 alike).  Thresholds start at 0 and stay ordered
(PRank's Lemma 1; averaging ordered thresholds keeps them ordered).

**Seeds.**  The collab_gp protocol gives its learners no seed (nor may a config: the pipeline
owns ``seed``), so every stream is derived from the trial's draw of training movies (itself
drawn from the protocol's data seed of the trial), the user's index and the ``seed``
hyperparameter (default 0, so that a run is repeatable bit for bit; ``None`` draws fresh
entropy): user u's order of visits comes from
``SeedSequence(seed, spawn_key=(draw, u, 0))``, OAP-BPM's Bernoulli masks from
``(draw, u, 1)`` (``draw``: the CRC-32 of the training movies' indices).  A user's predictions
depend on its own labels and stream only (one user's labels change nothing of another's), and
PRank and OAP-BPM visit each user's movies in the same order (common random numbers).

``em_iters`` is the collab_gp protocol's cap on a fit's iterations (a scale's ``max_steps``
sets it; the paper scale does not): here it caps the passes.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(40, 5)); K = X @ X.T
>>> Y = np.digitize(X @ [1.0, -1.0, 0.5, 0.0, 0.0], [-1.0, 0.0, 1.0])[None, :] + 1
>>> fit = PerUserPRank(n_ranks=4, n_passes=5, seed=0).fit_predict_kernel(K, Y, np.arange(30), np.arange(30, 40))
>>> float(np.mean(fit.pred[0] != Y[0, 30:])) < 0.5
True
"""

from __future__ import annotations

import time
import zlib

import numpy as np
from scipy import sparse

from . import _compiled
from .base import Estimator, OnlineRanker, Range, rows
from .gp import FitResult, GPModel
from .oap import OAPBPM


def kernel_features(K: np.ndarray, train: np.ndarray, predict: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The exact feature map of ``K`` on what PRank computes (the module docstring): (features
    of the training items, features of the items ``predict``), one row per item."""
    K = np.asarray(K, dtype=np.float64)
    Ktt = K[np.ix_(train, train)]
    lam, Q = np.linalg.eigh(0.5 * (Ktt + Ktt.T))
    if lam.size == 0:
        return np.zeros((0, 0)), np.zeros((len(predict), 0))
    keep = lam > max(lam.max(), 0.0) * lam.size * np.finfo(float).eps
    lam, Q = lam[keep], Q[:, keep]
    root = np.sqrt(lam)
    Z_train = Q * root
    Z_pred = (K[np.ix_(predict, train)] @ Q) / root
    return Z_train, Z_pred


def draw_key(train: np.ndarray) -> int:
    """The draw's key in the users' seeds: the CRC-32 of the training items' indices."""
    return zlib.crc32(np.ascontiguousarray(np.asarray(train, dtype=np.int64)).tobytes())


class _PerUser(Estimator):
    """An online ordinal learner of the package fitted for each user separately on the
    kernel's exact feature map (the module docstring); the GP family's interface
    (:meth:`fit_predict_kernel`, and scikit-learn's ``fit``/``predict`` as
    :class:`~rankrepro.algorithms.gp.GPModel` has them)."""

    _constraints = {
        "n_items": Range(int, 1, None), "n_ranks": Range(int, 2, None), "n_passes": Range(int, 1, None),
        "em_iters": Range(int, 1, None, none_ok=True),
    }

    # -- the learner of one user ------------------------------------------------------------
    def _learner(self, seed: np.random.SeedSequence):  # pragma: no cover - abstract
        raise NotImplementedError

    def _root(self) -> np.random.SeedSequence:
        s = self.seed
        return s if isinstance(s, np.random.SeedSequence) else np.random.SeedSequence(s)

    def user_seeds(self, train: np.ndarray, user: int) -> tuple[np.random.SeedSequence, np.random.SeedSequence]:
        """(the stream of user ``user``'s order of visits, the stream of its learner) for the
        draw ``train``."""
        root, key = self._root(), draw_key(train)
        order, learner = (np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, key, user, s))
                          for s in (0, 1))
        return order, learner

    @property
    def passes(self) -> int:
        return int(self.n_passes if self.em_iters is None else min(self.n_passes, self.em_iters))

    # -- fitting ----------------------------------------------------------------------------
    def fit_predict_kernel(self, K: np.ndarray, Y: np.ndarray, train: np.ndarray, predict: np.ndarray,
                           progress=None) -> FitResult:
        """``K`` the items' kernel (m x m), ``Y`` ranks (users x m, 0 = missing), ``train`` the
        training items; returns each user's predicted rank of the items ``predict``, the final
        thresholds of each user's rule (``thresholds``) and, per pass, the online rank loss
        over all users' training rounds (``objective``)."""
        self._validate_params()
        train, predict = np.asarray(train, dtype=np.int64), np.asarray(predict, dtype=np.int64)
        Y = np.asarray(Y)
        Z_train, Z_pred = kernel_features(K, train, predict)
        Z_pred = sparse.csr_matrix(Z_pred)
        Ytr = Y[:, train]
        res = FitResult([])
        losses = np.zeros(self.passes)
        n_rounds = 0
        thresholds = []
        t0 = time.perf_counter()
        for u, row in enumerate(Ytr):
            j = np.flatnonzero(row > 0)
            labels = row[j].astype(np.int64)
            order_seed, learner_seed = self.user_seeds(train, u)
            order = np.random.default_rng(order_seed)
            model = self._learner(learner_seed)
            if j.size == 0:  # no training rank: the rule before any round
                model._ensure_started(sparse.csr_matrix((0, Z_train.shape[1])))
            for p in range(self.passes):
                visit = order.permutation(j.size)
                out = model.fit_online(Z_train[j[visit]], labels[visit]) if j.size else np.zeros(0)
                losses[p] += float(np.sum(np.abs(out - labels[visit])))
            n_rounds += j.size
            res.pred.append(model.predict(Z_pred))
            thresholds.append(np.asarray(model.thresholds_, dtype=np.float64).copy())
            if progress and (u + 1) % 20 == 0:
                progress(f"{u + 1}/{len(Ytr)} users, {time.perf_counter() - t0:.1f}s")
        res.objective = [float(v / max(n_rounds, 1)) for v in losses]
        res.thresholds = np.array(thresholds).reshape(len(Ytr), self.n_ranks - 1)
        return res

    # -- scikit-learn's face: GPModel's (the same checks and kept data, the kernel made on the
    # training and predicted items, the users' ranks through fit_predict_kernel) ----------------
    def fit(self, X, y) -> "_PerUser":
        """Items ``X`` (one row per item: its features; the kernel is their cosine, as the GP
        models' prior) and ranks ``y``: one user's rank (1..n_ranks) of each item, or a
        (n_items, n_users) array, one column per user, 0 where the user did not rate the item.
        ``fit`` checks and keeps the training data; :meth:`predict` fits the users' rules (the
        kernel's feature map is made on the training items) and predicts."""
        return GPModel.fit(self, X, y)

    predict = GPModel.predict
    score = GPModel.score
    _adjust_tags = GPModel._adjust_tags


class PerUserPRank(_PerUser):
    """PRank (Crammer & Singer 2005, Fig. 2; the compiled round of :class:`.prank.PRank`) fitted per user in the
    kernel's feature space: ``n_passes`` online passes over the user's rated training items,
    each in a fresh random order."""

    name = "per_user_prank"

    def __init__(self, *, n_items: int = 100, n_ranks: int = 5, n_passes: int = 1, em_iters: int | None = None,
                 seed=0):
        self.n_items, self.n_ranks, self.n_passes, self.em_iters, self.seed = n_items, n_ranks, n_passes, em_iters, seed

    def _learner(self, seed):
        return _PRankStep(n_ranks=self.n_ranks)


class _PRankStep(OnlineRanker):
    """PRank's state and the package's compiled PRank round and prediction
    (``_compiled.prank_online``, ``_compiled.predict_linear``: the loops
    :class:`.prank.PRank` runs, called here directly, so that these cells' code is that loop
    and not the PRank class's module)."""

    name = "prank_step"
    _dense_rows = True

    def __init__(self, *, n_ranks: int = 5):
        self.n_ranks = n_ranks

    def _init_state(self, n_features: int) -> None:
        self.coef_ = np.zeros(n_features)
        self.thresholds_ = np.zeros(self.n_ranks - 1)

    def _online(self, X, y):
        out = np.empty(X.shape[0], dtype=np.int64)
        _compiled.prank_online(*rows(X), y, self.coef_, self.thresholds_, False, out)
        return out

    def _predict(self, X):
        out = np.empty(X.shape[0], dtype=np.int64)
        _compiled.predict_linear(*rows(X), self.coef_, self.thresholds_, out)
        return out


class PerUserOAPBPM(_PerUser):
    """OAP-BPM (Harrington 2003, Algorithm 2; :class:`.oap.OAPBPM`): ``N`` PRanks per user, each
    shown each round with probability ``tau``, their average rule predicts."""

    name = "per_user_oap_bpm"
    _constraints = {"N": Range(int, 1, None), "tau": Range(float, 0.0, 1.0, left_open=True)}

    def __init__(self, *, n_items: int = 100, n_ranks: int = 5, n_passes: int = 1, N: int = 100, tau: float = 0.3,
                 em_iters: int | None = None, seed=0):
        self.n_items, self.n_ranks, self.n_passes, self.em_iters, self.seed = n_items, n_ranks, n_passes, em_iters, seed
        self.N, self.tau = N, tau

    def _learner(self, seed):
        return OAPBPM(n_ranks=self.n_ranks, N=self.N, tau=self.tau, seed=seed)
