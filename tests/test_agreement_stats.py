"""The statistics that compare a reproduced cell with a published value and measure
reproducibility (rankrepro.stats), each checked against scipy's implementation of the same
test or by hand: the difference's Welch interval, the two one-sided tests of equivalence,
Kendall's tau-b, the RMSE, the effect ratio and relative improvement."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from rankrepro.stats import (Difference, Interval, difference_interval, effect_ratio, equivalence,
                             kendall_tau_b, pooled_rmse, printed_precision, relative_improvement, rmse,
                             se_from_half_width, t_interval, tost, welch_satterthwaite_df)


def samples(seed, n1, n2, shift=0.0, sd2=1.0):
    rng = np.random.default_rng(seed)
    return rng.normal(0.3, 0.05, n1), rng.normal(0.3 + shift, 0.05 * sd2, n2)


@pytest.mark.parametrize("seed,n1,n2,shift,sd2", [(0, 20, 20, 0.0, 1.0), (1, 5, 30, 0.02, 3.0), (2, 500, 7, -0.01, 0.5),
                                                  (3, 3, 3, 0.1, 1.0)])
def test_difference_interval_is_welchs_two_sample_interval(seed, n1, n2, shift, sd2):
    """From the two Student-t intervals alone (each side's mean, half-width and n), the
    difference's interval is Welch's, as scipy computes it from the raw samples."""
    a, b = samples(seed, n1, n2, shift, sd2)
    ia, ib = t_interval(a), t_interval(b)
    d = difference_interval(ia, ib.mean, ib.half_width, ib.n)
    ref = stats.ttest_ind(a, b, equal_var=False)
    ci = ref.confidence_interval(0.95)
    assert d.basis == "welch"
    assert d.low == pytest.approx(ci.low, rel=1e-9, abs=1e-12)
    assert d.high == pytest.approx(ci.high, rel=1e-9, abs=1e-12)
    assert d.df == pytest.approx(ref.df, rel=1e-9)
    assert d.difference / d.se == pytest.approx(ref.statistic, rel=1e-9)
    # consistent (the interval contains 0) exactly when Welch's test does not reject at 5%
    assert d.contains_zero == (ref.pvalue >= 0.05)
    # the same test from the summary statistics
    fs = stats.ttest_ind_from_stats(a.mean(), a.std(ddof=1), n1, b.mean(), b.std(ddof=1), n2, equal_var=False)
    assert fs.pvalue == pytest.approx(ref.pvalue, rel=1e-9)


def test_difference_interval_from_ours_alone_is_the_one_sample_interval():
    """The paper gives no interval: the difference's interval is our mean's, shifted by the
    published value (scipy's one-sample t interval)."""
    a, _ = samples(4, 12, 2)
    d = difference_interval(t_interval(a), 0.31)
    ci = stats.ttest_1samp(a, 0.31).confidence_interval(0.95)
    assert d.basis == "reproduced"
    assert (d.low, d.high) == (pytest.approx(ci.low - 0.31, abs=1e-12), pytest.approx(ci.high - 0.31, abs=1e-12))
    assert d.df == 11
    # a published interval of 0.00 over n trials adds nothing: the same interval, Welch's df = ours
    d0 = difference_interval(t_interval(a), 0.31, 0.0, 20)
    assert (d0.low, d0.high, d0.df) == (pytest.approx(d.low), pytest.approx(d.high), pytest.approx(11))


def test_overlapping_intervals_can_differ():
    """Two 95% intervals that overlap while their difference is significant: the former rule
    said consistent, the difference's interval says differs (by hand: 0.30 +- 0.02 and
    0.33 +- 0.02 over 20 trials each; se = 0.02 / t_{0.975,19} each, df = 38)."""
    rep = Interval(0.30, 0.02, 20)
    d = difference_interval(rep, 0.33, 0.02, 20)
    se1 = 0.02 / stats.t.ppf(0.975, 19)
    assert d.se == pytest.approx(np.sqrt(2) * se1, rel=1e-12)
    assert d.df == pytest.approx(38.0, rel=1e-12)
    assert d.half_width == pytest.approx(stats.t.ppf(0.975, 38) * np.sqrt(2) * se1, rel=1e-12)
    assert abs(d.difference) < 0.02 + 0.02 and not d.contains_zero


def test_a_published_bound_is_added_and_exact_values_have_no_spread():
    """An exact value (one 'trial') against a printed value whose ci is its rounding bound:
    the interval is the difference +- the bound; with no bound it is the difference itself."""
    d = difference_interval(Interval(0.78360, float("nan"), 1), 0.783, 0.0005, 1)
    assert d.basis == "bound" and d.se == 0 and d.half_width == pytest.approx(0.0005)
    assert not d.contains_zero  # 0.0006 > 0.0005
    assert difference_interval(Interval(0.80995, float("nan"), 1), 0.810, 0.0005, 1).contains_zero
    e = difference_interval(Interval(3.0, float("nan"), 1), 3.0)
    assert e.basis == "exact" and e.half_width == 0 and e.contains_zero
    assert not difference_interval(Interval(3.0, float("nan"), 1), 2.0).contains_zero
    with pytest.raises(ValueError, match="number of trials"):
        difference_interval(Interval(0.3, 0.01, 10), 0.3, 0.01, None)


def test_welch_satterthwaite_df_by_hand():
    # (se1^2 + se2^2)^2 / (se1^4 / df1 + se2^4 / df2) with se 0.01, 0.02, df 9, 4
    assert welch_satterthwaite_df((0.01, 9), (0.02, 4)) == pytest.approx((1e-4 + 4e-4) ** 2 / (1e-8 / 9 + 16e-8 / 4))
    assert welch_satterthwaite_df((0.01, 9)) == pytest.approx(9)
    assert welch_satterthwaite_df((0.0, 9), (0.0, 4)) == np.inf
    assert welch_satterthwaite_df((0.01, np.inf), (0.01, 9)) == pytest.approx(4 * 9)


def test_se_from_half_width_inverts_the_t_interval():
    x = np.random.default_rng(5).normal(size=17)
    iv = t_interval(x)
    assert se_from_half_width(iv.half_width, iv.n) == pytest.approx(stats.sem(x), rel=1e-12)
    with pytest.raises(ValueError, match="n >= 2"):
        se_from_half_width(0.1, 1)


@pytest.mark.parametrize("seed,shift,margin", [(0, 0.0, 0.02), (1, 0.005, 0.01), (2, 0.05, 0.01), (3, -0.015, 0.02)])
def test_tost_is_two_one_sided_welch_tests(seed, shift, margin):
    """Each of the two p-values is scipy's one-sided Welch test with the null shifted by the
    margin; equivalence is the 90% interval inside +-margin."""
    a, b = samples(seed, 15, 9, shift, 1.5)
    ia, ib = t_interval(a), t_interval(b)
    d = difference_interval(ia, ib.mean, ib.half_width, ib.n)
    p_lo, p_hi = tost(d.difference, d.se, d.df, margin)
    assert p_lo == pytest.approx(stats.ttest_ind(a + margin, b, equal_var=False, alternative="greater").pvalue,
                                 rel=1e-9)
    assert p_hi == pytest.approx(stats.ttest_ind(a - margin, b, equal_var=False, alternative="less").pvalue,
                                 rel=1e-9)
    eq = equivalence(d, margin)
    ci90 = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.90)
    assert (eq.verdict == "equivalent") == (-margin < ci90.low and ci90.high < margin)
    assert eq.p == max(p_lo, p_hi)


def test_tost_one_sample_and_verdicts():
    """Ours alone against a value with no interval: the one-sample t-tests shifted by the
    margin; the three verdicts on constructed cases."""
    x = np.random.default_rng(6).normal(0.5, 0.01, 40)
    d = difference_interval(t_interval(x), 0.5)
    p_lo, p_hi = tost(d.difference, d.se, d.df, 0.01)
    assert p_lo == pytest.approx(stats.ttest_1samp(x, 0.5 - 0.01, alternative="greater").pvalue, rel=1e-9)
    assert p_hi == pytest.approx(stats.ttest_1samp(x, 0.5 + 0.01, alternative="less").pvalue, rel=1e-9)
    assert equivalence(d, 0.01).verdict == "equivalent"
    assert equivalence(difference_interval(t_interval(x), 0.6), 0.01).verdict == "different"
    assert equivalence(d, 0.0005).verdict == "undecided"  # within noise, but the noise exceeds the margin
    # exact values: decided by the difference against the margin
    assert equivalence(Difference(0.0004, 0.0, np.inf, 0.0, 0.0, "exact"), 0.0005).verdict == "equivalent"
    assert equivalence(Difference(0.0006, 0.0, np.inf, 0.0, 0.0, "exact"), 0.0005).verdict == "different"
    assert equivalence(Difference(-0.0005, 0.0, np.inf, 0.0, 0.0, "exact"), 0.0005).verdict == "undecided"
    with pytest.raises(ValueError, match="margin"):
        tost(0.0, 0.1, 5, 0.0)


def test_printed_precision():
    assert printed_precision(0.193) == pytest.approx(0.001)
    assert printed_precision(2.19) == pytest.approx(0.01)
    assert printed_precision(1.2366) == pytest.approx(0.0001)
    assert printed_precision(3.0) == 1.0 and printed_precision(12) == 1.0
    # a trailing zero is lost in the float: what the configs' `precision` key is for
    assert printed_precision(0.50) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="explicitly"):
        printed_precision(1e-7)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=25))
def test_kendall_tau_b_agrees_with_scipy(pairs):
    x, y = np.array(pairs, dtype=float).T
    ref = stats.kendalltau(x, y).statistic
    got = kendall_tau_b(x, y)
    if np.isnan(ref):
        assert np.isnan(got)
    else:
        assert got == pytest.approx(ref, abs=1e-12)


def test_kendall_tau_b_by_hand():
    assert kendall_tau_b([1, 2, 3], [10, 20, 30]) == 1.0
    assert kendall_tau_b([1, 2, 3], [3, 2, 1]) == -1.0
    # one tie in y: C = 2, D = 0, n0 = 3, ties_y = 1: 2 / sqrt(3 * 2)
    assert kendall_tau_b([1, 2, 3], [1, 2, 2]) == pytest.approx(2 / np.sqrt(6))
    assert np.isnan(kendall_tau_b([1, 2, 3], [5, 5, 5])) and np.isnan(kendall_tau_b([1], [1]))


def test_rmse_effect_ratio_relative_improvement_by_hand():
    assert rmse([1.0, 2.0, 3.0], [1.0, 2.0, 5.0]) == pytest.approx(np.sqrt(4 / 3))
    # pooling two groups' RMSEs gives the RMSE of all their values
    a, b = np.arange(5.0), np.arange(5.0) + np.array([0.1, -0.3, 0.0, 0.2, 0.5])
    assert pooled_rmse([(rmse(a[:2], b[:2]), 2), (rmse(a[2:], b[2:]), 3)]) == pytest.approx(rmse(a, b), rel=1e-12)
    with pytest.raises(ValueError):
        rmse([1.0], [1.0, 2.0])
    # published improvement 0.04, reproduced 0.03: three quarters of the effect
    assert effect_ratio(0.04, 0.03) == pytest.approx(0.75)
    assert effect_ratio(0.04, -0.01) == pytest.approx(-0.25) and np.isnan(effect_ratio(0.0, 0.01))
    assert relative_improvement(0.05, 0.5) == pytest.approx(0.1) and np.isnan(relative_improvement(0.1, 0.0))
