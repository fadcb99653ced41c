"""Expectation propagation for the ordinal (probit) likelihood of Chu & Ghahramani (2005), as
the GP models of :mod:`.gp` use it.

A user's labelled items J carry Gaussian *sites* in natural parameters (precision ``tau``,
shift ``nu``); given the sites, the posterior over the items is N(h + G a, Sigma - G W G^T) with
G = Sigma[:, J], a = (I + T K)^-1 (nu - T h_J) and W = (K + T^-1)^-1, K = Sigma[J, J]
(:func:`site_posterior`).  :func:`ep_ordinal` finds the sites of the ordinal likelihood
P(y | f) = Phi((b_y - f)/sigma) - Phi((b_{y-1} - f)/sigma); :func:`fit_ordinal_params` takes the
thresholds and sigma to the cavity-fixed optimum of the EP evidence; :func:`predict_ordinal`
turns a predictive N(mean, var) into a rank.  :func:`ep_ordinal_many` runs the EP of several
users in lock-step, with the same results as one :func:`ep_ordinal` per user (what the GP
models call: the element-wise work of a sweep is done once for all users' sites).

Numerics: Cholesky with growing jitter (:func:`chol`); the probit terms in the log domain
(``scipy.special.log_ndtr``), so no NaN or infinity for infinite thresholds or latent values
far from them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg, optimize
from scipy.special import log_ndtr

LOG_2PI = float(np.log(2 * np.pi))

# -------------------------------------------------------------------------------------
# linear algebra
# -------------------------------------------------------------------------------------
def chol(A: np.ndarray, max_tries: int = 8) -> np.ndarray:
    """Lower Cholesky factor of the symmetric matrix A, adding jitter 1e-10, 1e-8, ... times
    its mean diagonal until it succeeds.

    LAPACK's ``potrf`` is called directly, in place, on the symmetrised copy: the copy is
    exactly symmetric, so its transpose is the same matrix in Fortran order and needs neither
    SciPy's validation nor its copy to Fortran order (the same routine on the same numbers:
    the same factor, bit for bit, as ``scipy.linalg.cholesky``).  The factor is Fortran-ordered."""
    S = _symmetrised(A)
    if not np.isfinite(S).all():
        raise ValueError("array must not contain infs or NaNs")
    jitter = 0.0
    for k in range(max_tries):
        M = S if k == 0 else S + jitter * np.eye(S.shape[0])
        if M.size == 0:
            return np.zeros_like(M)
        # M is exactly symmetric: whichever of M, M^T is Fortran-ordered is the same matrix
        L, info = _POTRF(M if M.flags.f_contiguous else M.T, lower=1, overwrite_a=1, clean=1)
        if info == 0:
            return L
        if info < 0:
            raise ValueError(f'LAPACK reported an illegal value in {-info}-th argument on entry to "POTRF".')
        if k == 0:
            S = _symmetrised(A)  # potrf overwrote it
        scale = float(np.mean(np.diag(S))) if S.size else 1.0
        scale = scale if np.isfinite(scale) and scale > 0 else 1.0
        jitter = scale * 10.0 ** (-10 + 2 * k)
    raise linalg.LinAlgError(f"matrix not positive definite even with jitter {jitter:g}")


def _symmetrised(A: np.ndarray) -> np.ndarray:
    """(A + A^T) / 2, a new array, exactly symmetric; + 0.0 turns any -0.0 into +0.0."""
    S = A + A.T
    S *= 0.5
    S += 0.0
    return S


_POTRF, _TRTRS, _TRTRI = linalg.get_lapack_funcs(("potrf", "trtrs", "trtri"), (np.zeros((1, 1)),))


def tri_inv(L: np.ndarray, base: int = 48) -> np.ndarray:
    """The inverse of the lower-triangular L (zeros above its diagonal), Fortran-ordered.

    Recursive on halves, [[A, 0], [C, D]]^-1 = [[A^-1, 0], [-D^-1 C A^-1, D^-1]], down to
    blocks of at most ``base`` rows, which LAPACK's ``trtri`` inverts: the off-diagonal blocks
    are matrix products, which BLAS runs several times faster than ``trtri`` or a triangular
    solve with many right-hand sides at the sizes of a user's sites (~130-230; issue 60)."""
    n = L.shape[0]
    if n == 0:
        return np.zeros((0, 0), order="F")
    if n <= base:
        Li, info = _TRTRI(L, lower=1)
        if info != 0:
            raise linalg.LinAlgError(f"singular triangular matrix: zero at diagonal {info - 1}")
        return Li
    k = n // 2
    A, D = tri_inv(L[:k, :k], base), tri_inv(L[k:, k:], base)
    out = np.zeros((n, n), order="F")
    out[:k, :k] = A
    out[k:, k:] = D
    out[k:, :k] = -(D @ (L[k:, :k] @ A))
    return out


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
            if len(self._chol) == 3:  # ("inverse", T^1/2, L^-1): B^-1 = L^-T L^-1
                _, st, Li = self._chol
                Binv = Li.T @ Li
            else:
                st, L = self._chol
                Binv = linalg.cho_solve((L, True), np.eye(st.size), check_finite=False)
            self._W = st[:, None] * Binv * st[None, :]
            self._chol = None
        return self._W


def _factor(K: np.ndarray, h: np.ndarray, tau: np.ndarray, nu: np.ndarray):
    """T^1/2, the Cholesky factor L of B = I + T^1/2 K T^1/2, V = L^-1 T^1/2 K and
    nu' = nu - T h: what every posterior quantity below is computed from."""
    st = np.sqrt(np.maximum(tau, 0.0))
    # Fortran order: LAPACK's triangular solve overwrites it with V, no copy (the same numbers)
    stK = np.multiply(st[:, None], K, order="F")
    B = stK * st[None, :]
    B[np.diag_indices_from(B)] += 1.0
    L = chol(B)
    if tau.size == 0:
        return st, L, stK, nu - tau * h
    V, info = _TRTRS(L, stK, lower=1, overwrite_b=1)
    if info != 0:
        raise linalg.LinAlgError(f"singular matrix: resolution failed at diagonal {info - 1}")
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
# the same posterior from the inverse of the Cholesky factor (EP's default, issue 60)
# -------------------------------------------------------------------------------------
#: a site whose tau_i K_ii is below this takes its marginal variance from the product form
#: K_ii - |L^-1 T^1/2 K e_i|^2 instead of (1 - [B^-1]_ii) / tau_i, which cancels as tau_i -> 0
WEAK_SITE = 1e-3

#: how EP computes the marginals of each sweep: "solve" -- from V = L^-1 T^1/2 K, LAPACK's
#: triangular solve (the default, the committed results' path); "inverse" -- the marginal
#: variances from diag(B^-1), B^-1 from the inverse of B's Cholesky factor (:func:`tri_inv`;
#: issue 60 item 4: the same fixed point, another floating-point path, about 1.7x fewer seconds
#: per factorisation at ~160 sites; not the default: it moves cells beyond their platform
#: spread, docs/benchmarks.md).
EP_LINALG = ("inverse", "solve")


def _factor_inv(K: np.ndarray, h: np.ndarray, tau: np.ndarray, nu: np.ndarray):
    """T^1/2, the Cholesky factor L of B = I + T^1/2 K T^1/2 (its lower triangle), L^-1 and
    nu' = nu - T h."""
    st = np.sqrt(np.maximum(tau, 0.0))
    if tau.size == 0:
        return st, np.zeros((0, 0)), np.zeros((0, 0)), nu - tau * h
    B = np.multiply(st[:, None], K, order="F")
    B *= st[None, :]
    B[np.diag_indices_from(B)] += 1.0
    if not np.isfinite(B).all():
        raise ValueError("array must not contain infs or NaNs")
    L, info = _POTRF(B, lower=1, overwrite_a=1, clean=1)
    if info != 0:  # not positive definite as it stands (rounding): chol's jitter
        B = (st[:, None] * K) * st[None, :]
        B[np.diag_indices_from(B)] += 1.0
        L = chol(B)
    return st, L, tri_inv(L), nu - tau * h


def _marginals_inv(K: np.ndarray, h: np.ndarray, tau: np.ndarray, nu: np.ndarray):
    """:func:`_marginals` from :func:`_factor_inv`: the posterior mean
    h + K nu' - K T^1/2 B^-1 T^1/2 K nu' and variances (1 - [B^-1]_ii) / tau_i (the posterior
    covariance is T^-1/2 (I - B^-1) T^-1/2), [B^-1]_ii the squared norm of column i of L^-1;
    sites with tau_i K_ii < :data:`WEAK_SITE` by K_ii - |L^-1 T^1/2 K e_i|^2."""
    factor = _factor_inv(K, h, tau, nu)
    st, _, Li, nup = factor
    Knup = K @ nup
    w = Li @ (st * Knup)
    mean = h + Knup - K @ (st * (Li.T @ w))
    dK = np.diag(K)
    binv = np.einsum("ij,ij->j", Li, Li)
    weak = tau * dK < WEAK_SITE
    with np.errstate(divide="ignore", invalid="ignore"):
        var = (1.0 - binv) / tau
    if weak.any():
        Vw = Li @ (st[:, None] * K[:, weak])
        var[weak] = dK[weak] - np.einsum("ij,ij->j", Vw, Vw)
    return mean, np.maximum(var, 1e-300), factor


def site_posterior_inv(K: np.ndarray, h: np.ndarray, tau: np.ndarray, nu: np.ndarray, factor=None,
                       var: np.ndarray | None = None) -> SitePosterior:
    """:func:`site_posterior` from :func:`_factor_inv` (``factor``, else computed here) and the
    marginal variances :func:`_marginals_inv` computed from it (``var``, else computed here)."""
    if tau.size == 0:
        return site_posterior(K, h, tau, nu)
    if factor is None or var is None:
        _, var, factor = _marginals_inv(K, h, tau, nu)
    st, L, Li, nup = factor
    Knup = K @ nup
    w = Li @ (st * Knup)
    a = nup - st * (Li.T @ w)
    post_mean = h + K @ a
    quad = float(nup @ Knup - w @ w)
    return SitePosterior(a, None, post_mean, var, float(2 * np.sum(np.log(np.diag(L)))), quad,
                         chol=("inverse", st, Li))


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
    # the posterior means and variances on the sites at the returned tau, nu, as the last sweep's
    # :func:`_marginals` computed them (a converged run only: its sites did not move after it);
    # a later run warm-started from these sites on the same K and h may start from them
    marginals: tuple[np.ndarray, np.ndarray] | None = None


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
               max_sweeps: int = 200, tol: float = 1e-4, linalg_path: str = "solve") -> EPResult:
    """EP for the ordinal likelihood on labelled items with prior N(h, K); ``b`` the full
    thresholds (-inf, b_1, .., b_{r-1}, +inf), ``y`` ranks 1..r.  All sites are updated
    together from the current marginals (parallel EP), moving ``damping`` of the way to the
    new values; the damping is halved whenever a sweep's largest change exceeds the previous
    one (an oscillation).  Warm-started from ``tau``, ``nu`` when given.  Converged when no
    site parameter moves more than ``tol``.  ``linalg_path``: how each sweep's marginals are
    computed (:data:`EP_LINALG`)."""
    marg, post_of = _paths(linalg_path)
    n = y.size
    tau = np.zeros(n) if tau is None else tau.copy()
    nu = np.zeros(n) if nu is None else nu.copy()
    lo, hi = b[y - 1], b[y]
    converged = False
    sweeps = 0
    last_change = np.inf
    factor = None  # the factor of the current tau, nu (None once they moved)
    for sweeps in range(1, max_sweeps + 1):
        pm, pv, factor = marg(K, h, tau, nu)
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
    post = post_of(K, h, tau, nu, (factor, pv) if n and factor is not None else None)
    cm, cv = cavity(post, tau, nu)
    logzhat, _, _ = ordinal_moments(cm, cv, lo, hi, sigma)
    return EPResult(tau, nu, post, cm, cv, ep_log_z(post, tau, nu, h, cm, cv, logzhat), sweeps, converged,
                    (pm, pv) if converged else None)


def _paths(linalg_path: str):
    """The sweep's marginals and the final posterior of ``linalg_path`` (:data:`EP_LINALG`):
    ``marg(K, h, tau, nu) -> (mean, var, factor)``, ``post_of(K, h, tau, nu, (factor, var) or
    None) -> SitePosterior``."""
    if linalg_path == "inverse":
        return _marginals_inv, lambda K, h, t, v, fv: site_posterior_inv(K, h, t, v, *(fv or (None, None)))
    if linalg_path == "solve":
        return _marginals, lambda K, h, t, v, fv: site_posterior(K, h, t, v, fv[0] if fv else None)
    raise ValueError(f"linalg_path={linalg_path!r}: must be one of {EP_LINALG}")


def ep_ordinal_many(problems: list[tuple], damping: float = 1.0, max_sweeps: int = 200, tol: float = 1e-4,
                    marginals: list | None = None, linalg_path: str = "solve") -> list[EPResult]:
    """:func:`ep_ordinal` for several independent problems at once, bit for bit the same results.

    ``problems[i] = (K, h, y, b, sigma, tau, nu)`` (``tau``, ``nu``: the warm start, or None).
    The problems run in lock-step: each sweep factors every unconverged problem's own B (its
    own Cholesky and triangular solve, as in :func:`ep_ordinal`), then computes the cavities,
    the probit moments and the new sites of all their sites in one element-wise pass over the
    concatenated sites, instead of one pass of some 20 small NumPy calls per problem.  Every
    operation on a site is element-wise and every reduction stays per problem (the largest
    change, exact in any order; the evidence's sums over each problem's own arrays), and each
    problem keeps its own damping, stopping test and sweep count: the results equal
    :func:`ep_ordinal`'s on each problem alone (tests/test_gp.py checks it bit for bit).

    ``marginals[i]``: problem i's posterior means and variances on its sites at its warm start,
    as :func:`_marginals` computed them for the same K, h, tau and nu (``EPResult.marginals`` of
    the converged run the warm start comes from, when K and h have not changed since), or None.
    The first sweep then takes them instead of factoring B again: the same numbers, bit for bit,
    one Cholesky and triangular solve saved (the sweep is still counted as one)."""
    marg, post_of = _paths(linalg_path)
    P = len(problems)
    if P == 0:
        return []
    sizes = np.array([np.asarray(pr[2]).size for pr in problems], dtype=np.int64)
    edges = np.r_[0, np.cumsum(sizes)]
    sl = [slice(int(edges[i]), int(edges[i + 1])) for i in range(P)]
    tau = np.concatenate([np.zeros(n) if pr[5] is None else np.asarray(pr[5], dtype=float)
                          for n, pr in zip(sizes, problems)])
    nu = np.concatenate([np.zeros(n) if pr[6] is None else np.asarray(pr[6], dtype=float)
                         for n, pr in zip(sizes, problems)])
    lo = np.concatenate([np.asarray(pr[3], dtype=float)[np.asarray(pr[2]) - 1] for pr in problems])
    hi = np.concatenate([np.asarray(pr[3], dtype=float)[np.asarray(pr[2])] for pr in problems])
    sig = np.repeat(np.array([float(pr[4]) for pr in problems]), sizes)
    damp = np.full(P, float(damping))
    last = np.full(P, np.inf)
    sweeps = np.zeros(P, dtype=np.int64)
    converged = np.zeros(P, dtype=bool)
    factors: list = [None] * P
    margs: list = [None] * P  # the last sweep's marginals of each converged problem
    active = list(range(P))
    for sweep in range(1, max_sweeps + 1):
        if not active:
            break
        idx = np.concatenate([np.arange(edges[i], edges[i + 1]) for i in active])
        pm, pv = np.empty(idx.size), np.empty(idx.size)
        at = 0
        for i in active:
            K, h = problems[i][0], problems[i][1]
            if sweep == 1 and marginals is not None and marginals[i] is not None:
                (m, v), factors[i] = marginals[i], None  # site_posterior factors B if it must
            else:
                m, v, f = marg(K, h, tau[sl[i]], nu[sl[i]])
                factors[i] = (f, v)
            pm[at:at + m.size], pv[at:at + m.size] = m, v
            at += m.size
            sweeps[i] = sweep
        t_a, n_a = tau[idx], nu[idx]
        cv = 1.0 / np.maximum(1.0 / pv - t_a, 1e-300)
        cm = cv * (pm / pv - n_a)
        _, alpha, nuh = ordinal_moments(cm, cv, lo[idx], hi[idx], sig[idx])
        nuh = np.clip(nuh, 1e-12, (1.0 - 1e-10) / cv)
        dt = nuh / (1.0 - cv * nuh) - t_a
        dn = (alpha + cm * nuh) / (1.0 - cv * nuh) - n_a
        still = []
        at = 0
        for i in active:
            n = int(sizes[i])
            dti, dni = dt[at:at + n], dn[at:at + n]
            seg = slice(at, at + n)
            at += n
            change = max(np.max(np.abs(dti), initial=0.0), np.max(np.abs(dni), initial=0.0))
            if change < tol:
                converged[i] = True
                margs[i] = (pm[seg].copy(), pv[seg].copy())
                continue
            if change > last[i]:
                damp[i] = max(damp[i] / 2, 0.05)
            last[i] = change
            d = float(damp[i])
            tau[sl[i]] = tau[sl[i]] + d * dti
            nu[sl[i]] = nu[sl[i]] + d * dni
            factors[i] = None
            still.append(i)
        active = still
    out_tau = [tau[s].copy() for s in sl]
    out_nu = [nu[s].copy() for s in sl]
    posts = [post_of(pr[0], pr[1], t, v, f if t.size else None)
             for pr, t, v, f in zip(problems, out_tau, out_nu, factors)]
    cav = [cavity(post, t, v) for post, t, v in zip(posts, out_tau, out_nu)]
    cm_all = np.concatenate([c[0] for c in cav])
    cv_all = np.concatenate([c[1] for c in cav])
    logzhat, _, _ = ordinal_moments(cm_all, cv_all, lo, hi, sig)
    return [EPResult(out_tau[i], out_nu[i], posts[i], cav[i][0], cav[i][1],
                     ep_log_z(posts[i], out_tau[i], out_nu[i], np.asarray(problems[i][1]), cav[i][0], cav[i][1],
                              logzhat[sl[i]].copy()),
                     int(sweeps[i]), bool(converged[i]), margs[i]) for i in range(P)]


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
                       max_iter: int = 50) -> tuple[np.ndarray, bool]:
    """For each user (row of ``params``: b_1, log gaps, log sigma), maximise sum_k log Zhat_k
    over its sites with the cavities held fixed -- the gradient of the EP evidence with respect
    to the likelihood parameters at the EP fixed point (Chu & Ghahramani 2005, Sec. 3).
    ``groups[j] = (labels, cavity means, cavity variances)``.  All users in one bounded L-BFGS
    problem (their objectives are separable), stopped after ``max_iter`` L-BFGS iterations.
    Returns the parameters and whether the search stopped at that cap rather than converged."""
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
    return res.x.reshape(n_users, n_par), res.status == 1  # 1: stopped at the iteration (or evaluation) limit


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
