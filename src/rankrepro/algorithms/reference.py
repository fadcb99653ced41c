"""Plain per-example NumPy implementations, written straight from the papers' pseudocode.

They are the independent computation the compiled learners are tested against.  The speed
reference of the benchmark (``scripts/bench.py``) is ``reference_tight``, compiled loops.
Not used by the pipeline.
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
# The rest of Crammer & Singer (2005) and Harrington (2003), from the papers' text.
# Conventions shared with the papers: ranks 1..k, thresholds b_1..b_{k-1} (b_k = +inf),
# H(x) = min {r : w.x - b_r < 0}; y_r = -1 if y <= r else +1.  Each learner returns the
# online predictions (made before the round's update) and its final state.
# -------------------------------------------------------------------------------------
def _dot(w: np.ndarray, x: np.ndarray) -> float:
    """w.x as NumPy computes it.  Its summation order is not the compiled kernels' (CSR
    order); the tests swap in a sequential sum to show that on instances whose w.x can
    equal a threshold exactly in decimal (ratings in steps of 0.1 or 0.2, integer
    thresholds), that order alone decides a tied prediction."""
    return float(w @ x)


def _threshold_rank(s: float, b: np.ndarray) -> int:
    """min {r : s - b_r < 0}, with b_k = +inf."""
    below = np.flatnonzero(s - b < 0)
    return int(below[0]) + 1 if below.size else b.size + 1


def _virtual_labels(y: int, k: int) -> np.ndarray:
    """(y_1, ..., y_{k-1}): y_r = -1 if y <= r else +1 (Fig. 2, step 1)."""
    return np.where(y <= np.arange(1, k), -1.0, 1.0)


def _prank_tau(s: float, b: np.ndarray, y: int, k: int) -> np.ndarray:
    """PRank's steps 1-2 (Fig. 2): tau_r = y_r where (s - b_r) y_r <= 0, else 0."""
    yr = _virtual_labels(y, k)
    return np.where((s - b) * yr <= 0, yr, 0.0)


def _nearest_rank(score: float, k: int) -> int:
    """The rank closest to a real number, a half rounded up, clipped to 1..k."""
    lower = np.floor(score)
    r = lower + 1.0 if score - lower >= 0.5 else lower
    return int(min(max(r, 1.0), float(k)))


def si_prank_plain(X: np.ndarray, y: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Si-PRank (Crammer & Singer 2005, Sec. 3): PRank's steps 1-2 (Fig. 2), then step 3
    "If yhat > y Then r = yhat - 1 Else r = yhat", and w += tau_r x, b_r -= tau_r, the
    other thresholds kept.  Returns (online predictions, w, b)."""
    w = np.zeros(X.shape[1])
    b = np.zeros(k - 1)
    preds = np.empty(len(y), dtype=np.int64)
    for t in range(len(y)):
        s = _dot(w, X[t])
        yhat = _threshold_rank(s, b)
        preds[t] = yhat
        if yhat == y[t]:
            continue
        tau = _prank_tau(s, b, y[t], k)
        r = yhat - 1 if yhat > y[t] else yhat      # 1-based threshold index
        w = w + tau[r - 1] * X[t]
        b[r - 1] = b[r - 1] - tau[r - 1]
    return preds, w, b


def mcp_plain(X: np.ndarray, y: np.ndarray, k: int, ties: str = "lowest",
              update: str = "mistake") -> tuple[np.ndarray, np.ndarray]:
    """Multiclass perceptron with the uniform ultraconservative update (Crammer & Singer
    2001b; the MCP of Crammer & Singer 2005, Sec. 6).  k prototypes M_r, all zero at the
    start; yhat = argmax_r M_r.x (a tie to the lowest rank, ``ties='lowest'``, or to the
    highest, ``ties='highest'``); error set E = {r != y : M_r.x >= M_y.x}; the update
    tau_y = 1, tau_r = -1/|E| for r in E, 0 otherwise, M_r += tau_r x.

    ``update='mistake'`` updates on the rounds with yhat != y; ``update='error_set'`` on the
    rounds with E non-empty, which adds the rounds where y ties for the top score and
    wins the tie.  Returns (online predictions, M as a k x n array)."""
    if ties not in ("lowest", "highest"):
        raise ValueError(f"mcp_plain: ties must be 'lowest' or 'highest', got {ties!r}")
    if update not in ("mistake", "error_set"):
        raise ValueError(f"mcp_plain: update must be 'mistake' or 'error_set', got {update!r}")
    M = np.zeros((k, X.shape[1]))
    preds = np.empty(len(y), dtype=np.int64)
    for t in range(len(y)):
        scores = np.array([_dot(M[r], X[t]) for r in range(k)])
        top = np.flatnonzero(scores == scores.max())
        yhat = int(top[0] if ties == "lowest" else top[-1]) + 1
        preds[t] = yhat
        yi = y[t] - 1
        E = [r for r in range(k) if r != yi and scores[r] >= scores[yi]]
        if (update == "mistake" and yhat == y[t]) or not E:
            continue
        tau = np.zeros(k)
        tau[yi] = 1.0
        tau[E] = -1.0 / len(E)
        for r in [yi] + E:
            M[r] = M[r] + tau[r] * X[t]
    return preds, M


def widrow_hoff_plain(X: np.ndarray, y: np.ndarray, k: int, eta: float) -> tuple[np.ndarray, np.ndarray]:
    """Widrow-Hoff (LMS) on the rank value, w starting at zero: predict w.x rounded to the
    closest rank (Crammer & Singer 2005, Sec. 6; halves up, clipped to 1..k), then
    w += eta (y - w.x) x.  Returns (online predictions, w)."""
    w = np.zeros(X.shape[1])
    preds = np.empty(len(y), dtype=np.int64)
    for t in range(len(y)):
        s = _dot(w, X[t])
        preds[t] = _nearest_rank(s, k)
        w = w + eta * (y[t] - s) * X[t]
    return preds, w


def mu_prank_plain(X: np.ndarray, y: np.ndarray, k: int, eta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mu-PRank (Crammer & Singer 2005, Fig. 5), in the paper's own (exponentiated)
    domain: w_i = b_r = 1/(n+k-1) at the start; on a mistake PRank's tau (steps 1-2),
    Z = sum_i w_i e^{eta x_i sum_r tau_r} + sum_r b_r e^{-eta tau_r},
    w_i <- w_i e^{eta x_i sum_r tau_r} / Z and b_r <- b_r e^{-eta tau_r} / Z.
    Overflows for large eta * |x|; the compiled learner works with logarithms.
    Returns (online predictions, w, b)."""
    n = X.shape[1]
    w = np.full(n, 1.0 / (n + k - 1))
    b = np.full(k - 1, 1.0 / (n + k - 1))
    preds = np.empty(len(y), dtype=np.int64)
    for t in range(len(y)):
        s = _dot(w, X[t])
        yhat = _threshold_rank(s, b)
        preds[t] = yhat
        if yhat == y[t]:
            continue
        tau = _prank_tau(s, b, y[t], k)
        w_new = w * np.exp(eta * X[t] * tau.sum())
        b_new = b * np.exp(-eta * tau)
        Z = w_new.sum() + b_new.sum()
        w, b = w_new / Z, b_new / Z
    return preds, w, b


def voted_prank_plain(X: np.ndarray, y: np.ndarray, k: int, count: str = "freund_schapire"):
    """PRank with the voted-perceptron bookkeeping of Freund & Schapire (1999, Fig. 1),
    as Harrington (2003, Secs. 3.1, 4.1) applies it to PRank: the initial rule (0, 0) is
    stored with count c = 0; a correct prediction adds 1 to the current rule's count; a
    mistake makes PRank's update (Fig. 2) and stores the new rule with c = 1
    (``count='freund_schapire'``, F&S's c_{k+1} = 1) or c = 0 (``count='harrington'``:
    "the number of correct ranks between updates", Harrington Sec. 3.1).  The online
    predictions are those of the current rule.  Returns (online predictions, W (u x n),
    B (u x k-1), c (u,)) of the u stored rules."""
    starts = {"freund_schapire": 1.0, "harrington": 0.0}
    if count not in starts:
        raise ValueError(f"voted_prank_plain: count must be 'freund_schapire' or 'harrington', got {count!r}")
    w = np.zeros(X.shape[1])
    b = np.zeros(k - 1)
    Ws, Bs, cs = [w.copy()], [b.copy()], [0.0]
    preds = np.empty(len(y), dtype=np.int64)
    for t in range(len(y)):
        s = _dot(w, X[t])
        yhat = _threshold_rank(s, b)
        preds[t] = yhat
        if yhat == y[t]:
            cs[-1] += 1.0
            continue
        tau = _prank_tau(s, b, y[t], k)
        w = w + tau.sum() * X[t]
        b = b - tau
        Ws.append(w.copy())
        Bs.append(b.copy())
        cs.append(starts[count])
    return preds, np.array(Ws), np.array(Bs), np.array(cs)


def member_ranks(X: np.ndarray, W: np.ndarray, B: np.ndarray) -> np.ndarray:
    """h_i(x) = min {r : w_i.x - b_{i,r} < 0} for every rule i (rows of W, B) and every row
    of X: an (n_rows x n_rules) integer array."""
    out = np.empty((X.shape[0], W.shape[0]), dtype=np.int64)
    for i in range(W.shape[0]):
        for t in range(X.shape[0]):
            out[t, i] = _threshold_rank(_dot(W[i], X[t]), B[i])
    return out


def weighted_rank_vote(X: np.ndarray, W: np.ndarray, B: np.ndarray, v: np.ndarray, k: int,
                       output: str = "mean") -> np.ndarray:
    """H(x) = sum_i v_i h_i(x) / |sum_i v_i|: the voted PRank's output (v the survival
    counts) and OAP-VP's (v the members' numbers of correct ranks), Harrington (2003,
    Sec. 3.1).  With every v_i = 0 the ratio is undefined; it is then taken with equal
    weights (OAP-Bagg's mean), the convention of our learners.  ``output='mean'``: the
    real number; ``'rank'``: the closest rank to it."""
    v = np.asarray(v, dtype=float)
    if not np.any(v != 0):
        v = np.ones_like(v)
    score = member_ranks(X, W, B).astype(float) @ v / abs(v.sum())
    return score if output == "mean" else np.array([_nearest_rank(s, k) for s in score], dtype=np.int64)


def oap_bagg_output(X: np.ndarray, W: np.ndarray, B: np.ndarray, k: int, output: str = "mean") -> np.ndarray:
    """OAP-Bagg (Harrington 2003, Sec. 3.1): H(x) = sum_j h_j(x) / N."""
    score = member_ranks(X, W, B).mean(axis=1)
    return score if output == "mean" else np.array([_nearest_rank(s, k) for s in score], dtype=np.int64)


def oap_vote_plain(X: np.ndarray, y: np.ndarray, k: int, mask: np.ndarray, rule: str):
    """OAP-Bagg (``rule='bagg'``) or OAP-VP (``rule='vp'``), Harrington (2003, Sec. 3.1):
    N PRanks, member j run on round t iff mask[t, j] (the Bernoulli draws b_{j,t} of
    Algorithm 2); v_j counts member j's correct ranks on the rounds it is run.  The online
    prediction of round t is the closest rank to the ensemble's output H(x_t) before the
    round.  Returns (online predictions, online outputs H(x_t) unrounded, W (N x n),
    B (N x k-1), v (N,))."""
    if rule not in ("bagg", "vp"):
        raise ValueError(f"oap_vote_plain: rule must be 'bagg' or 'vp', got {rule!r}")
    N = mask.shape[1]
    W = np.zeros((N, X.shape[1]))
    B = np.zeros((N, k - 1))
    v = np.zeros(N)
    preds = np.empty(len(y), dtype=np.int64)
    scores = np.empty(len(y))
    for t in range(len(y)):
        x = X[t:t + 1]
        if rule == "bagg":
            scores[t] = oap_bagg_output(x, W, B, k)[0]
        else:
            scores[t] = weighted_rank_vote(x, W, B, v, k)[0]
        preds[t] = _nearest_rank(scores[t], k)
        for j in range(N):
            if not mask[t, j]:
                continue
            s = _dot(W[j], X[t])
            if _threshold_rank(s, B[j]) == y[t]:
                v[j] += 1.0
                continue
            yr = _virtual_labels(y[t], k)
            tau = np.where((s - B[j]) * yr <= 0, yr, 0.0)
            W[j] = W[j] + tau.sum() * X[t]
            B[j] = B[j] - tau
    return preds, scores, W, B, v

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
