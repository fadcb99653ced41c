"""Invariants and exact values of PRank, Si-PRank, No-PRank and Mu-PRank (Crammer & Singer 2005)."""
import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from conftest import separable_stream
from rankrepro.algorithms import MuPRank, NoPRank, PRank, SiPRank, VotedPRank
from rankrepro.algorithms._compiled import noprank_dual

K = 5


@st.composite
def streams(draw, max_n=60, d=3, k=K):
    n = draw(st.integers(1, max_n))
    X = draw(arrays(np.float64, (n, d), elements=st.floats(-3, 3, allow_nan=False, width=32)))
    y = draw(arrays(np.int64, (n,), elements=st.integers(1, k)))
    return X, y


def thresholds_after_each_round(est, X, y):
    out = []
    for t in range(len(y)):
        est.partial_fit(X[t:t + 1], y[t:t + 1])
        out.append(np.array(est.thresholds_, copy=True))
    return out


@pytest.mark.parametrize("cls,kw", [(PRank, {}), (SiPRank, {}), (NoPRank, {"beta": 1.0}), (NoPRank, {"beta": 0.1}),
                                    (MuPRank, {"eta": 0.5}), (MuPRank, {"eta": 16.0}), (VotedPRank, {})])
@given(streams())
def test_threshold_order_preserved(cls, kw, stream):
    X, y = stream
    for b in thresholds_after_each_round(cls(n_ranks=K, **kw), X, y):
        assert np.all(np.diff(b) >= 0), b


def test_paper_figure1_example():
    """Crammer & Singer (2005) Fig. 1: y = 4 predicted as 1 moves b1..b3 down by one and w by +3x."""
    est = PRank(n_ranks=5)
    est.partial_fit(np.array([[0.0, 0.0]]), np.array([5]))  # initialise; zero x: nothing moves
    est.coef_[:] = [1.0, 0.0]
    est.thresholds_[:] = [2.0, 3.0, 4.0, 5.0]
    x = np.array([[0.5, 0.6]])  # w.x = 0.5 < b1: predicted rank 1
    assert est.predict(x)[0] == 1
    pred = est.fit_online(x, np.array([4]))
    assert pred[0] == 1
    np.testing.assert_array_equal(est.thresholds_, [1.0, 2.0, 3.0, 5.0])
    np.testing.assert_allclose(est.coef_, [1.0 + 3 * 0.5, 3 * 0.6], rtol=0, atol=1e-15)
    # after the update the same x is ranked 3: closer to the true rank 4, as the figure shows
    assert est.predict(x)[0] == 3


def test_conservative_no_update_when_correct(rng):
    X, y, _, _ = separable_stream(rng, 200, 4, K, 0.05)
    for cls in (PRank, SiPRank, MuPRank, NoPRank):
        est = cls(n_ranks=K)
        for t in range(len(y)):
            before = (np.array(est.coef_, copy=True), np.array(est.thresholds_, copy=True)) if t else None
            pred = est.fit_online(X[t:t + 1], y[t:t + 1])[0]
            if t and pred == y[t]:
                np.testing.assert_array_equal(est.coef_, before[0])
                np.testing.assert_array_equal(est.thresholds_, before[1])


@pytest.mark.parametrize("cls", [PRank, SiPRank])
@pytest.mark.parametrize("seed", range(5))
def test_prank_mistake_bound_on_separable_stream(cls, seed):
    """Theorem 1: sum_t |yhat - y| <= (k-1)(R^2+1)/gamma^2, over any number of passes."""
    rng = np.random.default_rng(seed)
    gamma = 0.05
    X, y, w, b = separable_stream(rng, 400, 3, K, gamma)
    R2 = np.max(np.sum(X ** 2, axis=1))
    bound = (K - 1) * (R2 + 1) / gamma ** 2
    est = cls(n_ranks=K)
    total, last = 0, None
    for _ in range(200):
        pred = est.fit_online(X, y)
        last = int(np.abs(pred - y).sum())
        total += last
        if last == 0:
            break
    assert last == 0, "PRank must converge on a separable stream"
    assert 0 < total <= bound


# ------------------------------------------------------------------------------------------
# No-PRank
# ------------------------------------------------------------------------------------------
def brute_force_dual(c, yr, q):
    """Independent solution of eq. 4.5: enumerate active sets, solve each KKT system."""
    m = len(c)
    H = q * np.outer(yr, yr) + np.eye(m)
    best, best_val = None, np.inf
    for mask in itertools.product([0, 1], repeat=m):
        A = np.flatnonzero(mask)
        tau = np.zeros(m)
        if A.size:
            tau[A] = np.linalg.solve(H[np.ix_(A, A)], -c[A])
        grad = H @ tau + c
        if np.all(tau >= -1e-12) and np.all(grad >= -1e-9):
            val = 0.5 * tau @ H @ tau + c @ tau
            if val < best_val:
                best, best_val = tau, val
    return best


@given(st.integers(1, 6).flatmap(lambda m: st.tuples(
    arrays(np.float64, (m,), elements=st.floats(-5, 5, width=32)),
    arrays(np.int64, (m,), elements=st.sampled_from([-1, 1])),
    st.floats(0, 10, width=32))))
def test_noprank_dual_matches_brute_force(args):
    c, yr, q = args
    yr = yr.astype(float)
    tau = np.empty(len(c))
    S = noprank_dual(c.astype(float), yr, float(q), tau)
    ref = brute_force_dual(c.astype(float), yr, float(q))
    np.testing.assert_allclose(tau, ref, atol=1e-8)
    assert S == pytest.approx(float(yr @ tau), abs=1e-9)


def test_noprank_lemma2_conservative():
    """Lemma 2: margins all >= beta  =>  the optimum is tau = 0."""
    c = np.array([0.0, 0.3, 2.0])  # c_r = y_r (w.x - b_r) - beta >= 0
    tau = np.empty(3)
    noprank_dual(c, np.array([1.0, -1.0, -1.0]), 4.0, tau)
    np.testing.assert_array_equal(tau, 0.0)


@pytest.mark.parametrize("beta", [0.1, 1.0, 3.0])
def test_noprank_meets_margin_after_each_update(rng, beta):
    X = rng.normal(size=(300, 4))
    y = rng.integers(1, K + 1, size=300)
    est = NoPRank(n_ranks=K, beta=beta)
    for t in range(300):
        pred = est.fit_online(X[t:t + 1], y[t:t + 1])[0]
        if pred != y[t]:
            s = X[t] @ est.coef_
            yr = np.where(y[t] <= np.arange(1, K), -1.0, 1.0)
            assert np.all(yr * (s - est.thresholds_) >= beta - 1e-9)
            assert est.predict(X[t:t + 1])[0] == y[t]


@pytest.mark.parametrize("seed", range(3))
def test_noprank_theorem3_and_corollary1(seed):
    rng = np.random.default_rng(100 + seed)
    gamma, beta = 0.05, 1.0
    X, y, _, _ = separable_stream(rng, 300, 3, K, gamma)
    R2 = np.max(np.sum(X ** 2, axis=1))
    est = NoPRank(n_ranks=K, beta=beta)
    mistakes = 0
    for _ in range(100):
        pred = est.fit_online(X, y)
        mistakes += int(np.sum(pred != y))
    assert est.tau_sum_[0] <= 2 * beta / gamma ** 2
    assert mistakes <= 2 * (R2 + 1) / gamma ** 2


# ------------------------------------------------------------------------------------------
# Mu-PRank
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("eta", [0.5, 1.0, 4.0, 16.0, 64.0, 1000.0])
def test_muprank_stays_l1_normalised_and_finite(rng, eta):
    X = rng.uniform(-0.5, 0.5, size=(2000, 20))
    y = rng.integers(1, 7, size=2000)
    est = MuPRank(n_ranks=6, eta=eta)
    est.fit_online(X, y)
    total = est.coef_.sum() + est.thresholds_.sum()
    assert total == pytest.approx(1.0, rel=1e-12)
    assert np.all(np.isfinite(est.log_coef_)) and np.all(np.isfinite(est.log_thresholds_))
    assert np.all(np.diff(est.thresholds_) >= 0)


def test_muprank_update_matches_figure5():
    """One Mu-PRank update computed by hand from Fig. 5."""
    est = MuPRank(n_ranks=3, eta=0.7)
    x = np.array([[0.5, -0.25]])
    w, b = np.full(2, 0.25), np.full(2, 0.25)  # start: everything 1/(n+k-1) = 1/4
    assert est.fit_online(x, np.array([3]))[0] == 1  # w.x = 0.0625 < b_1
    tau = np.array([1.0, 1.0])  # both thresholds on the wrong side, y_r = +1
    wn = w * np.exp(0.7 * x[0] * tau.sum())
    bn = b * np.exp(-0.7 * tau)
    Z = wn.sum() + bn.sum()
    np.testing.assert_allclose(est.coef_, wn / Z, rtol=1e-12)
    np.testing.assert_allclose(est.thresholds_, bn / Z, rtol=1e-12)


def test_muprank_mistake_bound_theorem4():
    rng = np.random.default_rng(3)
    n, k = 4, 3
    # a positive l1-normalised rule with increasing positive thresholds
    w = np.array([0.4, 0.1, 0.05, 0.05])
    b = np.array([0.1, 0.3])
    gamma = 0.02
    X, y = [], []
    while len(X) < 500:
        x = rng.uniform(-1, 1, size=n)
        s = w @ x
        if np.min(np.abs(s - b)) >= gamma:
            X.append(x)
            y.append(1 + int(np.sum(s > b)))
    X, y = np.array(X), np.array(y)
    eta = 1 / (2 * (k - 1)) * np.log((k - 1 + gamma) / (k - 1 - gamma))
    bound = np.log(k - 1 + n) / (np.log(2 / (np.exp(eta * (k - 1)) + np.exp(-eta * (k - 1)))) + eta * gamma)
    est = MuPRank(n_ranks=k, eta=eta)
    total = 0
    for _ in range(30):
        total += int(np.abs(est.fit_online(X, y) - y).sum())
    assert total <= bound


# -------------------------------------------------------------------------------------
# Voted PRank: where a new hypothesis's survival count starts (Harrington 2003, Sec. 3.1)
# -------------------------------------------------------------------------------------
# Worked by hand, k = 3, one feature; rank = 1 + #{r : w.x >= b_r}; PRank's update (C&S
# Fig. 2) moves every threshold on the wrong side by y_r = +-1 and w by the sum times x.
#   t1 x= 1 y=3: w=0, b=(0,0): s=0 -> 3, correct            h0 (0; 0,0) counted
#   t2 x= 1 y=1: s=0 -> 3, mistake: y_r = (-1,-1), both wrong side (0 * -1 <= 0):
#                tau = (-1,-1), w = -2, b = (1,1)          h1 created
#   t3 x= 1 y=1: s=-2 -> 1, correct                           h1 counted
#   t4 x=-1 y=3: s=2 -> 3, correct                            h1 counted
#   t5 x= 1 y=2: s=-2 -> 1, mistake: y_r = (+1,-1); (s-b_1)y_1 = -3 <= 0 moves, (s-b_2)y_2 = 3
#                does not: tau = (1,0), w = -1, b = (0,1)   h2 created
# Counts: Freund & Schapire (new rule at 1) (1, 3, 1); Harrington (at 0) (1, 2, 0).
# On x = 1 the rules give ranks (3, 1, 1): H = 7/5 and 5/3.
HAND_X = np.array([[1.0], [1.0], [1.0], [-1.0], [1.0]])
HAND_Y = np.array([3, 1, 1, 3, 2])


@pytest.mark.parametrize("count,counts,vote", [("freund_schapire", [1, 3, 1], 7 / 5), ("harrington", [1, 2, 0], 5 / 3)])
def test_voted_prank_count_conventions_by_hand(count, counts, vote):
    m = VotedPRank(n_ranks=3, count=count)
    np.testing.assert_array_equal(m.fit_online(HAND_X, HAND_Y), [3, 3, 1, 3, 1])
    np.testing.assert_array_equal(m.hyp_coef_, [[0.0], [-2.0], [-1.0]])
    np.testing.assert_array_equal(m.hyp_thresholds_, [[0, 0], [1, 1], [0, 1]])
    np.testing.assert_array_equal(m.hyp_counts_, counts)
    assert m.decision_function(np.array([[1.0]]))[0] == pytest.approx(vote, rel=1e-15)
    assert m.set_params(output="rank").predict(np.array([[1.0]]))[0] == (1 if count == "freund_schapire" else 2)
    # fed one round at a time (partial_fit), the counts are the same: each call starts the
    # rules it creates at the convention's value, never the one carried over
    p = VotedPRank(n_ranks=3, count=count)
    for t in range(len(HAND_Y)):
        p.partial_fit(HAND_X[t:t + 1], HAND_Y[t:t + 1])
    np.testing.assert_array_equal(p.hyp_counts_, counts)


def test_voted_prank_harrington_all_zero_counts_vote_equally():
    """One round, a mistake: under Harrington's count both rules have 0 correct ranks, H's
    ratio is 0/0, and the rules vote equally (ranks 3 and 1: 2.0), as OAP-VP does."""
    x, y = np.array([[1.0]]), np.array([1])
    h = VotedPRank(n_ranks=3, count="harrington").fit(x, y)
    np.testing.assert_array_equal(h.hyp_counts_, [0, 0])
    assert h.decision_function(x)[0] == 2.0
    fs = VotedPRank(n_ranks=3).fit(x, y)  # Freund & Schapire: the new rule's 1 alone
    np.testing.assert_array_equal(fs.hyp_counts_, [0, 1])
    assert fs.decision_function(x)[0] == 1.0


def test_voted_prank_count_is_validated():
    from rankrepro.algorithms import ParamError

    with pytest.raises(ParamError, match="count"):
        VotedPRank(count="zero").fit(HAND_X, HAND_Y)
