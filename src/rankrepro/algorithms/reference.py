"""Plain per-example NumPy implementations, written straight from the papers' pseudocode.

They are the independent computation the compiled learners are tested against, and the
reference the benchmark (``scripts/bench.py``) measures speed-ups against.  Not used by
the pipeline.
"""

from __future__ import annotations

import numpy as np


def prank_plain(X: np.ndarray, y: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Crammer & Singer (2005), Fig. 2.  Returns (online predictions, w, b)."""
    w = np.zeros(X.shape[1])
    b = np.zeros(k - 1)
    preds = np.empty(len(y), dtype=np.int64)
    for t in range(len(y)):
        s = w @ X[t]
        below = np.flatnonzero(s - b < 0)
        yhat = below[0] + 1 if below.size else k
        preds[t] = yhat
        if yhat != y[t]:
            yr = np.where(y[t] <= np.arange(1, k), -1.0, 1.0)
            tau = np.where((s - b) * yr <= 0, yr, 0.0)
            w = w + tau.sum() * X[t]
            b = b - tau
    return preds, w, b


def oap_bpm_plain(X: np.ndarray, y: np.ndarray, k: int, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Harrington (2003), Algorithm 2, with a given Bernoulli mask (T x N): a Python loop
    over rounds and members, the averaged rule recomputed each round."""
    N = mask.shape[1]
    W = np.zeros((N, X.shape[1]))
    B = np.zeros((N, k - 1))
    preds = np.empty(len(y), dtype=np.int64)
    ranks = np.arange(1, k)
    for t in range(len(y)):
        w_avg, b_avg = W.mean(axis=0), B.mean(axis=0)
        s = w_avg @ X[t]
        below = np.flatnonzero(s - b_avg < 0)
        preds[t] = below[0] + 1 if below.size else k
        for j in range(N):
            if not mask[t, j]:
                continue
            sj = W[j] @ X[t]
            below = np.flatnonzero(sj - B[j] < 0)
            yhat = below[0] + 1 if below.size else k
            if yhat != y[t]:
                yr = np.where(y[t] <= ranks, -1.0, 1.0)
                tau = np.where((sj - B[j]) * yr <= 0, yr, 0.0)
                W[j] += tau.sum() * X[t]
                B[j] -= tau
    return preds, W.mean(axis=0), B.mean(axis=0)


# -------------------------------------------------------------------------------------
# collaborative ordinal regression (Yu, Yu & Tresp 2006), as written in the paper
# -------------------------------------------------------------------------------------
def cgpr_em_plain(K: np.ndarray, Y: np.ndarray, train: np.ndarray, sigma2: float, iters: int):
    """CGPR's EM with the full m x m Sigma: per user (labels centred by the user's mean
    training label) f_j = Sigma_{m,j} (Sigma_jj + s2 I)^-1 (y_j - h_j) + h and
    Sigma_j = Sigma - Sigma_{m,j} (Sigma_jj + s2 I)^-1 Sigma_{m,j}^T (Sec. 3.1), then eq. 3
    and the sigma^2 update.  Returns (h, Sigma, sigma2, objectives)."""
    m = K.shape[0]
    h = np.zeros(m)
    Sig = K.copy()
    objectives = []
    Ytr = Y[:, train]
    for _ in range(iters):
        fs, covs, sq, n_lab, obj = [], [], 0.0, 0, 0.0
        for row in Ytr:
            lab = np.flatnonzero(row > 0)
            items = train[lab]
            y = row[lab] - row[lab].mean()
            A = Sig[np.ix_(items, items)] + sigma2 * np.eye(items.size)
            Ainv = np.linalg.inv(A)
            Smj = Sig[:, items]
            r = y - h[items]
            f = Smj @ Ainv @ r + h
            C = Sig - Smj @ Ainv @ Smj.T
            fs.append(f)
            covs.append(C)
            sq += float(np.sum((y - f[items]) ** 2) + np.trace(C[np.ix_(items, items)]))
            n_lab += items.size
            _, logdet = np.linalg.slogdet(A)
            obj += -0.5 * r @ Ainv @ r - 0.5 * logdet - 0.5 * items.size * np.log(2 * np.pi)
        objectives.append(obj)
        h = np.mean(fs, axis=0)
        Sig = np.mean([np.outer(f - h, f - h) + C for f, C in zip(fs, covs)], axis=0)
        sigma2 = sq / n_lab
    return h, Sig, sigma2, objectives


def ep_ordinal_sequential(K: np.ndarray, h: np.ndarray, y: np.ndarray, b: np.ndarray, sigma: float,
                          sweeps: int = 50, tol: float = 1e-9):
    """Textbook sequential EP (Rasmussen & Williams 2006, Alg. 3.5, with the ordinal site of
    Chu & Ghahramani 2005): one site at a time, the posterior covariance kept by a rank-one
    update; moments from scipy's normal cdf/pdf directly (no log domain).  Returns the site
    precisions and shifts (tau, nu)."""
    from scipy.stats import norm

    n = y.size
    tau, nu = np.zeros(n), np.zeros(n)
    Sig = K.copy()
    mu = h.copy()
    Kinv_h = np.linalg.solve(K, h)
    for _ in range(sweeps):
        old = np.r_[tau, nu].copy()
        for i in range(n):
            v = 1.0 / (1.0 / Sig[i, i] - tau[i])
            cm = v * (mu[i] / Sig[i, i] - nu[i])
            s = np.sqrt(sigma ** 2 + v)
            z0, z1 = (b[y[i] - 1] - cm) / s, (b[y[i]] - cm) / s
            Z = norm.cdf(z1) - norm.cdf(z0)
            n0, n1 = norm.pdf(z0), norm.pdf(z1)
            zn0 = z0 * n0 if np.isfinite(z0) else 0.0
            zn1 = z1 * n1 if np.isfinite(z1) else 0.0
            alpha = (n0 - n1) / (s * Z)
            nuh = alpha ** 2 - (zn0 - zn1) / (s * s * Z)
            t_new = nuh / (1 - v * nuh)
            n_new = (alpha + cm * nuh) / (1 - v * nuh)
            dt = t_new - tau[i]
            tau[i], nu[i] = t_new, n_new
            si = Sig[:, i].copy()
            Sig -= dt / (1.0 + dt * si[i]) * np.outer(si, si)
            # mu = Sig (K^-1 h + nu)
            mu = Sig @ (Kinv_h + nu)
        if np.max(np.abs(np.r_[tau, nu] - old)) < tol:
            break
    return tau, nu


def cgpor_iteration_plain(K: np.ndarray, Y: np.ndarray, train: np.ndarray, b: np.ndarray, sigma: np.ndarray,
                          h: np.ndarray, Sig: np.ndarray):
    """One EM iteration of CGPOR as written: sequential EP for every user (``b[u]`` its full
    thresholds, ``sigma[u]`` its noise), each user's posterior over all m items
    (Sigma_j = (Sigma^-1 + P T P^T)^-1 by the matrix inversion lemma, m x m), then eq. 3.
    Returns the new (h, Sigma)."""
    fs, covs = [], []
    for u, row in enumerate(Y[:, train]):
        lab = np.flatnonzero(row > 0)
        items = train[lab]
        tau, nu = ep_ordinal_sequential(Sig[np.ix_(items, items)], h[items], row[lab], b[u], float(sigma[u]),
                                        tol=1e-4)
        A = Sig[np.ix_(items, items)] + np.diag(1.0 / tau)
        Ainv = np.linalg.inv(A)
        Smj = Sig[:, items]
        fs.append(h + Smj @ Ainv @ (nu / tau - h[items]))
        covs.append(Sig - Smj @ Ainv @ Smj.T)
    h_new = np.mean(fs, axis=0)
    Sig_new = np.mean([np.outer(f - h_new, f - h_new) + C for f, C in zip(fs, covs)], axis=0)
    return h_new, Sig_new
