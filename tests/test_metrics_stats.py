import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from rankrepro.data.synthetic import hgo_ranks, synthetic_hgo
from rankrepro.metrics import checkpoints, online_rank_loss_curve, rank_loss
from rankrepro.stats import consistent, paired_t_greater, t_interval


def test_online_curve_matches_direct_computation(rng):
    y = rng.integers(1, 6, size=500)
    p = rng.integers(1, 6, size=500)
    pts = checkpoints(500, 30)
    direct = [np.mean(np.abs(p[:T] - y[:T])) for T in pts]
    np.testing.assert_allclose(online_rank_loss_curve(p, y, pts), direct, rtol=1e-14)
    assert pts[0] == 1 and pts[-1] == 500 and np.all(np.diff(pts) > 0)
    assert rank_loss(p, y) == pytest.approx(np.mean(np.abs(p - y)))


@given(st.lists(st.floats(-100, 100, allow_nan=False), min_size=2, max_size=50))
def test_t_interval_agrees_with_scipy(xs):
    iv = t_interval(xs)
    if np.std(xs) > 1e-9:
        lo, hi = stats.t.interval(0.95, len(xs) - 1, loc=np.mean(xs), scale=stats.sem(xs))
        assert iv.low == pytest.approx(lo, rel=1e-9, abs=1e-9)
        assert iv.high == pytest.approx(hi, rel=1e-9, abs=1e-9)


def test_t_interval_known_value():
    # t_{0.975, 3} = 3.182446305284263 (tables)
    iv = t_interval([1.0, 2.0, 3.0, 2.0])  # mean 2, sd sqrt(2/3)
    assert iv.n == 4 and iv.mean == pytest.approx(2.0)
    assert iv.half_width == pytest.approx(3.182446305284263 * np.sqrt(2 / 3) / 2, rel=1e-12)
    assert np.isnan(t_interval([1.0]).half_width)


def test_consistency_verdict():
    iv = t_interval([0.30, 0.32, 0.31, 0.29])
    assert consistent(iv, 0.31, 0.01)
    assert not consistent(iv, 0.50, 0.01)
    assert consistent(iv, 0.50, 0.2)


def test_hgo_generator():
    assert hgo_ranks(np.array([-2.0, -1.0, -0.5, 0.0, 0.3, 5.0])).tolist() == [1, 1, 2, 3, 4, 5]
    s = synthetic_hgo(20000, 10, np.random.default_rng(0))
    assert s.X_train.min() >= 0 and s.X_train.max() <= 1
    counts = np.bincount(s.y_train, minlength=6)[1:]
    assert np.all(counts > 0)
    # without noise the rank is a deterministic function of x
    s0 = synthetic_hgo(1000, 0, np.random.default_rng(1), noise_sd=0.0)
    f = 10 * (s0.X_train[:, 0] - 0.5) * (s0.X_train[:, 1] - 0.5)
    assert np.all(s0.y_train[f > 1] == 5) and np.all(s0.y_train[f < -1] == 1)


def test_paired_t_greater_known_case_and_scipy():
    """The one-tailed paired t-test of Table 4's significance marks: by hand on a small case
    (differences 0.5, 1, 0, 1.5, 1: mean 0.8, sd sqrt(0.325), t = 0.8 / (sd / sqrt 5) with 4
    degrees of freedom), and against scipy.stats.ttest_rel in both directions."""
    b = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    a = b + np.array([0.5, 1.0, 0.0, 1.5, 1.0])
    t = 0.8 / (np.sqrt(0.325) / np.sqrt(5))
    assert t == pytest.approx(3.1378581622109447, rel=1e-12)
    p = paired_t_greater(a, b)
    assert p == pytest.approx(stats.t.sf(t, 4), rel=1e-12)
    assert 0.01 < p < 0.025  # significant at 5% one-tailed, not at 1%
    assert p == pytest.approx(stats.ttest_rel(a, b, alternative="greater").pvalue, rel=1e-12)
    # one-tailed: half the two-tailed p-value on the side of the mean difference, 1 - p on the other
    assert p == pytest.approx(stats.ttest_rel(a, b).pvalue / 2, rel=1e-12)
    assert paired_t_greater(b, a) == pytest.approx(1 - p, rel=1e-12)
    rng = np.random.default_rng(3)
    for n in (2, 7, 200):
        x = rng.random(n)
        y = x + 0.1 * rng.standard_normal(n) + 0.02
        assert paired_t_greater(x, y) == pytest.approx(stats.ttest_rel(x, y, alternative="greater").pvalue,
                                                       rel=1e-10)


def test_paired_t_greater_degenerate_input():
    assert np.isnan(paired_t_greater([1.0], [0.0]))  # one pair: no variance estimate
    # a constant difference (as scipy: t = +-inf, or NaN when it is zero)
    assert paired_t_greater([1.0, 2.0, 3.0], [0.0, 1.0, 2.0]) == 0.0
    assert paired_t_greater([1.0, 2.0, 3.0], [2.0, 3.0, 4.0]) == 1.0
    assert np.isnan(paired_t_greater([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="paired samples"):
        paired_t_greater([1.0, 2.0], [1.0, 2.0, 3.0])


def test_student_t_is_scipy_stats_bit_for_bit():
    """rankrepro.stats calls scipy.special's Student-t ufuncs directly (scipy.stats is slow to
    import): the quantile of every interval and the p-value of every paired test must be the
    very numbers scipy.stats.t gives, so no table moves."""
    from rankrepro import stats as rs

    rng = np.random.default_rng(11)
    for n in list(range(2, 60)) + [100, 500, 1000, 10_000]:
        x = rng.standard_normal(n)
        iv = t_interval(x)
        q = stats.t.ppf(0.975, df=n - 1)
        assert iv.half_width == q * float(x.std(ddof=1)) / np.sqrt(n)
        for t in (-40.0, -3.2, -0.5, 0.0, 1e-9, 0.7, 2.1, 8.0, 60.0):
            assert float(rs._sp.stdtr(n - 1, -t)) == float(stats.t.sf(t, df=n - 1))
        y = x + 0.3 * rng.standard_normal(n)
        if np.std(x - y) > 0:
            d = x - y
            tt = d.mean() / (d.std(ddof=1) / np.sqrt(n))
            assert paired_t_greater(x, y) == float(stats.t.sf(tt, df=n - 1))
    for conf in (0.5, 0.9, 0.95, 0.99):
        for df in (1, 4, 19, 99):
            assert float(rs._sp.stdtrit(df, 0.5 + conf / 2)) == float(stats.t.ppf(0.5 + conf / 2, df=df))
