"""Tight compiled loops of the online learners, written from the papers for dense instances:
the speed reference of ``scripts/bench.py`` (``make bench``).

Each is the loop a competent implementer would write in Numba from the pseudocode, and
nothing else: a dense (T x n) instance array, no input checks, no sparse rows, no
estimator object; the state arrays allocated inside.  They share no code with the
project's kernels (``_compiled``), so the test that they give the same predictions and the
same final state on the same stream (tests/test_reference_tight.py) is a check of both.
Sums run over the features in their order (no fastmath), as the papers' w.x is written,
so the numbers are the project's to the last bit.  Not used by the pipeline.

Conventions: ranks 1..k; thresholds b_1..b_{k-1}; H(x) = min {r : w.x - b_r < 0}, else k;
y_r = -1 if y <= r else +1 (Crammer & Singer 2005, Fig. 2).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def prank_tight(X, y, k, single=False):
    """PRank (Crammer & Singer 2005, Fig. 2; Harrington 2003, Algorithm 1), or Si-PRank
    (``single``: Sec. 3, only b_{yhat-1} (yhat > y) or b_{yhat} (yhat < y) moves, with w).
    Returns (online predictions, w, b)."""
    T, n = X.shape
    w = np.zeros(n)
    b = np.zeros(k - 1)
    out = np.empty(T, dtype=np.int64)
    for t in range(T):
        s = 0.0
        for j in range(n):
            s += w[j] * X[t, j]
        yhat = k
        for r in range(k - 1):
            if s - b[r] < 0.0:
                yhat = r + 1
                break
        out[t] = yhat
        yt = y[t]
        if yhat == yt:
            continue
        if single:
            r = yhat - 2 if yhat > yt else yhat - 1
            c = -1.0 if yhat > yt else 1.0
            b[r] -= c
        else:
            c = 0.0
            for r in range(k - 1):
                yr = -1.0 if yt <= r + 1 else 1.0
                if (s - b[r]) * yr <= 0.0:
                    b[r] -= yr
                    c += yr
        for j in range(n):
            w[j] += c * X[t, j]
    return out, w, b


@njit(cache=True, nogil=True)
def voted_prank_tight(X, y, k):
    """PRank storing every rule with its survival count (Freund & Schapire 1999, Fig. 1, as
    Harrington 2003, Sec. 4.1 applies it): the initial rule with count 0, a new rule with
    count 1 after each mistake, +1 per correct prediction.  Returns (online predictions,
    W (u x n), B (u x k-1), c (u,)) of the u stored rules."""
    T, n = X.shape
    W = np.zeros((T + 1, n))
    B = np.zeros((T + 1, k - 1))
    C = np.zeros(T + 1)
    out = np.empty(T, dtype=np.int64)
    u = 0
    for t in range(T):
        s = 0.0
        for j in range(n):
            s += W[u, j] * X[t, j]
        yhat = k
        for r in range(k - 1):
            if s - B[u, r] < 0.0:
                yhat = r + 1
                break
        out[t] = yhat
        yt = y[t]
        if yhat == yt:
            C[u] += 1.0
            continue
        c = 0.0
        for r in range(k - 1):
            yr = -1.0 if yt <= r + 1 else 1.0
            B[u + 1, r] = B[u, r]
            if (s - B[u, r]) * yr <= 0.0:
                B[u + 1, r] -= yr
                c += yr
        for j in range(n):
            W[u + 1, j] = W[u, j] + c * X[t, j]
        u += 1
        C[u] = 1.0
    return out, W[:u + 1].copy(), B[:u + 1].copy(), C[:u + 1].copy()


@njit(cache=True, nogil=True)
def oap_tight(X, y, k, mask, rule):
    """OAP-BPM (``rule=0``; Harrington 2003, Algorithm 2), OAP-Bagg (1) or OAP-VP (2)
    (Sec. 3.1): N PRanks, member j learns on round t iff mask[t, j].  BPM predicts with the
    averaged rule, kept as the running sums (sum_j w_j, sum_j b_j) (the same ranks as the
    averages: dividing both sides by N changes no sign); Bagg and VP with the nearest rank
    (halves up) to the mean, or the vote-weighted mean (v_j: member j's correct ranks; equal
    weights while all are 0), of the members' ranks.  Returns (online predictions, W, B,
    w_sum, b_sum, v)."""
    T, n = X.shape
    N = mask.shape[1]
    W = np.zeros((N, n))
    B = np.zeros((N, k - 1))
    ws = np.zeros(n)
    bs = np.zeros(k - 1)
    v = np.zeros(N)
    sc = np.zeros(N)
    rk = np.zeros(N, dtype=np.int64)
    out = np.empty(T, dtype=np.int64)
    for t in range(T):
        if rule == 0:
            s = 0.0
            for j in range(n):
                s += ws[j] * X[t, j]
            yhat = k
            for r in range(k - 1):
                if s - bs[r] < 0.0:
                    yhat = r + 1
                    break
            out[t] = yhat
        else:
            # every member's score, the members side by side (each its own sum over j)
            sc[:] = 0.0
            for j in range(n):
                x = X[t, j]
                for i in range(N):
                    sc[i] += W[i, j] * x
            acc = 0.0
            tot = 0.0
            for i in range(N):
                h = k
                for r in range(k - 1):
                    if sc[i] - B[i, r] < 0.0:
                        h = r + 1
                        break
                rk[i] = h
                wt = v[i] if rule == 2 else 1.0
                acc += wt * h
                tot += wt
            if tot == 0.0:
                acc = 0.0
                for i in range(N):
                    acc += rk[i]
                tot = N
            m = math.floor(acc / tot + 0.5)
            out[t] = 1 if m < 1.0 else (k if m > k else int(m))
        yt = y[t]
        for i in range(N):
            if not mask[t, i]:
                continue
            if rule == 0:
                s = 0.0
                for j in range(n):
                    s += W[i, j] * X[t, j]
                h = k
                for r in range(k - 1):
                    if s - B[i, r] < 0.0:
                        h = r + 1
                        break
            else:
                s = sc[i]
                h = rk[i]
            if h == yt:
                v[i] += 1.0
                continue
            c = 0.0
            for r in range(k - 1):
                yr = -1.0 if yt <= r + 1 else 1.0
                if (s - B[i, r]) * yr <= 0.0:
                    B[i, r] -= yr
                    bs[r] -= yr
                    c += yr
            if c != 0.0:
                for j in range(n):
                    W[i, j] += c * X[t, j]
                for j in range(n):
                    ws[j] += c * X[t, j]
    return out, W, B, ws, bs, v


@njit(cache=True, nogil=True)
def widrow_hoff_tight(X, y, k, eta):
    """Widrow-Hoff on the rank value (Crammer & Singer 2005, Sec. 6): predict the nearest
    rank to w.x (halves up, clipped to 1..k), then w += eta (y - w.x) x.  Returns
    (online predictions, w)."""
    T, n = X.shape
    w = np.zeros(n)
    out = np.empty(T, dtype=np.int64)
    for t in range(T):
        s = 0.0
        for j in range(n):
            s += w[j] * X[t, j]
        m = math.floor(s + 0.5)
        out[t] = 1 if not m >= 1.0 else (k if m > k else int(m))
        c = eta * (y[t] - s)
        for j in range(n):
            w[j] += c * X[t, j]
    return out, w


@njit(cache=True, nogil=True)
def mcp_tight(X, y, k):
    """Multiclass perceptron with the uniform ultraconservative update (Crammer & Singer
    2001b; the MCP of Crammer & Singer 2005, Sec. 6): yhat = argmax_r M_r.x (the lowest
    rank on a tie); on a mistake M_y += x and each r != y with M_r.x >= M_y.x loses
    x / |E|.  Returns (online predictions, M)."""
    T, n = X.shape
    M = np.zeros((k, n))
    sc = np.zeros(k)
    out = np.empty(T, dtype=np.int64)
    for t in range(T):
        best = 0
        for r in range(k):
            s = 0.0
            for j in range(n):
                s += M[r, j] * X[t, j]
            sc[r] = s
            if s > sc[best]:
                best = r
        out[t] = best + 1
        yt = y[t] - 1
        if best == yt:
            continue
        e = 0
        for r in range(k):
            if r != yt and sc[r] >= sc[yt]:
                e += 1
        for j in range(n):
            M[yt, j] += X[t, j]
        c = -(1.0 / e)
        for r in range(k):
            if r != yt and sc[r] >= sc[yt]:
                for j in range(n):
                    M[r, j] += c * X[t, j]
    return out, M
