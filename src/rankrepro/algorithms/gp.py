"""Gaussian-process ordinal regression, individual and collaborative (Yu, Yu & Tresp 2006).

Four models, one machinery.  Every user j has a latent function f_j over the m items with
prior N(h, Sigma); the likelihood of a label is

* GPR: y = f + c_j + noise, noise ~ N(0, sigma^2) (c_j: the user's mean training label, see
  :class:`GPModel`);
* GPOR (Chu & Ghahramani 2005): P(y | f) = Phi((b_y - f)/sigma) - Phi((b_{y-1} - f)/sigma),
  b_0 = -inf < b_1 < ... < b_{r-1} < b_r = +inf, per user.

Both likelihoods reach the posterior through Gaussian *sites* on the labelled items, in
natural parameters (precision ``tau``, shift ``nu``): exact for GPR (tau = 1/sigma^2,
nu = (y - c)/sigma^2), expectation propagation for GPOR (:func:`ep_ordinal`).  Given the
sites, the posterior over *all* items is N(h + G a, Sigma - G W G^T) with G = Sigma[:, J],
a = (I + T K)^-1 (nu - T h_J) and W = (K + T^-1)^-1, K = Sigma[J, J] (:func:`site_posterior`).

The collaborative EM (Sec. 3) alternates that E-step for every user with the M-step of
eq. 3, h <- mean_j f_j, Sigma <- mean_j [(f_j - h)(f_j - h)^T + Sigma_j], plus each user's
likelihood parameters.  Because every labelled item is a training item, the M-step is a
low-rank correction living on the p training items: with a_j scattered into R^p,
h <- h + G_tr abar and Sigma <- Sigma + G_tr C G_tr^T, C = cov_j(a_j) - mean_j W_j
(G_tr = Sigma[:, train]); :class:`CollabPrior` keeps only Sigma[:, train] and diag(Sigma),
so an EM iteration costs O(m p^2 + sum_j n_j^3) instead of O(m^2 sum_j n_j)
(:mod:`rankrepro.algorithms.reference` has the plain version, eq. 3 as written).

The linear algebra, the ordinal likelihood and its EP are in :mod:`.ep`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import linalg, optimize

from .base import Boolean, Estimator, OneOf, Range, check_array, check_target
from .ep import (LOG_2PI, EPResult, SitePosterior, _pack, ep_ordinal_many, fit_ordinal_params, initial_thresholds,
                 predict_ordinal, site_posterior, thresholds_from, uniform_thresholds)
from .feature_maps import cosine_kernel


# -------------------------------------------------------------------------------------
# the prior shared by all users, kept on the training items
# -------------------------------------------------------------------------------------
@dataclass
class CollabPrior:
    """N(h, Sigma) over m items, represented by h, G = Sigma[:, train] (m x p) and
    d = diag(Sigma): all an EM iteration and the predictions need.  ``G0``, ``d0``: the same
    pieces of the base kernel K0, for the hyper-prior of :meth:`m_step`."""
    h: np.ndarray
    G: np.ndarray
    d: np.ndarray
    train: np.ndarray
    G0: np.ndarray | None = None
    d0: np.ndarray | None = None

    @classmethod
    def from_kernel(cls, K: np.ndarray, train: np.ndarray) -> "CollabPrior":
        G0, d0 = K[:, train].copy(), np.diag(K).copy()
        return cls(np.zeros(K.shape[0]), G0.copy(), d0.copy(), np.asarray(train), G0, d0)

    @property
    def S(self) -> np.ndarray:
        """Sigma[train, train]."""
        return self.G[self.train]

    def m_step(self, J: list[np.ndarray], posts: list["SitePosterior"], hyper: float = 0.0) -> None:
        """Eq. 3 from every user's site posterior (``J[u]``: user u's labelled items in
        training-item coordinates): with a_j and W_j scattered onto the training items,
        h += G abar; Sigma += G C G^T with C = cov(a) - mean W.

        ``hyper`` = pi > 0: the MAP estimate under the Normal-Inverse-Wishart hyper-prior the
        paper mentions and leaves out (Sec. 2.2; Schwaighofer, Tresp & Yu 2005; Yu, Tresp &
        Schwaighofer 2005), h ~ N(0, Sigma / pi), Sigma ~ IW with pi pseudo-users at the base
        kernel K0 (one weight for both): with n users and fbar = mean_j f_j,
        h = n fbar / (pi + n), Sigma = [pi K0 + pi n / (pi + n) fbar fbar^T
        + n Sigma_eq3] / (pi + n), Sigma_eq3 the scatter of eq. 3 around fbar.  pi = 0 is eq. 3."""
        p = self.train.size
        A = np.zeros((len(J), p))
        W_mean = np.zeros((p, p))
        for u, (j, post) in enumerate(zip(J, posts)):
            A[u, j] = post.a
            W_mean[np.ix_(j, j)] += post.W
        W_mean /= len(J)
        abar = A.mean(axis=0)
        Ac = A - abar
        C = Ac.T @ Ac / A.shape[0] - W_mean
        C = 0.5 * (C + C.T)
        GC = self.G @ C
        fbar = self.h + self.G @ abar
        d = self.d + np.einsum("ij,ij->i", GC, self.G)
        G = self.G + GC @ self.S
        if hyper > 0:
            n = float(len(J))
            tot = hyper + n
            outer = hyper * n / tot
            G = (hyper * self.G0 + outer * np.outer(fbar, fbar[self.train]) + n * G) / tot
            d = (hyper * self.d0 + outer * fbar * fbar + n * d) / tot
            fbar = (n / tot) * fbar
        self.h, self.d, self.G = fbar, d, G


def cgpr_em(prior: CollabPrior, J: list[np.ndarray], targets: list[np.ndarray], sigma2: float, iters: int,
            tol: float = 0.0, objective: list[float] | None = None, progress=None, hyper: float = 0.0) -> float:
    """The EM of CGPR (Sec. 3.1), updating ``prior`` in place: the exact E-step for every
    user, then eq. 3 for h and Sigma and sigma^2 = (1/sum n_j) sum_j (|y_j - f_j|^2 +
    tr Sigma_j[J, J]) (one sigma shared by the users, as in the paper).  ``J[u]`` are user u's
    labelled items in training-item coordinates, ``targets[u]`` their centred labels.
    Appends the log evidence sum_j log N(y_j; h_J, Sigma_JJ + sigma^2 I) of each E-step to
    ``objective``; stops early when its relative change is below ``tol``.  ``hyper``: the
    hyper-prior's weight (:meth:`CollabPrior.m_step`; 0 = eq. 3 as printed).  Returns sigma^2."""
    objective = [] if objective is None else objective
    for it in range(iters):
        S = prior.S
        hJ = prior.h[prior.train]
        posts = []
        obj, sq, n_lab = 0.0, 0.0, 0
        for u, j in enumerate(J):
            post = site_posterior(S[np.ix_(j, j)], hJ[j], np.full(j.size, 1 / sigma2), targets[u] / sigma2)
            posts.append(post)
            obj += _gauss_evidence(post, targets[u], hJ[j], sigma2)
            sq += float(np.sum((targets[u] - post.post_mean) ** 2) + np.sum(post.post_var))
            n_lab += j.size
        objective.append(obj)
        if progress:
            progress(f"EM {it + 1}/{iters}: log evidence {obj:.3f}, sigma {np.sqrt(sigma2):.4f}")
        if len(objective) > 1 and abs(obj - objective[-2]) <= tol * abs(obj):
            break
        prior.m_step(J, posts, hyper)
        sigma2 = max(sq / max(n_lab, 1), 1e-8)
    return sigma2


# -------------------------------------------------------------------------------------
# the four models
# -------------------------------------------------------------------------------------
@dataclass
class FitResult:
    """Predictions on the requested items for every user, and the fit's history."""
    pred: list[np.ndarray]
    objective: list[float] = field(default_factory=list)
    sigma: np.ndarray | None = None
    thresholds: np.ndarray | None = None
    ep_sweeps: list[int] = field(default_factory=list)
    ep_unconverged: int = 0
    #: likelihood-parameter searches run, and how many stopped at ``param_fit_iters``
    param_fits: int = 0
    param_fits_capped: int = 0
    #: the predictions under every value of ``ordinal_predict`` (the fit does not depend on it:
    #: a cell that differs only in it is read off the same fit, GPModel.PREDICT_ONLY)
    preds: dict[str, list[np.ndarray]] = field(default_factory=dict)


#: the values of ``ordinal_predict``
PREDICT_RULES = ("mode", "median")


class GPModel(Estimator):
    """GPR / GPOR, individual or collaborative (CGPR / CGPOR).

    ``likelihood``: gaussian (GPR) or ordinal (GPOR); ``collaborative``: learn h and Sigma by
    the EM of Sec. 3, else each user's GP keeps the prior h = 0, Sigma = kernel; ``n_items``:
    the number of training items (a protocol parameter, swept in the tables); ``sigma0``:
    the initial noise (the paper: 0.1 for GPR models, 1 for GPOR models); ``em_iters``: EM
    iterations (collaborative) or likelihood-parameter updates (individual GPOR);
    ``tol``: stop early when the objective's relative change falls below it; ``hyper``: the
    weight of the Normal-Inverse-Wishart hyper-prior on h and Sigma in the collaborative M-step
    (0: none, eq. 3 as the paper prints it; see :meth:`CollabPrior.m_step`);
    ``threshold_init`` (GPOR): ``quantile`` -- the normal quantiles of the user's label
    frequencies (:func:`initial_thresholds`), or ``uniform`` -- equally spaced on
    [-1, 1] times sqrt(1 + sigma0^2) (:func:`uniform_thresholds`); ``ordinal_predict`` (GPOR):
    the predicted rank is the predictive distribution's ``mode`` (minimises the zero-one
    error) or ``median`` (minimises the absolute error); ``likelihood_step`` (GPOR): each
    iteration's step on a user's thresholds and sigma is ``checked`` -- EP is run again at the
    proposed parameters and the step halved (at most 4 times) until the EP evidence does not
    fall, and the M-step uses the posterior of the step taken -- or ``unchecked``: taken as
    proposed, the M-steps (likelihood parameters and h, Sigma) both from the E-step's posterior,
    as a textbook EM (no EP re-runs: about half the EP runs of a fit); ``param_fit_iters`` (GPOR):
    the L-BFGS iterations of each search for the cavity-fixed optimum of the thresholds and sigma
    (one search over all users per EM iteration; :class:`FitResult` counts those that stopped at
    the cap).

    GPR labels are centred by the user's mean training label c_j (added back to predict):
    with a zero-mean prior of unit variance, raw 1..5 labels would be shrunk towards 0.
    (GPOR needs no offset: its thresholds absorb it.)  GPR predicts the nearest rank to the
    posterior mean; GPOR the most probable rank under the predictive distribution (or its
    median, ``ordinal_predict``)."""

    name = "gp_model"
    #: keep a converged EP result whose parameters and prior did not move instead of running it
    #: again (the same result bit for bit; False: every user's EP at every E-step, as before --
    #: the benchmark's and the tests' reference)
    _reuse_ep = True
    #: start an EP run warm from a converged run at the same prior with that run's last marginals
    #: instead of factoring B again for them (the same result bit for bit; False: as before)
    _reuse_marginals = True
    #: how EP computes each sweep's marginals (:data:`rankrepro.algorithms.ep.EP_LINALG`), for the
    #: collaborative and the individual GPOR: "solve" (the triangular solve) or "inverse" (from
    #: diag(B^-1), issue 60 item 4: the same EP fixed point, other rounding).  Both keep the solve:
    #: the inverse gains x1.2-1.3 on CGPOR, x1.2 on GPOR, and moves cells of both beyond their
    #: platform spread (docs/benchmarks.md, "The inverse of B's factor"); it is kept as an option
    _ep_linalg = {True: "solve", False: "solve"}
    #: parameters that change only how the fitted model predicts, never the fit: every rule's
    #: predictions are in FitResult.preds (rankrepro.pipeline.cells.reread_of)
    PREDICT_ONLY = ("ordinal_predict",)
    _constraints = {
        "likelihood": OneOf(("gaussian", "ordinal")), "collaborative": Boolean(),
        "n_items": Range(int, 1, None), "em_iters": Range(int, 1, None),
        "sigma0": Range(float, 0.0, None, left_open=True), "tol": Range(float, 0.0, None),
        "n_ranks": Range(int, 2, None), "hyper": Range(float, 0.0, None),
        "threshold_init": OneOf(("quantile", "uniform")), "ordinal_predict": OneOf(PREDICT_RULES),
        "likelihood_step": OneOf(("checked", "unchecked")), "param_fit_iters": Range(int, 1, None),
    }

    def __init__(self, *, likelihood: str = "gaussian", collaborative: bool = False, n_items: int = 100,
                 sigma0: float = 0.1, em_iters: int = 20, tol: float = 1e-5, n_ranks: int = 5,
                 hyper: float = 0.0, threshold_init: str = "quantile", ordinal_predict: str = "mode",
                 likelihood_step: str = "checked", param_fit_iters: int = 50):
        self.likelihood, self.collaborative, self.n_items = likelihood, collaborative, n_items
        self.sigma0, self.em_iters, self.tol, self.n_ranks = sigma0, em_iters, tol, n_ranks
        self.hyper, self.threshold_init, self.ordinal_predict = hyper, threshold_init, ordinal_predict
        self.likelihood_step, self.param_fit_iters = likelihood_step, param_fit_iters

    # -- scikit-learn's face --------------------------------------------------------------
    def fit(self, X, y) -> "GPModel":
        """Items ``X`` (one row per item: its features, e.g. feature users' centred ratings;
        the prior kernel is their cosine, :func:`~rankrepro.algorithms.feature_maps.cosine_kernel`)
        and ranks ``y``: one user's rank (1..n_ranks) of each item, or a (n_items, n_users)
        array, one column per user, 0 where the user did not rate the item (several users are
        what the collaborative models learn from).

        The paper's models are transductive (Sec. 4: the test items enter the prior's kernel),
        so ``fit`` checks and keeps the training data and :meth:`predict` runs the EM with the
        items to predict in the kernel: the same computation as the experiments'.
        ``n_items`` is the experiments' protocol parameter and is not used here."""
        self._reset()
        self._validate_params()
        owner = type(self).__name__
        X = check_array(X, owner)
        y_arr = np.asarray(y) if y is not None else None
        multi = y_arr is not None and y_arr.ndim == 2
        Y = check_target(y, X.shape[0], owner, low=0 if multi else 1, high=self.n_ranks, ndim=(1, 2))
        self.X_fit_, self.Y_fit_ = X, (Y if multi else Y[:, None]).T.copy()
        self.multi_output_ = multi
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X) -> np.ndarray:
        """Each user's predicted rank of each item of ``X``: shape (n, ) for one user, (n,
        n_users) for several."""
        self._check_fitted()
        X = check_array(X, type(self).__name__, n_features=self.n_features_in_)
        n, m = self.X_fit_.shape[0], X.shape[0]
        K = cosine_kernel(np.vstack([self.X_fit_, X]))
        Y = np.hstack([self.Y_fit_, np.zeros((self.Y_fit_.shape[0], m), dtype=np.int64)])
        res = self.fit_predict_kernel(K, Y, np.arange(n), np.arange(n, n + m))
        P = np.stack(res.pred, axis=1).astype(np.int64)
        return P if self.multi_output_ else P[:, 0]

    def score(self, X, y) -> float:
        """Minus the mean absolute error over the rated entries (higher is better)."""
        P = self.predict(X)
        Y = np.asarray(y)
        Y = Y.reshape(P.shape)
        seen = Y > 0
        return -float(np.mean(np.abs(P[seen] - Y[seen])))

    def _adjust_tags(self, tags) -> None:
        tags.target_tags.positive_only = True
        tags.target_tags.multi_output = True
        tags.non_deterministic = False

    # -- fitting -------------------------------------------------------------------------
    def fit_predict_kernel(self, K: np.ndarray, Y: np.ndarray, train: np.ndarray, predict: np.ndarray,
                    progress=None) -> FitResult:
        """``K`` the prior kernel (m x m), ``Y`` ranks (users x m, 0 = missing), ``train`` the
        training items; returns each user's predicted rank on the items ``predict``."""
        from threadpoolctl import threadpool_limits

        prior = CollabPrior.from_kernel(K, np.asarray(train))
        Ytr = Y[:, prior.train]
        J = [np.flatnonzero(row > 0) for row in Ytr]
        labels = [row[j].astype(np.int64) for row, j in zip(Ytr, J)]
        # the per-user matrices are small: BLAS threads only add overhead (measured ~7x)
        with threadpool_limits(limits=1, user_api="blas"):
            if self.likelihood == "gaussian":  # the rounded mean, whatever ordinal_predict says
                res = self._fit_gaussian(prior, J, labels, predict, progress)
                res.preds = {rule: res.pred for rule in PREDICT_RULES}
                return res
            return self._fit_ordinal(prior, J, labels, predict, progress)

    def _fit_gaussian(self, prior: CollabPrior, J, labels, predict, progress) -> FitResult:
        offset = np.array([lab.mean() if lab.size else 0.0 for lab in labels])
        targets = [lab - c for lab, c in zip(labels, offset)]
        res = FitResult([])
        if self.collaborative:
            sigma2 = cgpr_em(prior, J, targets, self.sigma0 ** 2, self.em_iters, self.tol, res.objective, progress,
                             self.hyper)
            noise = np.full(len(J), sigma2)
            res.sigma = np.sqrt(noise)
        else:  # the fixed prior (h = 0); each user's sigma by its evidence
            res.sigma = np.array([_fit_gpr_sigma(prior.S[np.ix_(j, j)], t, self.sigma0) for j, t in zip(J, targets)])
            noise = res.sigma ** 2
        S, hJ = prior.S, prior.h[prior.train]
        Gp, hp = prior.G[predict], prior.h[predict]
        for j, t, c, s2 in zip(J, targets, offset, noise):
            post = site_posterior(S[np.ix_(j, j)], hJ[j], np.full(j.size, 1 / s2), t / s2)
            res.pred.append(self._round(hp + Gp[:, j] @ post.a + c))
        return res

    def _fit_ordinal(self, prior: CollabPrior, J, labels, predict, progress) -> FitResult:
        """Per iteration: EP for every user at the current likelihood parameters and prior
        (the objective is the sum of the EP log evidences); a step on each user's thresholds
        and sigma (the cavity-fixed optimum, halved until the EP evidence does not fall, else
        no step; ``likelihood_step="unchecked"``: the optimum as it is); then, when
        collaborative, the M-step on h and Sigma."""
        n_users, r = len(J), self.n_ranks
        init = initial_thresholds if self.threshold_init == "quantile" else uniform_thresholds
        params = np.array([_pack(init(lab, r, self.sigma0), self.sigma0) for lab in labels])
        res = FitResult([])
        eps: list[EPResult] = [None] * n_users  # type: ignore[list-item]
        current = np.zeros(n_users, dtype=bool)  # eps[u] ran at params[u] and the present prior
        # the M-steps made so far, and the count at which each eps[u] ran: a run at the present
        # prior left the marginals of its sites, which the next run from them starts from
        prior_moves = 0
        eps_prior = np.full(n_users, -1)

        def run_eps(users, P, warm, sweeps):
            """EP for ``users`` (row k of ``P``: user users[k]'s parameters, ``warm[k]`` its warm
            start or None), all in lock-step (:func:`ep_ordinal_many`: the same results as one
            :func:`ep_ordinal` per user); each run's sweeps are appended to ``sweeps[u]``."""
            problems, marginals = [], []
            for u, P_u, w in zip(users, P, warm):
                j = J[u]
                problems.append((S[np.ix_(j, j)], hJ[j], labels[u], thresholds_from(P_u[:-1]), float(np.exp(P_u[-1])),
                                 *((w.tau, w.nu) if w is not None else (None, None))))
                # the warm start's marginals hold for the same K and h: the prior has not moved
                # since it ran (they do not depend on the thresholds or sigma)
                marginals.append(w.marginals if w is not None and self._reuse_marginals
                                 and eps_prior[u] == prior_moves else None)
            path = self._ep_linalg[bool(self.collaborative)]
            out = ep_ordinal_many(problems, marginals=marginals, linalg_path=path)
            for u, ep in zip(users, out):
                sweeps[u].append(ep.sweeps)
                res.ep_unconverged += int(not ep.converged)
            return out

        def record(sweeps):  # the runs' sweeps, user by user as the runs were made one user at a time
            for s in sweeps:
                res.ep_sweeps.extend(s)

        for it in range(self.em_iters):
            S, hJ = prior.S, prior.h[prior.train]
            sweeps: list[list[int]] = [[] for _ in range(n_users)]
            # a user whose converged EP ran at its present parameters and prior (GPOR after a
            # checked step, taken or not: no M-step moved the prior) is not run again: from its
            # own converged sites EP's first sweep moves none by tol, so it would stop there and
            # return the same result bit for bit (one sweep saved per user and iteration)
            todo = [u for u in range(n_users) if not (self._reuse_ep and current[u] and eps[u].converged)]
            for u, ep in zip(todo, run_eps(todo, params[todo], [eps[u] for u in todo], sweeps)):
                eps[u] = ep
                eps_prior[u] = prior_moves
            current[:] = True
            record(sweeps)
            obj = float(sum(e.log_z for e in eps))
            res.objective.append(obj)
            if progress:
                progress(f"EM {it + 1}/{self.em_iters}: EP log evidence {obj:.3f}")
            if (len(res.objective) > 1 and abs(obj - res.objective[-2]) <= self.tol * abs(obj)) \
                    or it == self.em_iters - 1:
                break
            proposal, capped = fit_ordinal_params([(lab, e.cav_mean, e.cav_var) for lab, e in zip(labels, eps)],
                                                  params, self.param_fit_iters)
            res.param_fits += 1
            res.param_fits_capped += int(capped)
            if self.likelihood_step == "unchecked":
                params = proposal
                current[:] = False
            if self.likelihood_step == "checked":
                # each user's step: EP at the proposed parameters, halved (at most 4 times) until
                # the EP evidence does not fall; the users are independent, so each attempt runs
                # for all users still trying at once
                steps = {u: proposal[u] - params[u] for u in range(n_users)}
                trying = list(range(n_users))
                sweeps = [[] for _ in range(n_users)]
                for _ in range(4):
                    trying = [u for u in trying if np.any(steps[u])]
                    if not trying:
                        break
                    out = run_eps(trying, [params[u] + steps[u] for u in trying], [eps[u] for u in trying], sweeps)
                    rejected = []
                    for u, ep in zip(trying, out):
                        if ep.converged and ep.log_z >= eps[u].log_z:
                            params[u] = params[u] + steps[u]
                            eps[u] = ep
                            eps_prior[u] = prior_moves
                        else:
                            steps[u] = steps[u] / 2
                            rejected.append(u)
                    trying = rejected
                record(sweeps)
            if self.collaborative:
                prior.m_step(J, [e.post for e in eps], self.hyper)
                prior_moves += 1
                current[:] = False
        # predictive distribution on the requested items from the last E-step
        Gp, hp, dp = prior.G[predict], prior.h[predict], prior.d[predict]
        for u, e in enumerate(eps):
            j = J[u]
            Gj = Gp[:, j]
            mean = hp + Gj @ e.post.a
            var = np.maximum(dp - np.einsum("ij,ij->i", Gj @ e.post.W, Gj), 1e-12)
            b, sig = thresholds_from(params[u, :-1]), float(np.exp(params[u, -1]))
            for rule in PREDICT_RULES:
                res.preds.setdefault(rule, []).append(predict_ordinal(mean, var, b, sig, rule))
        res.pred = res.preds[self.ordinal_predict]
        res.sigma = np.exp(params[:, -1])
        res.thresholds = np.array([thresholds_from(pr[:-1])[1:-1] for pr in params])
        return res

    def _round(self, x: np.ndarray) -> np.ndarray:
        return np.clip(np.floor(x + 0.5), 1, self.n_ranks).astype(np.int64)


GP = {GPModel.name: GPModel}


def _gauss_evidence(post: SitePosterior, t: np.ndarray, h: np.ndarray, sigma2: float) -> float:
    """log N(t; h, K + sigma^2 I) from the site posterior (B = I + K / sigma^2)."""
    n = t.size
    if n == 0:
        return 0.0
    r = t - h
    # (K + s2 I)^-1 r = a (the posterior's a with nu = t/s2, tau = 1/s2)
    return float(-0.5 * r @ post.a - 0.5 * (post.log_det_B + n * np.log(sigma2)) - 0.5 * n * LOG_2PI)


def _fit_gpr_sigma(K: np.ndarray, t: np.ndarray, sigma0: float) -> float:
    """Noise of an individual GPR by maximising its evidence log N(t; 0, K + sigma^2 I) over
    log sigma (bounded search started from the bracket around ``sigma0``)."""
    if t.size == 0:
        return sigma0
    lam, Q = linalg.eigh(0.5 * (K + K.T))
    lam = np.maximum(lam, 0.0)
    proj = (Q.T @ t) ** 2

    def nll(ls):
        v = lam + np.exp(2 * ls)
        return 0.5 * float(np.sum(np.log(v) + proj / v))

    res = optimize.minimize_scalar(nll, bounds=(np.log(1e-3), np.log(10.0)), method="bounded",
                                   options={"xatol": 1e-4})
    return float(np.exp(res.x)) if nll(res.x) <= nll(np.log(sigma0)) else sigma0
