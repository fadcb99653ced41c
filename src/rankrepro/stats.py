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



def welch_t_greater(a, b) -> float:
    """One-tailed p-value of Welch's unpaired t-test that ``a``'s mean is greater than ``b``'s
    (as ``scipy.stats.ttest_ind(a, b, equal_var=False, alternative="greater")``), for two
    samples that do not share their trials.  NaN with fewer than two values on a side; both
    variances zero: as :func:`paired_t_greater`."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.size < 2 or b.size < 2:
        return float("nan")
    va, vb = float(a.var(ddof=1)) / a.size, float(b.var(ddof=1)) / b.size
    d = float(a.mean() - b.mean())
    if va + vb == 0.0:
        return float("nan") if d == 0.0 else float(d < 0)
    df = (va + vb) ** 2 / (va ** 2 / (a.size - 1) + vb ** 2 / (b.size - 1))
    return float(_sp.stdtr(df, -d / np.sqrt(va + vb)))


def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjustment of a family of p-values (as ``statsmodels``'
    ``multipletests(method="holm")``): the i-th smallest times (m - i + 1), made monotone, at
    most 1.  NaN entries (tests that could not be made) are left NaN and do not count in m."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out[order] = adj
    return out


def paired_power(diffs, alpha: float, power: float = 0.8, limit: int = 1_000_000) -> int | None:
    """The number of trials a one-sided paired t-test at level ``alpha`` needs to detect the
    observed mean of ``diffs`` (its sign the alternative) with probability ``power``, taking
    the observed standard deviation as the truth (the noncentral t; as
    ``statsmodels``' ``TTestPower().solve_power``).  None when the differences have no spread
    or no mean (no number of trials decides a tie), or more than ``limit`` would be needed."""
    d = np.asarray(diffs, dtype=float)
    d = d[~np.isnan(d)]
    if d.size < 2:
        return None
    mean, sd = abs(float(d.mean())), float(d.std(ddof=1))
    if sd == 0.0 or mean == 0.0:
        return None
    effect = mean / sd

    def achieved(n: int) -> float:
        crit = _sp.stdtrit(n - 1, 1.0 - alpha)
        return 1.0 - float(_sp.nctdtr(n - 1, effect * np.sqrt(n), crit))

    if achieved(limit) < power:
        return None
    lo_n, hi_n = 2, 2
    while achieved(hi_n) < power:
        lo_n, hi_n = hi_n, hi_n * 2
    while lo_n < hi_n:
        mid = (lo_n + hi_n) // 2
        if achieved(mid) >= power:
            hi_n = mid
        else:
            lo_n = mid + 1
    return int(hi_n)

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
