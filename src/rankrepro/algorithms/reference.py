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
