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

Numerics: Cholesky with growing jitter (:func:`chol`); the probit terms in the log domain
(``scipy.special.log_ndtr``), so no NaN or infinity for infinite thresholds or latent values
far from them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import linalg, optimize
from scipy.special import log_ndtr

from .base import Boolean, Estimator, OneOf, Range, check_array, check_target
from .feature_maps import cosine_kernel

LOG_2PI = float(np.log(2 * np.pi))


# -------------------------------------------------------------------------------------
# linear algebra
# -------------------------------------------------------------------------------------
def chol(A: np.ndarray, max_tries: int = 8) -> np.ndarray:
    """Lower Cholesky factor of the symmetric matrix A, adding jitter 1e-10, 1e-8, ... times
    its mean diagonal until it succeeds."""
    A = A + A.T
    A *= 0.5
    # the first try adds 0 * I, i.e. +0.0 to every entry (which turns any -0.0 into +0.0):
    # done in place, without building the identity
    A += 0.0
    jitter = 0.0
    for k in range(max_tries):
        try:
            return linalg.cholesky(A if k == 0 else A + jitter * np.eye(A.shape[0]), lower=True, check_finite=True)
        except linalg.LinAlgError:
            scale = float(np.mean(np.diag(A))) if A.size else 1.0
            scale = scale if np.isfinite(scale) and scale > 0 else 1.0
            jitter = scale * 10.0 ** (-10 + 2 * k)
    raise linalg.LinAlgError(f"matrix not positive definite even with jitter {jitter:g}")


# -------------------------------------------------------------------------------------
# the ordinal likelihood, log domain
# -------------------------------------------------------------------------------------
def _log1mexp(x: np.ndarray) -> np.ndarray:
    """log(1 - exp(x)) for x <= 0, accurate on the whole range."""
    x = np.minimum(x, 0.0)
    with np.errstate(divide="ignore"):
        return np.where(x > -0.6931471805599453, np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def log_phi_diff(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """log(Phi(hi) - Phi(lo)) for lo < hi (either may be infinite), in the log domain: the
    upper tail is reflected so that both arguments are never large and positive."""
    lo, hi = np.broadcast_arrays(np.asarray(lo, dtype=float), np.asarray(hi, dtype=float))
    flip = lo > 0
    a = np.where(flip, -hi, lo)
    b = np.where(flip, -lo, hi)
    lb = log_ndtr(b)
    return lb + _log1mexp(log_ndtr(a) - lb)


def _log_npdf(z: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(np.isfinite(z), -0.5 * z * z - 0.5 * LOG_2PI, -np.inf)


def _probit_terms(mu, var, lo, hi, sigma):
    """s = sqrt(sigma^2 + var), z = (b - mu)/s at both thresholds, log Z, the ratios
    r = N(z)/Z and z r (0 at an infinite threshold), all in the log domain."""
    s = np.sqrt(sigma * sigma + var)
    z0, z1 = (lo - mu) / s, (hi - mu) / s
    logz = log_phi_diff(z0, z1)
    r0, r1 = np.exp(_log_npdf(z0) - logz), np.exp(_log_npdf(z1) - logz)
    zr0 = np.where(np.isfinite(z0), np.where(np.isfinite(z0), z0, 0.0) * r0, 0.0)
    zr1 = np.where(np.isfinite(z1), np.where(np.isfinite(z1), z1, 0.0) * r1, 0.0)
    return s, z0, z1, logz, r0, r1, zr0, zr1


def ordinal_moments(mu, var, lo, hi, sigma):
    """For a Gaussian N(f; mu, var) times P(y | f) = Phi((hi - f)/s) - Phi((lo - f)/s) with
    noise ``sigma``: (log Z, dlogZ/dmu, -d2logZ/dmu2).  Element-wise; ``lo``/``hi`` the
    label's thresholds (-inf / +inf at the ends)."""
    mu, var, lo, hi, sigma = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (mu, var, lo, hi, sigma)))
    s, z0, z1, logz, r0, r1, zr0, zr1 = _probit_terms(mu, var, lo, hi, sigma)
    alpha = (r0 - r1) / s
    nu = alpha * alpha - (zr0 - zr1) / (s * s)
    # far in one tail (the latent mean beyond one threshold by > 30 s, the other threshold a
    # further s away) the difference above cancels: use the Mills-ratio series there,
    # lambda = N(t)/Phi(-t) = t + delta, delta = 1/t - 2/t^3 + 10/t^5 - 74/t^7
    far_hi = (z1 < -30) & (z1 - z0 > 1)   # mean far above the upper threshold
    far_lo = (z0 > 30) & (z1 - z0 > 1)    # mean far below the lower threshold
    far = far_hi | far_lo
    if np.any(far):
        t = np.where(far_hi, -z1, np.where(far_lo, z0, 40.0))
        it = 1.0 / t
        delta = it * (1 - it * it * (2 - it * it * (10 - 74 * it * it)))
        lam = t + delta
        alpha = np.where(far_hi, -lam / s, np.where(far_lo, lam / s, alpha))
        nu = np.where(far, lam * delta / (s * s), nu)
    nu = np.clip(nu, 1e-300, 1.0 / (s * s))
    return logz, alpha, nu


def ordinal_log_lik_grad(mu, var, lo, hi, sigma):
    """sum log Z and its gradient with respect to (lo, hi, sigma), element-wise pieces:
    returns (logZ, dlogZ/dlo, dlogZ/dhi, dlogZ/dsigma)."""
    s, z0, z1, logz, r0, r1, zr0, zr1 = _probit_terms(mu, var, lo, hi, sigma)
    return logz, -r0 / s, r1 / s, -(sigma / (s * s)) * (zr1 - zr0)


# -------------------------------------------------------------------------------------
# thresholds: b_1 and log gaps, so that the order is kept by construction
# -------------------------------------------------------------------------------------
def thresholds_from(params: np.ndarray) -> np.ndarray:
    """(b_1, log(b_2 - b_1), ..., log(b_{r-1} - b_{r-2})) -> (-inf, b_1, ..., b_{r-1}, +inf)."""
    b = np.cumsum(np.r_[params[0], np.exp(params[1:])])
    return np.r_[-np.inf, b, np.inf]


def initial_thresholds(labels: np.ndarray, n_ranks: int, sigma: float, prior_var: float = 1.0) -> np.ndarray:
    """Thresholds at the normal quantiles of the user's cumulative label frequencies (with
    one pseudo-count per rank), scaled by the marginal spread sqrt(prior_var + sigma^2)."""
    counts = np.bincount(np.asarray(labels, dtype=np.int64) - 1, minlength=n_ranks)[:n_ranks] + 1.0
    cum = np.cumsum(counts)[:-1] / counts.sum()
    from scipy.special import ndtri

    return ndtri(cum) * np.sqrt(prior_var + sigma * sigma)


def uniform_thresholds(labels: np.ndarray, n_ranks: int, sigma: float, prior_var: float = 1.0) -> np.ndarray:
    """Thresholds equally spaced on [-1, 1], scaled by sqrt(prior_var + sigma^2) (the labels
    are not used: the alternative to :func:`initial_thresholds`)."""
    return np.linspace(-1.0, 1.0, n_ranks - 1) * np.sqrt(prior_var + sigma * sigma)


def _pack(b_inner: np.ndarray, sigma: float) -> np.ndarray:
    gaps = np.maximum(np.diff(b_inner), 1e-6)
    return np.r_[b_inner[0], np.log(gaps), np.log(sigma)]


# -------------------------------------------------------------------------------------
# the posterior given Gaussian sites on the labelled items
# -------------------------------------------------------------------------------------
class SitePosterior:
    """Posterior pieces of one user (J: labelled items, K = Sigma[J, J], h_J the prior mean).

    ``a``: (I + T K)^-1 (nu - T h_J), so that f_hat = h + Sigma[:, J] a; ``post_mean``,
    ``post_var``: the posterior on J; ``log_det_B``: log |I + T^1/2 K T^1/2|; ``quad``:
    nu'^T Sigma_post nu' with nu' = nu - T h_J; ``W``: (K + T^-1)^-1 = T^1/2 B^-1 T^1/2, an
    O(n^3) solve computed when first read (from the Cholesky factor of B) -- the M-step and
    the predictions read it, EP's evidence and a rejected step of the threshold search do
    not."""

    __slots__ = ("a", "post_mean", "post_var", "log_det_B", "quad", "_W", "_chol")

    def __init__(self, a, W, post_mean, post_var, log_det_B, quad, chol=None):
        self.a, self.post_mean, self.post_var, self.log_det_B, self.quad = a, post_mean, post_var, log_det_B, quad
        self._W, self._chol = W, chol  # W given, or (T^1/2, L) to compute it from

    @property
    def W(self) -> np.ndarray:
        if self._W is None:
            st, L = self._chol
            Binv = linalg.cho_solve((L, True), np.eye(st.size), check_finite=False)
            self._W = st[:, None] * Binv * st[None, :]
            self._chol = None
        return self._W


def _factor(K: np.ndarray, h: np.ndarray, tau: np.ndarray, nu: np.ndarray):
    """T^1/2, the Cholesky factor L of B = I + T^1/2 K T^1/2, V = L^-1 T^1/2 K and
    nu' = nu - T h: what every posterior quantity below is computed from."""
    st = np.sqrt(np.maximum(tau, 0.0))
    stK = st[:, None] * K
    B = stK * st[None, :]
    B[np.diag_indices_from(B)] += 1.0
    L = chol(B)
    V = linalg.solve_triangular(L, stK, lower=True, check_finite=False)
    return st, L, V, nu - tau * h


def site_posterior(K: np.ndarray, h: np.ndarray, tau: np.ndarray, nu: np.ndarray, factor=None) -> SitePosterior:
    """``factor``: :func:`_factor` of the same arguments when already computed (EP's last
    sweep), else computed here."""
    n = tau.size
    if n == 0:
        z = np.zeros(0)
        return SitePosterior(z, np.zeros((0, 0)), z, z, 0.0, 0.0)
    st, L, V, nup = _factor(K, h, tau, nu) if factor is None else factor
    Knup = K @ nup
    a = nup - st * linalg.cho_solve((L, True), st * Knup, check_finite=False)
    post_mean = h + K @ a
    post_var = np.diag(K) - np.sum(V * V, axis=0)
    Vn = V @ nup
    quad = float(nup @ Knup - Vn @ Vn)
    return SitePosterior(a, None, post_mean, np.maximum(post_var, 1e-300), float(2 * np.sum(np.log(np.diag(L)))), quad,
                         chol=(st, L))


# -------------------------------------------------------------------------------------
# expectation propagation for one user's ordinal likelihood (parallel updates, damped)
# -------------------------------------------------------------------------------------
@dataclass
class EPResult:
    tau: np.ndarray
    nu: np.ndarray
    post: SitePosterior
    cav_mean: np.ndarray
    cav_var: np.ndarray
    log_z: float           # EP approximation of log P(y | theta, prior)
    sweeps: int
    converged: bool


def _marginals(K: np.ndarray, h: np.ndarray, tau: np.ndarray, nu: np.ndarray):
    """Posterior means and variances on J only (what an EP sweep needs), and the factor they
    came from (:func:`site_posterior` reuses it when the sites did not move since)."""
    factor = _factor(K, h, tau, nu)
    _, _, V, nup = factor
    mean = h + K @ nup - V.T @ (V @ nup)
    var = np.diag(K) - np.einsum("ij,ij->j", V, V)
    return mean, np.maximum(var, 1e-300), factor


def cavity(post: SitePosterior, tau: np.ndarray, nu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    cv = 1.0 / np.maximum(1.0 / post.post_var - tau, 1e-300)
    cm = cv * (post.post_mean / post.post_var - nu)
    return cm, cv


def ep_log_z(post: SitePosterior, tau, nu, h, cav_mean, cav_var, log_zhat) -> float:
    """log Z_EP: sum_k [log Zhat_k + 1/2 log(1 + v_k tau_k) - 1/2 (v_k nu_k^2 + 2 nu_k m_k -
    tau_k m_k^2) / (1 + v_k tau_k)] - 1/2 h^T T h + nu^T h - 1/2 log|B| + 1/2 nu'^T Sigma_post nu'
    (cavity means m_k and variances v_k; no division by a site precision, so sites with
    tau -> 0 are harmless)."""
    one = 1.0 + cav_var * tau
    site = log_zhat + 0.5 * np.log(one) - 0.5 * (cav_var * nu * nu + 2 * nu * cav_mean - tau * cav_mean ** 2) / one
    return float(np.sum(site) - 0.5 * np.sum(tau * h * h) + nu @ h - 0.5 * post.log_det_B + 0.5 * post.quad)


def ep_ordinal(K: np.ndarray, h: np.ndarray, y: np.ndarray, b: np.ndarray, sigma: float,
               tau: np.ndarray | None = None, nu: np.ndarray | None = None, damping: float = 1.0,
               max_sweeps: int = 200, tol: float = 1e-4) -> EPResult:
    """EP for the ordinal likelihood on labelled items with prior N(h, K); ``b`` the full
    thresholds (-inf, b_1, .., b_{r-1}, +inf), ``y`` ranks 1..r.  All sites are updated
    together from the current marginals (parallel EP), moving ``damping`` of the way to the
    new values; the damping is halved whenever a sweep's largest change exceeds the previous
    one (an oscillation).  Warm-started from ``tau``, ``nu`` when given.  Converged when no
    site parameter moves more than ``tol``."""
    n = y.size
    tau = np.zeros(n) if tau is None else tau.copy()
    nu = np.zeros(n) if nu is None else nu.copy()
    lo, hi = b[y - 1], b[y]
    converged = False
    sweeps = 0
    last_change = np.inf
    factor = None  # the factor of the current tau, nu (None once they moved)
    for sweeps in range(1, max_sweeps + 1):
        pm, pv, factor = _marginals(K, h, tau, nu)
        cv = 1.0 / np.maximum(1.0 / pv - tau, 1e-300)
        cm = cv * (pm / pv - nu)
        _, alpha, nuh = ordinal_moments(cm, cv, lo, hi, sigma)
        nuh = np.clip(nuh, 1e-12, (1.0 - 1e-10) / cv)
        tau_new = nuh / (1.0 - cv * nuh)
        nu_new = (alpha + cm * nuh) / (1.0 - cv * nuh)
        dt, dn = tau_new - tau, nu_new - nu
        change = max(np.max(np.abs(dt), initial=0.0), np.max(np.abs(dn), initial=0.0))
        if change < tol:
            converged = True
            break
        if change > last_change:
            damping = max(damping / 2, 0.05)
        last_change = change
        tau, nu = tau + damping * dt, nu + damping * dn
        factor = None
    # converged: the sites have not moved since the last sweep's factor, which is reused
    post = site_posterior(K, h, tau, nu, factor if n else None)
    cm, cv = cavity(post, tau, nu)
    logzhat, _, _ = ordinal_moments(cm, cv, lo, hi, sigma)
    return EPResult(tau, nu, post, cm, cv, ep_log_z(post, tau, nu, h, cm, cv, logzhat), sweeps, converged)


def ordinal_objective(P: np.ndarray, owner: np.ndarray, y: np.ndarray, cm: np.ndarray, cv: np.ndarray
                      ) -> tuple[float, np.ndarray]:
    """-sum_k log Zhat_k over the sites of every user (row u of ``P``: b_1, log gaps, log sigma;
    ``owner[k]``: site k's user, ``y`` its label, ``cm``/``cv`` its cavity) and the gradient
    with respect to ``P`` (flattened).  At an EP fixed point this is minus the gradient of
    the EP log evidence in the likelihood parameters (the cavities' own dependence cancels)."""
    n_users, n_par = P.shape
    r_minus_1 = n_par - 1
    gaps = np.exp(P[:, 1:r_minus_1])
    inner = np.cumsum(np.c_[P[:, :1], gaps], axis=1)  # b_1..b_{r-1} per user
    B = np.c_[np.full(n_users, -np.inf), inner, np.full(n_users, np.inf)]
    sig = np.exp(P[:, -1])
    lo, hi = B[owner, y - 1], B[owner, y]
    lz, dlo, dhi, dsig = ordinal_log_lik_grad(cm, cv, lo, hi, sig[owner])
    # d/db_k, k = 1..r-1 (column k of B); the sites whose hi or lo is b_k
    gb = np.zeros((n_users, r_minus_1 + 2))
    np.add.at(gb, (owner, y), dhi)
    np.add.at(gb, (owner, y - 1), dlo)
    gb = gb[:, 1:-1]
    # b_k = b_1 + sum_{i<k} exp(g_i): d/db_1 = sum_k d/db_k; d/dg_i = exp(g_i) sum_{k>i} d/db_k
    tail = np.cumsum(gb[:, ::-1], axis=1)[:, ::-1]
    grad = np.zeros_like(P)
    grad[:, 0] = tail[:, 0]
    grad[:, 1:r_minus_1] = gaps * tail[:, 1:]
    gs = np.zeros(n_users)
    np.add.at(gs, owner, dsig)
    grad[:, -1] = gs * sig
    return -float(np.sum(lz)), -grad.ravel()


def fit_ordinal_params(groups: list[tuple[np.ndarray, np.ndarray, np.ndarray]], params: np.ndarray,
                       max_iter: int = 50) -> np.ndarray:
    """For each user (row of ``params``: b_1, log gaps, log sigma), maximise sum_k log Zhat_k
    over its sites with the cavities held fixed -- the gradient of the EP evidence with respect
    to the likelihood parameters at the EP fixed point (Chu & Ghahramani 2005, Sec. 3).
    ``groups[j] = (labels, cavity means, cavity variances)``.  All users in one bounded L-BFGS
    problem (their objectives are separable)."""
    n_users, n_par = params.shape
    sizes = np.array([g[0].size for g in groups])
    owner = np.repeat(np.arange(n_users), sizes)
    y = np.concatenate([g[0] for g in groups]).astype(np.int64) if sizes.sum() else np.zeros(0, np.int64)
    cm = np.concatenate([g[1] for g in groups]) if sizes.sum() else np.zeros(0)
    cv = np.concatenate([g[2] for g in groups]) if sizes.sum() else np.zeros(0)
    r_minus_1 = n_par - 1

    def f(flat):
        return ordinal_objective(flat.reshape(n_users, n_par), owner, y, cm, cv)

    bounds = ([(-10.0, 10.0)] + [(np.log(1e-3), np.log(20.0))] * (r_minus_1 - 1)
              + [(np.log(1e-3), np.log(10.0))]) * n_users
    x0 = np.clip(params.ravel(), [lo for lo, _ in bounds], [hi for _, hi in bounds])
    res = optimize.minimize(f, x0, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": max_iter})
    return res.x.reshape(n_users, n_par)


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
    as a textbook EM (no EP re-runs: about half the EP runs of a fit).

    GPR labels are centred by the user's mean training label c_j (added back to predict):
    with a zero-mean prior of unit variance, raw 1..5 labels would be shrunk towards 0.
    (GPOR needs no offset: its thresholds absorb it.)  GPR predicts the nearest rank to the
    posterior mean; GPOR the most probable rank under the predictive distribution (or its
    median, ``ordinal_predict``)."""

    name = "gp_model"
    _constraints = {
        "likelihood": OneOf(("gaussian", "ordinal")), "collaborative": Boolean(),
        "n_items": Range(int, 1, None), "em_iters": Range(int, 1, None),
        "sigma0": Range(float, 0.0, None, left_open=True), "tol": Range(float, 0.0, None),
        "n_ranks": Range(int, 2, None), "hyper": Range(float, 0.0, None),
        "threshold_init": OneOf(("quantile", "uniform")), "ordinal_predict": OneOf(("mode", "median")),
        "likelihood_step": OneOf(("checked", "unchecked")),
    }

    def __init__(self, *, likelihood: str = "gaussian", collaborative: bool = False, n_items: int = 100,
                 sigma0: float = 0.1, em_iters: int = 20, tol: float = 1e-5, n_ranks: int = 5,
                 hyper: float = 0.0, threshold_init: str = "quantile", ordinal_predict: str = "mode",
                 likelihood_step: str = "checked"):
        self.likelihood, self.collaborative, self.n_items = likelihood, collaborative, n_items
        self.sigma0, self.em_iters, self.tol, self.n_ranks = sigma0, em_iters, tol, n_ranks
        self.hyper, self.threshold_init, self.ordinal_predict = hyper, threshold_init, ordinal_predict
        self.likelihood_step = likelihood_step

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
            if self.likelihood == "gaussian":
                return self._fit_gaussian(prior, J, labels, predict, progress)
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

        def run_ep(u, P_u, warm):
            j = J[u]
            ep = ep_ordinal(S[np.ix_(j, j)], hJ[j], labels[u], thresholds_from(P_u[:-1]), float(np.exp(P_u[-1])),
                            *((warm.tau, warm.nu) if warm is not None else (None, None)))
            res.ep_sweeps.append(ep.sweeps)
            res.ep_unconverged += int(not ep.converged)
            return ep

        for it in range(self.em_iters):
            S, hJ = prior.S, prior.h[prior.train]
            eps = [run_ep(u, params[u], eps[u]) for u in range(n_users)]
            obj = float(sum(e.log_z for e in eps))
            res.objective.append(obj)
            if progress:
                progress(f"EM {it + 1}/{self.em_iters}: EP log evidence {obj:.3f}")
            if (len(res.objective) > 1 and abs(obj - res.objective[-2]) <= self.tol * abs(obj)) \
                    or it == self.em_iters - 1:
                break
            proposal = fit_ordinal_params([(lab, e.cav_mean, e.cav_var) for lab, e in zip(labels, eps)], params)
            if self.likelihood_step == "unchecked":
                params = proposal
            for u in range(n_users if self.likelihood_step == "checked" else 0):
                step = proposal[u] - params[u]
                for _ in range(4):
                    if not np.any(step):
                        break
                    ep = run_ep(u, params[u] + step, eps[u])
                    if ep.converged and ep.log_z >= eps[u].log_z:
                        params[u] = params[u] + step
                        eps[u] = ep
                        break
                    step = step / 2
            if self.collaborative:
                prior.m_step(J, [e.post for e in eps], self.hyper)
        # predictive distribution on the requested items from the last E-step
        Gp, hp, dp = prior.G[predict], prior.h[predict], prior.d[predict]
        for u, e in enumerate(eps):
            j = J[u]
            Gj = Gp[:, j]
            mean = hp + Gj @ e.post.a
            var = np.maximum(dp - np.einsum("ij,ij->i", Gj @ e.post.W, Gj), 1e-12)
            res.pred.append(predict_ordinal(mean, var, thresholds_from(params[u, :-1]), float(np.exp(params[u, -1])),
                                            self.ordinal_predict))
        res.sigma = np.exp(params[:, -1])
        res.thresholds = np.array([thresholds_from(pr[:-1])[1:-1] for pr in params])
        return res

    def _round(self, x: np.ndarray) -> np.ndarray:
        return np.clip(np.floor(x + 0.5), 1, self.n_ranks).astype(np.int64)


GP = {GPModel.name: GPModel}


def predict_ordinal(mean: np.ndarray, var: np.ndarray, b: np.ndarray, sigma: float, rule: str = "mode") -> np.ndarray:
    """The most probable rank (``rule="mode"``) under P(y = k) = Phi((b_k - f)/s) -
    Phi((b_{k-1} - f)/s), s = sqrt(sigma^2 + var), or its median (``"median"``: the smallest k
    with P(y <= k) >= 1/2, i.e. b_k >= mean; the rank minimising the expected absolute error)."""
    r = b.size - 1
    if rule == "median":
        return 1 + np.sum(b[1:-1][None, :] < np.asarray(mean)[:, None], axis=1)
    logp = np.stack([log_phi_diff((b[k - 1] - mean) / np.sqrt(sigma ** 2 + var),
                                  (b[k] - mean) / np.sqrt(sigma ** 2 + var)) for k in range(1, r + 1)], axis=1)
    return np.argmax(logp, axis=1) + 1


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
