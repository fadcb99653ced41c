"""Compiled inner loops of the online ordinal learners (Numba, no Python per example).

Conventions: ranks are 1..k; thresholds ``b`` hold b_1..b_{k-1} (b_k = +inf is implicit);
the prediction rule is ``min {r : w.x - b_r < 0}`` (Crammer & Singer 2005, Fig. 2).
Every kernel mutates the state arrays it is given and writes the prediction of each
round, made before the update, into ``out``.

Instances come as CSR rows (``ip``, ``ix``, ``xv``: row pointers, column indices, values):
a round costs O(non-zeros of x), not O(dimension), which matters for the collaborative-
filtering instances (thousands of columns, one per other viewer, mostly zero).  Dense
instances come as two empty index arrays and the 2-D array itself as ``xv`` (``_rows``: the
same kernel compiled for that form, the same numbers, no conversion to CSR).  A dense row
holding inf or NaN is refused by the kernel (``_rows.NonFiniteRow``) before that round's
update: every kernel takes a dense sum over the round's row before it changes any state.

Numba's cache of these kernels is keyed on this file only: a change to the helpers of
``_rows`` (inlined here) must come with a change to this file, or a cache compiled before it
is used as it is.  ``ROWS_SHA256`` below is that change: the first 16 hex digits of
``_rows.py``'s sha256, which tests/test_numba_cache.py checks, so an edit of ``_rows`` that
leaves this file alone fails the tests instead of running stale kernels.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._rows import axpy_row, dot_row, dot_row_call, exp_dot_row, member_scores, n_rows, sq_row

#: the sha256 (first 16 hex digits) of ``_rows.py`` these kernels were compiled against (see above)
ROWS_SHA256 = "51f772a3c446210b"

#: the small helpers the kernels call per row or per member: inlined into their callers at
#: Numba's level (a call between compiled functions is not inlined by LLVM, and with a
#: member's view W[i] as argument it cost as much as a short row's arithmetic; inlined, the
#: view costs nothing); the arithmetic is the same, so are the numbers
helper = njit(cache=True, nogil=True, inline="always")


@helper
def rank_of(s, b):
    """Smallest r with s - b_r < 0, else k."""
    km1 = b.shape[0]
    for r in range(km1):
        if s - b[r] < 0.0:
            return r + 1
    return km1 + 1


@helper
def prank_thresholds(s, b, yt, bsum):
    """PRank's threshold step (Fig. 2, steps 1-3): every b_r on the wrong side of s moves
    by one unit (and so does ``bsum[r]`` when ``bsum`` is not empty).  Returns sum_r tau_r,
    the multiple of x to add to w."""
    tsum = 0.0
    track = bsum.shape[0] > 0
    for r in range(b.shape[0]):
        yr = -1.0 if yt <= r + 1 else 1.0
        if (s - b[r]) * yr <= 0.0:
            b[r] -= yr
            if track:
                bsum[r] -= yr
            tsum += yr
    return tsum


@njit(cache=True, nogil=True)
def prank_online(ip, ix, xv, y, w, b, single, out):
    """PRank (single=False) or Si-PRank (single=True) over the rows of x."""
    nosum = np.empty(0)
    T = n_rows(ip, xv)
    mistakes = 0
    for t in range(T):
        s = dot_row(w, ip, ix, xv, t)
        yhat = rank_of(s, b)
        out[t] = yhat
        yt = y[t]
        if yhat == yt:
            continue
        mistakes += 1
        if single:
            # Si-PRank: the one threshold next to the predicted interval
            if yhat > yt:
                r = yhat - 2  # b_{yhat-1}, 0-based
                tau = -1.0
            else:
                r = yhat - 1  # b_{yhat}
                tau = 1.0
            b[r] -= tau
            axpy_row(w, tau, ip, ix, xv, t)
        else:
            tsum = prank_thresholds(s, b, yt, nosum)
            if tsum != 0.0:
                axpy_row(w, tsum, ip, ix, xv, t)
    return mistakes


@njit(cache=True, nogil=True)
def predict_linear(ip, ix, xv, w, b, out):
    for t in range(n_rows(ip, xv)):
        out[t] = rank_of(dot_row(w, ip, ix, xv, t), b)


# ---------------------------------------------------------------------------------------
# No-PRank: exact solution of the per-round dual (Crammer & Singer 2005, eq. 4.5)
# ---------------------------------------------------------------------------------------
@helper
def _g(S, c, yr, q):
    acc = S
    for r in range(c.shape[0]):
        v = -c[r] - q * yr[r] * S
        if v > 0.0:
            acc -= yr[r] * v
    return acc


@njit(cache=True, nogil=True)
def noprank_dual(c, yr, q, tau):
    """Minimise 0.5*q*(sum tau_r yr_r)^2 + 0.5*sum tau_r^2 + sum tau_r c_r over tau >= 0.

    KKT gives tau_r = max(0, -c_r - q yr_r S) with S = sum yr_r tau_r; the scalar
    equation g(S) = S - sum_r yr_r max(0, -c_r - q yr_r S) = 0 is strictly increasing and
    piecewise linear, so its root is found exactly from the breakpoints.  Returns S.
    """
    m = c.shape[0]
    if q <= 0.0:
        S = 0.0
        for r in range(m):
            tau[r] = max(0.0, -c[r])
            S += yr[r] * tau[r]
        return S
    bp = np.empty(m)
    for r in range(m):
        bp[r] = -c[r] / (q * yr[r])
    bp.sort()
    # bracket the root between consecutive breakpoints
    lo = -np.inf
    hi = np.inf
    for i in range(m):
        if _g(bp[i], c, yr, q) >= 0.0:
            hi = bp[i]
            break
        lo = bp[i]
    # the active set is constant inside (lo, hi): take a point inside it
    if math.isinf(lo) and math.isinf(hi):
        probe = 0.0
    elif math.isinf(lo):
        probe = hi - 1.0
    elif math.isinf(hi):
        probe = lo + 1.0
    else:
        probe = 0.5 * (lo + hi)
    n_act = 0
    acc = 0.0
    for r in range(m):
        if -c[r] - q * yr[r] * probe > 0.0:
            n_act += 1
            acc += yr[r] * c[r]
    S = -acc / (1.0 + q * n_act)
    # guard against round-off at a breakpoint
    if S < lo:
        S = lo
    if S > hi:
        S = hi
    total = 0.0
    for r in range(m):
        tau[r] = max(0.0, -c[r] - q * yr[r] * S)
        total += yr[r] * tau[r]
    return total


@njit(cache=True, nogil=True)
def noprank_online(ip, ix, xv, y, w, b, beta, out, tau_sum):
    """No-PRank (Fig. 3): on a rank mistake, project onto the margin constraints."""
    T = n_rows(ip, xv)
    km1 = b.shape[0]
    c = np.empty(km1)
    yr = np.empty(km1)
    tau = np.empty(km1)
    for t in range(T):
        s = dot_row(w, ip, ix, xv, t)
        yhat = rank_of(s, b)
        out[t] = yhat
        yt = y[t]
        if yhat == yt:
            continue
        q = sq_row(ip, xv, t)
        for r in range(km1):
            yr[r] = -1.0 if yt <= r + 1 else 1.0
            c[r] = yr[r] * (s - b[r]) - beta
        S = noprank_dual(c, yr, q, tau)
        for r in range(km1):
            b[r] -= tau[r] * yr[r]
            tau_sum[0] += tau[r]
        # Lemma 3 keeps the order in exact arithmetic; thresholds that are equal in exact
        # arithmetic may differ by an ulp in floating point: undo only that round-off
        for r in range(1, km1):
            if b[r] < b[r - 1]:
                b[r] = b[r - 1]
        axpy_row(w, S, ip, ix, xv, t)


# ---------------------------------------------------------------------------------------
# Mu-PRank (Fig. 5), in the log domain so that large eta cannot overflow
# ---------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _logsumexp2(a, bvec):
    m = -np.inf
    for v in a:
        if v > m:
            m = v
    for v in bvec:
        if v > m:
            m = v
    acc = 0.0
    for v in a:
        acc += math.exp(v - m)
    for v in bvec:
        acc += math.exp(v - m)
    return m + math.log(acc)


@njit(cache=True, nogil=True)
def muprank_online(ip, ix, xv, y, logw, units, shift, eta, out):
    """Mu-PRank with log b_r = eta * units[r] + shift[0]: ``units`` are the integers u_r of
    Lemma 4, so the threshold order is exact in floating point; ``shift`` is the running
    log normaliser shared by all thresholds."""
    T = n_rows(ip, xv)
    km1 = units.shape[0]
    bb = np.empty(km1)
    logb = np.empty(km1)
    for t in range(T):
        s = exp_dot_row(logw, ip, ix, xv, t)
        for r in range(km1):
            bb[r] = math.exp(eta * units[r] + shift[0])
        yhat = rank_of(s, bb)
        out[t] = yhat
        yt = y[t]
        if yhat == yt:
            continue
        tsum = 0.0
        for r in range(km1):
            yr = -1.0 if yt <= r + 1 else 1.0
            if (s - bb[r]) * yr <= 0.0:
                units[r] -= yr
                tsum += yr
        if tsum != 0.0:
            axpy_row(logw, eta * tsum, ip, ix, xv, t)
        for r in range(km1):
            logb[r] = eta * units[r] + shift[0]
        lz = _logsumexp2(logw, logb)  # O(dimension) per update: the l1 normalisation
        for j in range(logw.shape[0]):
            logw[j] -= lz
        shift[0] -= lz


# ---------------------------------------------------------------------------------------
# Multiclass perceptron (uniform ultraconservative update) and Widrow-Hoff
# ---------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def mcp_online(ip, ix, xv, y, W, out, high_ties=False):
    """``high_ties``: a tie for the highest score goes to the highest rank (else the lowest)."""
    T = n_rows(ip, xv)
    k = W.shape[0]
    scores = np.empty(k)
    for t in range(T):
        best = 0
        for r in range(k):
            scores[r] = dot_row(W[r], ip, ix, xv, t)
            if scores[r] > scores[best] or (high_ties and scores[r] == scores[best]):
                best = r
        out[t] = best + 1
        yt = y[t] - 1
        if best == yt:
            continue
        n_err = 0
        for r in range(k):
            if r != yt and scores[r] >= scores[yt]:
                n_err += 1
        axpy_row(W[yt], 1.0, ip, ix, xv, t)
        inv = 1.0 / n_err
        for r in range(k):
            if r != yt and scores[r] >= scores[yt]:
                axpy_row(W[r], -inv, ip, ix, xv, t)


@njit(cache=True, nogil=True)
def predict_mcp(ip, ix, xv, W, out, high_ties=False):
    k = W.shape[0]
    for t in range(n_rows(ip, xv)):
        best = 0
        bs = dot_row(W[0], ip, ix, xv, t)
        for r in range(1, k):
            s = dot_row(W[r], ip, ix, xv, t)
            if s > bs or (high_ties and s == bs):
                bs = s
                best = r
        out[t] = best + 1


@helper
def nearest_rank(s, k):
    """The nearest rank to s (halves up), clipped to 1..k; 1 when s is NaN (so is r, and NaN
    >= 1 is false: one test for both)."""
    r = math.floor(s + 0.5)
    if not r >= 1.0:
        return 1
    if r > k:
        return k
    return int(r)


@njit(cache=True, nogil=True)
def wh_online(ip, ix, xv, y, w, eta, k, out):
    T = n_rows(ip, xv)
    diverged = False
    for t in range(T):
        s = dot_row(w, ip, ix, xv, t)
        if not math.isfinite(s):
            diverged = True
        out[t] = nearest_rank(s, k)
        err = eta * (y[t] - s)
        axpy_row(w, err, ip, ix, xv, t)
    return diverged


# ---------------------------------------------------------------------------------------
# Voted PRank (Freund & Schapire 1999 applied to PRank)
# ---------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def voted_prank_online(ip, ix, xv, y, w, b, Wh, Bh, C, n_h, out):
    """PRank whose every hypothesis is stored with its survival count.

    ``Wh``/``Bh``/``C`` have room for n_h[0] + T hypotheses; slot n_h[0]-1 is the current
    one.  Returns the new number of stored hypotheses.
    """
    T = n_rows(ip, xv)
    nosum = np.empty(0)
    cur = n_h - 1
    for t in range(T):
        s = dot_row(w, ip, ix, xv, t)
        yhat = rank_of(s, b)
        out[t] = yhat
        yt = y[t]
        if yhat == yt:
            C[cur] += 1.0
            continue
        tsum = prank_thresholds(s, b, yt, nosum)
        axpy_row(w, tsum, ip, ix, xv, t)
        cur += 1
        Wh[cur, :] = w
        for r in range(b.shape[0]):
            Bh[cur, r] = b[r]
        C[cur] = 1.0
    return cur + 1


@njit(cache=True, nogil=True)
def predict_voted(ip, ix, xv, Wh, Bh, C, n_h, out_score):
    """Vote-weighted mean rank sum_i c_i h_i(x) / sum_i c_i."""
    tot = 0.0
    for i in range(n_h):
        tot += C[i]
    for t in range(n_rows(ip, xv)):
        acc = 0.0
        for i in range(n_h):
            if C[i] == 0.0:
                continue
            acc += C[i] * rank_of(dot_row(Wh[i], ip, ix, xv, t), Bh[i])
        out_score[t] = acc / tot if tot > 0 else 1.0


# ---------------------------------------------------------------------------------------
# OAP ensembles: N PRanks fed by independent Bernoulli(tau) masks (Harrington 2003)
# ---------------------------------------------------------------------------------------
MODE_BPM = 0
MODE_BAGG = 1
MODE_VP = 2


@helper
def member_ranks(ip, ix, xv, t, W, B, score, rank):
    """Every member's score and rank on row t (into ``score``, ``rank``).  The scores are
    summed non-zero by non-zero for all members at once (the inner loop over the members,
    independent sums the compiler can run side by side); each member's sum still starts at
    0 and adds its terms in the row's order, as :func:`dot_row` does, so the numbers are the
    same."""
    member_scores(ip, ix, xv, t, W, score)
    for i in range(W.shape[0]):
        rank[i] = rank_of(score[i], B[i])


@helper
def vote(rank, V, mode):
    """Real-valued rank of the ensemble from its members' ranks, for Bagg (their mean) and VP
    (vote-weighted mean; equal weights while no member has a vote)."""
    N = rank.shape[0]
    acc = 0.0
    tot = 0.0
    for i in range(N):
        wt = 1.0
        if mode == MODE_VP:
            wt = V[i]
            if wt == 0.0:
                continue
        acc += wt * rank[i]
        tot += wt
    if tot == 0.0:
        for i in range(N):
            acc += rank[i]
        tot = N
    return acc / tot


@njit(cache=True, nogil=True)
def oap_online(ip, ix, xv, y, W, B, Wsum, Bsum, V, mask, mode, k, out):
    """One pass of OAP-BPM/-Bagg/-VP.  Member i runs PRank on round t iff mask[t, i].

    ``Wsum``/``Bsum`` hold the sums of the member rules, kept up to date incrementally,
    so that the Bayes-point prediction costs O(d + k) and a round costs O(tau N d).
    Bagg and VP predict from every member's rank on the round's instance before any member
    learns from it, so a member that then runs PRank on the round takes its score and rank
    from the prediction (the same dot_row and rank_of on the same rule: the same numbers)
    instead of computing them again.
    """
    T = n_rows(ip, xv)
    N = W.shape[0]
    score = np.empty(N)
    rank = np.empty(N, dtype=np.int64)
    for t in range(T):
        if mode == MODE_BPM:
            out[t] = rank_of(dot_row_call(Wsum, ip, ix, xv, t), Bsum)
        else:
            # every member's score and rank kept for the update below
            member_ranks(ip, ix, xv, t, W, B, score, rank)
            out[t] = nearest_rank(vote(rank, V, mode), k)
        yt = y[t]
        for i in range(N):
            if not mask[t, i]:
                continue
            if mode == MODE_BPM:
                s = dot_row(W[i], ip, ix, xv, t)
                yhat = rank_of(s, B[i])
            else:
                s = score[i]
                yhat = rank[i]
            if yhat == yt:
                V[i] += 1.0
                continue
            tsum = prank_thresholds(s, B[i], yt, Bsum)
            if tsum != 0.0:
                axpy_row(W[i], tsum, ip, ix, xv, t)
                axpy_row(Wsum, tsum, ip, ix, xv, t)


@njit(cache=True, nogil=True)
def ensemble_scores(ip, ix, xv, W, B, V, mode, out):
    score, rank = np.empty(W.shape[0]), np.empty(W.shape[0], dtype=np.int64)
    for t in range(n_rows(ip, xv)):
        member_ranks(ip, ix, xv, t, W, B, score, rank)
        out[t] = vote(rank, V, mode)


@njit(cache=True, nogil=True)
def predict_ensemble(ip, ix, xv, W, B, V, mode, k, out):
    score, rank = np.empty(W.shape[0]), np.empty(W.shape[0], dtype=np.int64)
    for t in range(n_rows(ip, xv)):
        member_ranks(ip, ix, xv, t, W, B, score, rank)
        out[t] = nearest_rank(vote(rank, V, mode), k)
