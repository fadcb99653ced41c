"""OAP ensembles (Harrington 2003), voted PRank, MCP, Widrow-Hoff and the kernel map."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankrepro.algorithms import (OAPBPM, OAPVP, MulticlassPerceptron, OAPBagg, PRank, VotedPRank, WidrowHoff,
                                  poly2_features, poly2_kernel)
from rankrepro.data.synthetic import synthetic_hgo


@pytest.fixture
def stream(rng):
    s = synthetic_hgo(3000, 500, rng)
    return poly2_features(s.X_train), s.y_train, poly2_features(s.X_test), s.y_test


@pytest.mark.parametrize("cls", [OAPBPM, OAPBagg, OAPVP])
def test_single_member_always_fed_is_prank(cls, stream):
    """N = 1, tau = 1: every ensemble reduces to PRank exactly."""
    X, y, Xt, yt = stream
    ens, pr = cls(N=1, tau=1.0, seed=0), PRank()
    np.testing.assert_array_equal(ens.fit_online(X, y), pr.fit_online(X, y))
    np.testing.assert_array_equal(ens.member_coef_[0], pr.coef_)
    np.testing.assert_array_equal(ens.predict(Xt), pr.predict(Xt))


@pytest.mark.parametrize("cls", [OAPBPM, OAPBagg, OAPVP])
def test_tau_one_members_identical(cls, stream):
    """tau = 1 feeds every member every example: all N members equal PRank (no diversity)."""
    X, y, Xt, _ = stream
    ens = cls(N=7, tau=1.0, seed=0)
    ens.fit_online(X, y)
    pr = PRank().fit(X, y)
    for j in range(7):
        np.testing.assert_array_equal(ens.member_coef_[j], pr.coef_)
    np.testing.assert_array_equal(ens.predict(Xt), pr.predict(Xt))


@given(st.integers(0, 10_000), st.floats(0.05, 1.0))
def test_bpm_average_is_the_mean_rule_and_ordered(seed, tau):
    rng = np.random.default_rng(seed)
    s = synthetic_hgo(400, 50, rng)
    X = poly2_features(s.X_train)
    ens = OAPBPM(N=9, tau=tau, seed=seed)
    ens.fit_online(X, s.y_train)
    np.testing.assert_allclose(ens.coef_, ens.member_coef_.mean(axis=0), atol=1e-9)
    np.testing.assert_allclose(ens.thresholds_, ens.member_thresholds_.mean(axis=0), atol=1e-12)
    assert np.all(np.diff(ens.thresholds_) >= 0)
    for j in range(9):
        assert np.all(np.diff(ens.member_thresholds_[j]) >= 0)
    # the Bayes-point prediction is the averaged rule's
    Xt = poly2_features(s.X_test)
    scores = Xt @ ens.member_coef_.mean(axis=0)
    b = ens.member_thresholds_.mean(axis=0)
    ref = np.array([1 + int(np.sum(sc >= b)) for sc in scores])
    np.testing.assert_array_equal(ens.predict(Xt), ref)


def test_bernoulli_sampling_rate(stream):
    X, y, _, _ = stream
    ens = OAPBPM(N=50, tau=0.3, seed=1)
    rng = np.random.default_rng(np.random.SeedSequence(1))
    expected = rng.random((len(y), 50)) < 0.3
    assert abs(expected.mean() - 0.3) < 0.01
    # the same mask drives the ensemble: member j runs PRank on exactly the rows it drew
    ens.fit_online(X, y)
    for j in (0, 17, 49):
        ref = PRank().fit(X[expected[:, j]], y[expected[:, j]])
        np.testing.assert_array_equal(ens.member_coef_[j], ref.coef_)


def test_bagg_and_vp_outputs(stream):
    X, y, Xt, _ = stream
    bagg = OAPBagg(N=6, tau=0.5, seed=3)
    bagg.fit_online(X, y)
    member_ranks = np.stack([1 + np.sum((Xt @ bagg.member_coef_[j])[:, None] >= bagg.member_thresholds_[j][None, :],
                                        axis=1) for j in range(6)])
    # H(x) = sum_j h_j(x) / N as Harrington writes it; output='rank' rounds it
    np.testing.assert_allclose(bagg.predict(Xt), member_ranks.mean(0), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(bagg.set_params(output="rank").predict(Xt),
                                  np.clip(np.floor(member_ranks.mean(0) + 0.5), 1, 5))
    vp = OAPVP(N=6, tau=0.5, seed=3)
    vp.fit_online(X, y)
    assert np.array_equal(vp.member_coef_, bagg.member_coef_)  # same seed, same members
    v = vp.votes_
    assert v.sum() > 0 and np.all(v == np.floor(v))
    np.testing.assert_allclose(vp.predict(Xt), v @ member_ranks / v.sum(), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(vp.set_params(output="rank").predict(Xt),
                                  np.clip(np.floor(v @ member_ranks / v.sum() + 0.5), 1, 5))


def test_voted_prank_counts_and_output(stream):
    X, y, Xt, _ = stream
    vp, pr = VotedPRank(), PRank()
    np.testing.assert_array_equal(vp.fit_online(X, y), pr.fit_online(X, y))  # online: the current rule
    assert vp.hyp_counts_.shape[0] == pr.n_mistakes_ + 1
    # Freund & Schapire counts: 1 per created rule + 1 per correct round (the zero rule starts at 0)
    assert vp.hyp_counts_.sum() == pr.n_mistakes_ + (len(y) - pr.n_mistakes_)
    np.testing.assert_array_equal(vp.hyp_coef_[-1], pr.coef_)
    ranks = np.stack([1 + np.sum((Xt @ w)[:, None] >= b[None, :], axis=1)
                      for w, b in zip(vp.hyp_coef_, vp.hyp_thresholds_)])
    mean = vp.hyp_counts_ @ ranks / vp.hyp_counts_.sum()
    np.testing.assert_allclose(vp.predict(Xt), mean, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(vp.set_params(output="rank").predict(Xt), np.clip(np.floor(mean + 0.5), 1, 5))


def test_widrow_hoff_step():
    wh = WidrowHoff(n_ranks=5, eta=0.1)
    x = np.array([[1.0, 2.0]])
    assert wh.fit_online(x, np.array([4]))[0] == 1  # w = 0: score 0 rounds to rank 1
    np.testing.assert_allclose(wh.coef_, [0.4, 0.8])  # w += 0.1 * (4 - 0) x
    assert wh.predict(np.array([[1.0, 1.0]]))[0] == 1  # score 1.2 -> 1
    assert wh.predict(np.array([[2.0, 2.0]]))[0] == 2  # 2.4 -> 2
    assert wh.predict(np.array([[3.0, 2.0]]))[0] == 3  # 2.8 -> 3
    assert wh.predict(np.array([[10.0, 0.0]]))[0] == 4  # 4.0 -> 4
    assert wh.predict(np.array([[100.0, 0.0]]))[0] == 5  # clipped


def test_widrow_hoff_divergence_is_reported():
    wh = WidrowHoff(n_ranks=3, eta=5.0)
    X = np.full((2000, 4), 3.0)
    y = np.ones(2000, dtype=int)
    with pytest.warns(RuntimeWarning, match="diverged"):
        preds = wh.fit_online(X, y)
    assert wh.diverged_ and preds.min() >= 1 and preds.max() <= 3


def test_mcp_uniform_update():
    m = MulticlassPerceptron(n_ranks=3)
    x = np.array([[1.0, 0.0]])
    assert m.fit_online(x, np.array([2]))[0] == 1  # all scores 0: ties go to rank 1
    # error set {1, 3} (scores >= the true rank's): each loses x/2, rank 2 gains x
    np.testing.assert_allclose(m.prototypes_, [[-0.5, 0], [1, 0], [-0.5, 0]])
    assert m.predict(x)[0] == 2


def test_poly2_map_equals_kernel(rng):
    for d in (1, 2, 5):
        X, Z = rng.normal(size=(20, d)), rng.normal(size=(15, d))
        np.testing.assert_allclose(poly2_features(X) @ poly2_features(Z).T, poly2_kernel(X, Z), rtol=1e-12, atol=1e-13)
    assert poly2_features(np.zeros((1, 2))).shape == (1, 6)


@given(st.integers(0, 10_000))
def test_compiled_agree_with_plain_reference(seed):
    from rankrepro.algorithms.reference import oap_bpm_plain, prank_plain

    rng = np.random.default_rng(seed)
    s = synthetic_hgo(300, 0, rng)
    X = poly2_features(s.X_train)
    pred, w, b = prank_plain(X, s.y_train, 5)
    pr = PRank()
    np.testing.assert_array_equal(pr.fit_online(X, s.y_train), pred)
    np.testing.assert_allclose(pr.coef_, w, atol=1e-12)
    np.testing.assert_array_equal(pr.thresholds_, b)
    mask = np.random.default_rng(seed).random((300, 8)) < 0.4
    pred, w, b = oap_bpm_plain(X, s.y_train, 5, mask)
    ens = OAPBPM(N=8, tau=0.4, seed=seed)
    np.testing.assert_array_equal(ens.fit_online(X, s.y_train), pred)
    np.testing.assert_allclose(ens.coef_, w, atol=1e-12)
    np.testing.assert_allclose(ens.thresholds_, b, atol=1e-12)


def test_mcp_tie_rule():
    """All prototypes start at zero: the first prediction is the lowest rank with
    ties='lowest' (first maximum), the highest with ties='highest'; afterwards the two agree
    wherever the scores are not tied."""
    from rankrepro.algorithms import MulticlassPerceptron

    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    y = np.array([3, 1, 2])
    lo = MulticlassPerceptron(n_ranks=4).fit_online(X, y)
    hi = MulticlassPerceptron(n_ranks=4, ties="highest").fit_online(X, y)
    assert lo[0] == 1 and hi[0] == 4
    m = MulticlassPerceptron(n_ranks=4, ties="highest").fit(X, y)
    assert m.predict(np.zeros((1, 2)))[0] == 4
    assert MulticlassPerceptron(n_ranks=4).fit(X, y).predict(np.zeros((1, 2)))[0] == 1
