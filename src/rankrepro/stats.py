"""Intervals and comparisons used by every table.

The papers report 95% confidence intervals from Student's t distribution over the
Monte-Carlo trials: mean +- t_{0.975, n-1} s / sqrt(n), s the sample standard deviation
(ddof = 1).  A reproduced cell is *consistent* with the published value when the two
intervals overlap (the published value alone when the paper gives no interval).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
# Student's t through scipy.special's ufuncs, which scipy.stats.t calls itself (ppf =
# stdtrit(df, q), sf = stdtr(df, -t)): the same numbers bit for bit, without importing
# scipy.stats (~0.5 s of every aggregation and report job)
from scipy import special as _sp


@dataclass(frozen=True)
class Interval:
    mean: float
    half_width: float
    n: int

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width


def t_interval(values, confidence: float = 0.95) -> Interval:
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    n = int(x.size)
    if n == 0:
        return Interval(float("nan"), float("nan"), 0)
    mean = float(x.mean())
    if n == 1:
        return Interval(mean, float("nan"), 1)
    sd = float(x.std(ddof=1))
    q = float(_sp.stdtrit(n - 1, 0.5 + confidence / 2.0))
    return Interval(mean, q * sd / np.sqrt(n), n)


def consistent(rep: Interval, published_mean: float, published_ci: float | None) -> bool | None:
    """Do the reproduced interval and the published one (or value) overlap?"""
    if np.isnan(rep.mean):
        return None
    hw = 0.0 if np.isnan(rep.half_width) else rep.half_width
    p_hw = 0.0 if published_ci is None else float(published_ci)
    return bool(abs(rep.mean - published_mean) <= hw + p_hw + 1e-12)


def paired_t_greater(a, b) -> float:
    """One-tailed p-value of the paired t-test that ``a`` is greater than ``b`` (as
    ``scipy.stats.ttest_rel(a, b, alternative="greater")``): the mean difference d = a - b
    over its standard error s_d / sqrt(n) (ddof = 1), t, against Student's t with n - 1
    degrees of freedom: P(T >= t).  Elsas et al. (2008) mark Table 4 with it, pairing two
    learners on the test queries.  Differences all equal (no variance): 0 when they are
    positive, 1 when negative, NaN when zero; NaN for fewer than two pairs."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired samples must be two 1-d arrays of one length, got shapes {a.shape} and {b.shape}")
    d = a - b
    n = d.size
    if n < 2:
        return float("nan")
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    if sd == 0.0:
        return float("nan") if mean == 0.0 else float(mean < 0)
    t = mean / (sd / np.sqrt(n))
    return float(_sp.stdtr(n - 1, -t))


@dataclass(frozen=True)
class RatioInterval:
    """The geometric mean of paired ratios b_t / a_t with its 95% interval: Student's t on the
    logs (the ratios of timings are log-normal-ish and a slow-down multiplies them), back-
    transformed.  ``low``/``high`` NaN with fewer than two pairs."""

    ratio: float
    low: float
    high: float
    n: int
    per_trial: tuple = ()


def paired_ratio(a, b, confidence: float = 0.95) -> RatioInterval:
    """The paired ratios ``b / a`` (one per trial, both positive) summarised by
    :class:`RatioInterval`."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired samples must be two 1-d arrays of one length, got shapes {a.shape} and {b.shape}")
    if a.size == 0 or np.any(a <= 0) or np.any(b <= 0) or not np.all(np.isfinite(a) & np.isfinite(b)):
        raise ValueError("paired ratios need positive, finite values")
    r = b / a
    iv = t_interval(np.log(r), confidence)
    if iv.n < 2:
        return RatioInterval(float(np.exp(iv.mean)), float("nan"), float("nan"), iv.n, tuple(float(x) for x in r))
    return RatioInterval(float(np.exp(iv.mean)), float(np.exp(iv.low)), float(np.exp(iv.high)), iv.n,
                         tuple(float(x) for x in r))
