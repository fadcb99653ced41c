"""The multi-data-set statistics of the arena (rankrepro.stats): Friedman's test, Nemenyi's
critical difference and the Holm-corrected pairwise comparisons of Demsar (2006), checked
against scipy and against the worked example of Demsar's Sec. 3.2.4."""

import numpy as np
import pytest
from scipy import stats as sst

from rankrepro.stats import (block_ranks, cd_groups, critical_difference, friedman, friedman_from_ranks, holm,
                             nemenyi_q, pairwise_rank_tests)


def test_block_ranks_give_ties_their_average_rank():
    r = block_ranks([[0.3, 0.1, 0.3, 0.5], [1.0, 2.0, 3.0, 4.0]])
    assert r.tolist() == [[2.5, 1.0, 2.5, 4.0], [1.0, 2.0, 3.0, 4.0]]
    assert block_ranks([[1.0, 2.0]], lower_is_better=False).tolist() == [[2.0, 1.0]]
    with pytest.raises(ValueError):
        block_ranks([[1.0, np.nan]])


@pytest.mark.parametrize("seed,ties", [(0, False), (1, False), (2, True), (3, True)])
def test_friedman_equals_scipy(seed, ties):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(9, 5)) + np.arange(5) * 0.4
    if ties:
        x = np.round(x, 0)  # many ties within rows
    ours = friedman(x)
    ref = sst.friedmanchisquare(*x.T)
    assert ours.chi2 == pytest.approx(ref.statistic, rel=1e-12)
    assert ours.p_chi2 == pytest.approx(ref.pvalue, rel=1e-9)
    # Iman & Davenport's F from the same statistic, its p-value from scipy's F distribution
    n, k = x.shape
    F = (n - 1) * ref.statistic / (n * (k - 1) - ref.statistic)
    assert ours.F == pytest.approx(F, rel=1e-12)
    assert ours.p_F == pytest.approx(sst.f.sf(F, k - 1, (k - 1) * (n - 1)), rel=1e-9)


def test_demsar_worked_example():
    # Demsar (2006) Sec. 3.2.4: four C4.5 variants on 14 data sets, average ranks 3.143, 2.000,
    # 2.893, 1.964: chi2_F = 9.28, F_F = 3.69; CD = 1.25 at alpha = 0.05 and 1.12 at 0.10
    f = friedman_from_ranks([3.143, 2.000, 2.893, 1.964], 14)
    assert f.chi2 == pytest.approx(9.28, abs=0.01)
    assert f.F == pytest.approx(3.69, abs=0.01)
    assert f.p_F < 0.05  # the paper: F(3, 39) = 2.85 at alpha = 0.05, so H0 is rejected
    assert critical_difference(4, 14, 0.05) == pytest.approx(1.25, abs=0.005)
    assert critical_difference(4, 14, 0.10) == pytest.approx(1.12, abs=0.005)
    # "the performance of C4.5+m+cf is significantly better than that of C4.5" (3.143 - 1.964 = 1.18
    # is below CD = 1.25 at 0.05, above CD = 1.12 at 0.10): Nemenyi at 0.10 only
    at05 = {(c.i, c.j): c for c in pairwise_rank_tests([3.143, 2.000, 2.893, 1.964], 14, 0.05)}
    at10 = {(c.i, c.j): c for c in pairwise_rank_tests([3.143, 2.000, 2.893, 1.964], 14, 0.10)}
    assert not at05[(0, 3)].nemenyi and at10[(0, 3)].nemenyi


def test_nemenyi_q_is_demsars_table():
    # Demsar (2006), Table 5(a), q_0.05 for k = 2..10 (printed to three decimals)
    table = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]
    for k, q in zip(range(2, 11), table):
        assert nemenyi_q(k, 0.05) == pytest.approx(q, abs=1.5e-3)
        assert nemenyi_q(k, 0.05) == pytest.approx(sst.studentized_range.ppf(0.95, k, np.inf) / np.sqrt(2), rel=1e-12)


def test_pairwise_tests_are_z_tests_holm_adjusted():
    R, n = [1.5, 2.2, 3.1, 3.2], 10
    k = len(R)
    tests = pairwise_rank_tests(R, n)
    assert [(t.i, t.j) for t in tests] == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    se = np.sqrt(k * (k + 1) / (6 * n))
    p = [2 * sst.norm.sf(abs(R[t.i] - R[t.j]) / se) for t in tests]
    assert [t.p for t in tests] == pytest.approx(p, rel=1e-9)
    assert [t.p_holm for t in tests] == pytest.approx(list(holm(p)), rel=1e-12)
    cd = critical_difference(k, n)
    assert [t.nemenyi for t in tests] == [abs(R[t.i] - R[t.j]) >= cd for t in tests]


def test_cd_groups_join_runs_within_the_critical_difference():
    # sorted: a 1.0, b 1.4, c 2.0, d 3.5; CD 1.1 joins a-b-c (span 1.0) and nothing with d
    assert cd_groups([1.0, 1.4, 2.0, 3.5], 1.1) == [(0, 1, 2)]
    # CD 0.7 joins a-b and b-c, not a-c
    assert cd_groups([1.0, 1.4, 2.0, 3.5], 0.7) == [(0, 1), (1, 2)]
    assert cd_groups([1.0, 2.0, 3.0], 0.5) == []
