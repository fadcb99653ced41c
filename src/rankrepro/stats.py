"""Intervals and comparisons used by every table.

The papers report 95% confidence intervals from Student's t distribution over the
Monte-Carlo trials: mean +- t_{0.975, n-1} s / sqrt(n), s the sample standard deviation
(ddof = 1).  A reproduced cell is compared with the published value by the 95% interval of
their difference (:func:`difference_interval`: Welch-Satterthwaite from both intervals where
the paper gives one, from ours alone where it does not): *consistent* when it contains 0;
and by an equivalence test with a margin (:func:`equivalence`, two one-sided tests).  The
former rule, *consistent* when the two intervals overlap (:func:`consistent`), is kept for
comparison.  The reproducibility measures of Breuer et al. (SIGIR 2020) -- root mean square
error, effect ratio, delta relative improvement, Kendall's tau -- are at the end.
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
    """Do the reproduced interval and the published one (or value) overlap?  The former
    consistency rule, kept as the ``overlap`` column for comparison: two 95% intervals can
    overlap while their difference is significant, so :func:`difference_interval` decides."""
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


# -------------------------------------------------------------------------------------
# agreement with a published value: the difference's interval and an equivalence test
# -------------------------------------------------------------------------------------
def t_quantile(df: float, q: float) -> float:
    """The q-quantile of Student's t with ``df`` degrees of freedom (``df`` = inf: the
    normal), as ``scipy.stats.t.ppf(q, df)``."""
    return float(_sp.stdtrit(df, q))


def t_sf(df: float, t: float) -> float:
    """P(T >= t) for Student's t with ``df`` degrees of freedom, as ``scipy.stats.t.sf``."""
    return float(_sp.stdtr(df, -t))


def se_from_half_width(half_width: float, n: int, confidence: float = 0.95) -> float:
    """The standard error behind a Student-t interval mean +- half_width over ``n`` values:
    half_width / t_{(1 + confidence) / 2, n - 1} (what :func:`t_interval` multiplied)."""
    if n < 2:
        raise ValueError(f"a Student-t interval needs n >= 2 values, got n = {n}")
    return float(half_width) / t_quantile(n - 1, 0.5 + confidence / 2.0)


def welch_satterthwaite_df(*parts: tuple[float, float]) -> float:
    """The effective degrees of freedom of a sum of independent variance estimates, each
    given as (standard error, degrees of freedom): (sum se^2)^2 / sum(se^4 / df) -- Welch's
    for two means.  A part with infinite df (a known variance) adds nothing to the
    denominator; all standard errors 0: inf."""
    num = sum(se ** 2 for se, _ in parts) ** 2
    den = sum(se ** 4 / df for se, df in parts if se > 0 and np.isfinite(df))
    if num == 0.0 or den == 0.0:
        return float("inf")
    return float(num / den)


@dataclass(frozen=True)
class Difference:
    """reproduced - published, with its interval: difference +- half_width, where
    half_width = t_{0.975, df} se + bound.  ``se`` and ``df`` are the sampling part (Welch-
    Satterthwaite when both sides have an interval); ``bound`` a published half-width that
    is not a sampling interval (the rounding of an exactly computed value) and is added.
    ``basis``: *welch* (both intervals), *reproduced* (ours alone: the paper gives none),
    *bound* (ours and the published bound), *exact* (neither side has any spread)."""

    difference: float
    se: float
    df: float
    half_width: float
    bound: float
    basis: str

    @property
    def low(self) -> float:
        return self.difference - self.half_width

    @property
    def high(self) -> float:
        return self.difference + self.half_width

    @property
    def contains_zero(self) -> bool:
        return bool(self.low <= 1e-12 and self.high >= -1e-12)


def difference_interval(rep: Interval, published_mean: float, published_ci: float | None = None,
                        published_n: int | None = None, confidence: float = 0.95,
                        rounding: float = 0.0, ci_rounding: float = 0.0) -> Difference:
    """The difference reproduced - published with its ``confidence`` interval.

    Our side: the standard error behind ``rep``'s Student-t half-width over ``rep.n`` trials
    (a value with no interval, ``rep.n`` = 1, is taken as exact).  The published side, when
    the paper gives a half-width ``published_ci`` over ``published_n`` >= 2 trials: its
    standard error likewise, and the two combine as Welch's two-sample interval
    (``scipy.stats.ttest_ind(..., equal_var=False)``): se = sqrt(se_r^2 + se_p^2), degrees of
    freedom by Welch-Satterthwaite.  A published half-width with ``published_n`` = 1 is not a
    sampling interval but a bound (an exact value's printed precision) and is added to the
    half-width; no published half-width: ours alone.

    The published numbers are printed rounded: a printed mean m stands for any value in
    [m - ``rounding``, m + ``rounding``] (half a unit of its last digit) and a printed half-width
    h for any in [max(0, h - ``ci_rounding``), h + ``ci_rounding``] (a printed +-0.00 for a
    half-width in [0, 0.005)).  The interval returned is the union of the intervals of every
    published pair those printed numbers allow: the widest published half-width (the half-width
    grows with it) and ``rounding`` added on both sides, so that *consistent* means "consistent
    with some value the paper could have printed this way", never a verdict decided by the
    printing."""
    d = float(rep.mean) - float(published_mean)
    if not np.isfinite(d):
        return Difference(float("nan"), float("nan"), float("nan"), float("nan"), 0.0, "no result")
    parts = []
    if rep.n >= 2 and np.isfinite(rep.half_width):
        parts.append((se_from_half_width(rep.half_width, rep.n, confidence), float(rep.n - 1)))
    bound, basis = float(rounding), "reproduced" if parts else "exact"
    if published_ci is not None:
        if published_n is None or published_n < 1:
            raise ValueError(f"a published half-width needs the paper's number of trials, got n = {published_n}")
        if published_n >= 2:
            parts.append((se_from_half_width(float(published_ci) + float(ci_rounding), published_n, confidence),
                          float(published_n - 1)))
            basis = "welch"
        else:
            bound, basis = bound + float(published_ci) + float(ci_rounding), "bound"
    se = float(np.sqrt(sum(s ** 2 for s, _ in parts)))
    df = welch_satterthwaite_df(*parts)
    half = (t_quantile(df, 0.5 + confidence / 2.0) * se if se > 0 else 0.0) + bound
    return Difference(d, se, df, half, bound, basis)


def draw_difference_interval(rep: Interval, published_mean: float, bound: float = 0.0,
                             confidence: float = 0.95) -> Difference:
    """The difference reproduced - published when the published number is ONE run of the
    protocol (one draw: Elsas et al.'s one five-fold LETOR run), not a mean: ``rep`` the mean
    and Student-t half-width of n runs of ours, and the interval the 95% prediction interval
    of a single new run around our mean, shifted by the published value:
    difference +- t_{0.975, n-1} sd sqrt(1 + 1/n) (+ ``bound``, a published half-width that
    is not a sampling interval, e.g. its printed rounding), sd the runs' standard deviation
    (recovered from ``rep``'s half-width: sd = half_width sqrt(n) / t_{0.975, n-1}).
    ``se`` is sd sqrt(1 + 1/n), df n - 1 (so that the TOST of :func:`equivalence` reads the
    same spread).  With one run (n = 1: a learner deterministic given the data) there is no
    sampling spread: half-width ``bound``, basis *deterministic*."""
    d = float(rep.mean) - float(published_mean)
    if not np.isfinite(d):
        return Difference(float("nan"), float("nan"), float("nan"), float("nan"), 0.0, "no result")
    if rep.n < 2 or not np.isfinite(rep.half_width):
        return Difference(d, 0.0, float("nan"), float(bound), float(bound), "deterministic")
    df = float(rep.n - 1)
    t = t_quantile(df, 0.5 + confidence / 2.0)
    sd = float(rep.half_width) * np.sqrt(rep.n) / t
    se = sd * float(np.sqrt(1.0 + 1.0 / rep.n))
    return Difference(d, se, df, t * se + float(bound), float(bound), "draw")


def tost(difference: float, se: float, df: float, margin: float) -> tuple[float, float]:
    """The two one-sided tests of equivalence within +-``margin``: the p-values of
    H0: delta <= -margin (against delta > -margin) and of H0: delta >= margin (against
    delta < margin), for an estimate ``difference`` with standard error ``se`` and ``df``
    degrees of freedom.  Equivalence at level alpha when both are below alpha (the larger
    is the TOST p-value).  ``se`` = 0 (exact values): 0 where the estimate is strictly inside,
    1 where it is not."""
    if margin <= 0:
        raise ValueError(f"an equivalence margin must be > 0, got {margin}")
    if se == 0:
        return float(difference <= -margin), float(difference >= margin)
    return t_sf(df, (difference + margin) / se), t_sf(df, (margin - difference) / se)


@dataclass(frozen=True)
class Equivalence:
    """The equivalence verdict of a difference with a margin: *equivalent* when both one-
    sided tests reject at ``alpha`` (the difference's 1 - 2 alpha interval lies within
    +-margin), *different* when its 1 - alpha interval lies wholly outside +-margin (the
    difference exceeds the margin, significantly), *undecided* otherwise."""

    verdict: str
    p: float
    p_lower: float
    p_upper: float
    margin: float


def equivalence(diff: Difference, margin: float, alpha: float = 0.05, rounding: float = 0.0) -> Equivalence:
    """:func:`tost` on ``diff``'s sampling part (se, df) and the verdict of :class:`Equivalence`,
    allowing for the published value's printed rounding (``rounding``, half a unit of its last
    digit): the true published value may lie anywhere within +-``rounding`` of the printed one,
    so equivalence must hold for all of them (the tests are run within the margin less the
    rounding, the worst case on each side) and *different* must hold for all of them (the
    difference's 1 - alpha interval widened by the rounding lies outside the margin).  A margin
    no larger than the rounding can never give *equivalent* (p = 1)."""
    m_eff = float(margin) - float(rounding)
    if m_eff <= 0:
        p_lo = p_hi = 1.0
    else:
        p_lo, p_hi = tost(diff.difference, diff.se, diff.df, m_eff)
    p = max(p_lo, p_hi)
    h = 0.0 if diff.se == 0 else t_quantile(diff.df, 1 - alpha / 2) * diff.se
    h += float(rounding)
    beyond = diff.difference - h > margin or diff.difference + h < -margin
    verdict = "equivalent" if p < alpha else "different" if beyond else "undecided"
    return Equivalence(verdict, p, p_lo, p_hi, float(margin))


def equivalence_reachable(diff: Difference, margin: float, alpha: float = 0.05, rounding: float = 0.0) -> bool:
    """Could :func:`equivalence` say *equivalent* with this many trials at all: would a
    difference of exactly 0, with the same standard error and degrees of freedom, pass both
    one-sided tests within the margin less the rounding?  (Its 1 - 2 alpha interval,
    +-t_{1-alpha, df} se, must fit inside +-(margin - rounding).)"""
    m_eff = float(margin) - float(rounding)
    if m_eff <= 0:
        return False
    if diff.se == 0:
        return True
    return bool(t_quantile(diff.df, 1 - alpha) * diff.se < m_eff)


def difference_p(diff: Difference) -> float:
    """The two-sided p-value of "the true difference is 0" that the 95% interval of ``diff``
    inverts: P(|T_df| >= (|difference| - bound) / se), the printed rounding and any published
    bound taken off first (so p >= 0.05 exactly when the interval contains 0: *consistent*).
    With no sampling spread (se = 0) it is 1 inside the bound and 0 outside."""
    if not np.isfinite(diff.difference):
        return float("nan")
    excess = max(0.0, abs(diff.difference) - diff.bound)
    if diff.se == 0:
        return 1.0 if excess <= 1e-12 else 0.0
    return min(1.0, 2.0 * t_sf(diff.df, excess / diff.se))


def printed_precision(value: float) -> float:
    """The unit of the last digit of ``value`` as the shortest decimal that reads back as the
    same float (0.193 -> 0.001, 2.19 -> 0.01, 3.0 -> 1): a value printed as 0.50 and parsed
    as 0.5 has lost a digit, so a config states its precision where that happens."""
    r = repr(float(value))
    if "e" in r or "E" in r or not np.isfinite(value):
        raise ValueError(f"cannot read a printed precision from {value!r}: state it explicitly")
    decimals = r.split(".")[1].rstrip("0") if "." in r else ""
    return float(10.0 ** -len(decimals)) if decimals else 1.0


# -------------------------------------------------------------------------------------
# reproducibility measures (Breuer et al., "How to Measure the Reproducibility of
# System-oriented IR Experiments", SIGIR 2020)
# -------------------------------------------------------------------------------------
def rmse(published, reproduced) -> float:
    """Root mean square error between paired published and reproduced values."""
    a = np.asarray(published, dtype=float)
    b = np.asarray(reproduced, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError(f"rmse needs two non-empty 1-d arrays of one length, got shapes {a.shape} and {b.shape}")
    return float(np.sqrt(np.mean((a - b) ** 2)))


def pooled_rmse(parts) -> float:
    """The RMSE over the union of groups given as (rmse, count) pairs: sqrt(sum rmse^2 count /
    sum count), what :func:`rmse` gives on all their values at once."""
    parts = [(float(r), int(n)) for r, n in parts]
    total = sum(n for _, n in parts)
    if total == 0:
        raise ValueError("pooled_rmse needs at least one value")
    return float(np.sqrt(sum(r * r * n for r, n in parts) / total))


def effect_ratio(published_improvement: float, reproduced_improvement: float) -> float:
    """The reproduced improvement of an advanced run over its baseline divided by the
    published one: 1 the same effect, between 0 and 1 smaller, above 1 larger, below 0
    reversed; NaN when the published improvement is 0."""
    if published_improvement == 0:
        return float("nan")
    return float(reproduced_improvement) / float(published_improvement)


def relative_improvement(improvement: float, baseline: float) -> float:
    """An improvement as a share of the baseline's value (NaN for a baseline of 0)."""
    if baseline == 0:
        return float("nan")
    return float(improvement) / abs(float(baseline))


def kendall_tau_b(x, y) -> float:
    """Kendall's tau-b between two orderings of the same items (as
    ``scipy.stats.kendalltau``): (concordant - discordant) pairs over
    sqrt((n0 - ties in x) (n0 - ties in y)), n0 = n (n - 1) / 2; a pair tied in one
    ordering is neither.  NaN when either ordering is all ties (or fewer than 2 items)."""
    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"kendall_tau_b needs two 1-d arrays of one length, got shapes {a.shape} and {b.shape}")
    i, j = np.triu_indices(a.size, k=1)
    sa, sb = np.sign(a[i] - a[j]), np.sign(b[i] - b[j])
    n0 = i.size
    ties_a, ties_b = int(np.sum(sa == 0)), int(np.sum(sb == 0))
    den = np.sqrt(float(n0 - ties_a) * float(n0 - ties_b))
    if den == 0:
        return float("nan")
    return float(np.sum(sa * sb) / den)


# -------------------------------------------------------------------------------------
# several learners over several data sets (Demsar 2006, JMLR 7:1-30, Sec. 3.2)
# -------------------------------------------------------------------------------------
def block_ranks(values, lower_is_better: bool = True) -> np.ndarray:
    """The rank of each learner (columns) within each block (rows, a data set): 1 for the
    best, tied values sharing their average rank (Demsar 2006, Sec. 3.2.2)."""
    x = np.asarray(values, dtype=float)
    if x.ndim != 2 or np.isnan(x).any():
        raise ValueError(f"block_ranks needs a blocks x learners table without NaN, got shape {x.shape}")
    x = x if lower_is_better else -x
    out = np.empty_like(x)
    for i, row in enumerate(x):
        order = np.argsort(row, kind="stable")
        ranks = np.empty(row.size)
        ranks[order] = np.arange(1, row.size + 1)
        for v in np.unique(row):  # ties: the average of the ranks they span
            tied = row == v
            ranks[tied] = ranks[tied].mean()
        out[i] = ranks
    return out


@dataclass(frozen=True)
class Friedman:
    """Friedman's test that k learners are equivalent over n blocks, from their average ranks:
    ``chi2`` (Friedman's statistic, tie-corrected as ``scipy.stats.friedmanchisquare``) with
    its p-value on k - 1 degrees of freedom, and Iman & Davenport's ``F`` (Demsar's F_F, less
    conservative) with its p-value on (k - 1, (k - 1)(n - 1))."""

    k: int
    n: int
    avg_ranks: tuple[float, ...]
    chi2: float
    p_chi2: float
    F: float
    p_F: float


def friedman_from_ranks(avg_ranks, n: int, tie_correction: float = 1.0) -> Friedman:
    """Friedman's chi2_F = 12n / (k(k+1)) [sum_j R_j^2 - k(k+1)^2 / 4] (divided by the tie
    correction) and F_F = (n-1) chi2_F / (n(k-1) - chi2_F) from the average ranks R_j over n
    blocks (Demsar 2006, Sec. 3.2.2)."""
    R = np.asarray(avg_ranks, dtype=float)
    k = R.size
    if k < 2 or n < 2:
        raise ValueError(f"Friedman's test needs at least 2 learners and 2 blocks, got k = {k}, n = {n}")
    chi2 = 12.0 * n / (k * (k + 1)) * (float(np.sum(R ** 2)) - k * (k + 1) ** 2 / 4.0) / tie_correction
    den = n * (k - 1) - chi2
    F = (n - 1) * chi2 / den if den > 0 else float("inf")
    p_F = float(_sp.fdtrc(k - 1, (k - 1) * (n - 1), F)) if np.isfinite(F) else 0.0
    return Friedman(k, n, tuple(float(r) for r in R), float(chi2), float(_sp.chdtrc(k - 1, chi2)), float(F), p_F)


def friedman(values, lower_is_better: bool = True) -> Friedman:
    """Friedman's test on a blocks x learners table of values (one value per learner and data
    set), ties within a block corrected for as ``scipy.stats.friedmanchisquare`` does."""
    ranks = block_ranks(values, lower_is_better)
    n, k = ranks.shape
    ties = 0.0
    for row in ranks:
        _, counts = np.unique(row, return_counts=True)
        ties += float(np.sum(counts ** 3 - counts))
    correction = 1.0 - ties / (n * k * (k * k - 1))
    return friedman_from_ranks(ranks.mean(axis=0), n, correction if correction > 0 else 1.0)


def nemenyi_q(k: int, alpha: float = 0.05) -> float:
    """Nemenyi's critical value q_alpha for k learners: the studentized range statistic's
    1 - alpha quantile (infinite degrees of freedom) divided by sqrt(2) (Demsar 2006, Table 5)."""
    from scipy.stats import studentized_range

    return float(studentized_range.ppf(1.0 - alpha, k, np.inf) / np.sqrt(2.0))


def critical_difference(k: int, n: int, alpha: float = 0.05) -> float:
    """The Nemenyi critical difference CD = q_alpha sqrt(k(k+1) / (6n)): two learners whose
    average ranks over n blocks differ by at least CD differ significantly."""
    return nemenyi_q(k, alpha) * float(np.sqrt(k * (k + 1) / (6.0 * n)))


@dataclass(frozen=True)
class RankComparison:
    """Learners i and j compared by their average ranks: z = (R_i - R_j) / sqrt(k(k+1)/(6n)),
    its two-sided normal p-value, that p-value Holm-adjusted over all k(k-1)/2 pairs, and
    whether the difference reaches Nemenyi's critical difference."""

    i: int
    j: int
    diff: float
    z: float
    p: float
    p_holm: float
    nemenyi: bool


def pairwise_rank_tests(avg_ranks, n: int, alpha: float = 0.05) -> list[RankComparison]:
    """Every pair of learners compared by the z statistic of their average ranks (Demsar 2006,
    Sec. 3.2.2), Holm-corrected over the pairs, and against the Nemenyi critical difference."""
    R = np.asarray(avg_ranks, dtype=float)
    k = R.size
    se = float(np.sqrt(k * (k + 1) / (6.0 * n)))
    cd = critical_difference(k, n, alpha)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    z = [(R[i] - R[j]) / se for i, j in pairs]
    p = [float(2.0 * _sp.ndtr(-abs(v))) for v in z]
    adj = holm(p)
    return [RankComparison(i, j, float(R[i] - R[j]), float(zv), pv, float(a), bool(abs(R[i] - R[j]) >= cd))
            for (i, j), zv, pv, a in zip(pairs, z, p, adj)]


def cd_groups(avg_ranks, cd: float) -> list[tuple[int, ...]]:
    """The groups a critical-difference diagram joins with a bar: maximal runs of learners,
    in order of average rank, whose ranks span less than ``cd`` (no two within a run differ
    significantly); runs of one learner and runs inside another are left out."""
    R = np.asarray(avg_ranks, dtype=float)
    order = [int(i) for i in np.argsort(R, kind="stable")]
    runs = []
    for a in range(len(order)):
        b = a
        while b + 1 < len(order) and R[order[b + 1]] - R[order[a]] < cd:
            b += 1
        if b > a:
            runs.append(tuple(order[a:b + 1]))
    return [r for r in runs if not any(set(r) < set(o) for o in runs)]
