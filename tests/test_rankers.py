"""Batch rankers: Ranking SVM against an independent solver, RankBoost, the protocol."""
import numpy as np
import pytest
from scipy.optimize import minimize

from rankrepro.algorithms.pairwise import make_pairs, mean_ndcg_columns
from rankrepro.algorithms.rankers import LISTS, RANKERS, RankBoost, RankSVM
from rankrepro.metrics import ndcg_at, per_query


def data(rng, n_q=8, n_d=10, d=3):
    X = rng.random((n_q * n_d, d))
    qid = np.repeat(np.arange(n_q), n_d)
    s = X @ np.array([2.0, -1.0, 0.5][:d]) + 0.2 * rng.normal(size=X.shape[0])
    y = (s > np.quantile(s, 0.7)).astype(int) + (s > np.quantile(s, 0.9)).astype(int)
    return X, y, qid


def test_ranksvm_matches_primal_optimum(rng):
    X, y, qid = data(rng)
    hi, lo, _ = make_pairs(y, qid)
    D = X[hi] - X[lo]
    C = 0.05
    w = RankSVM(max_pass=5000, eps=1e-6).fit_C(D, C, seed=3)

    def primal(v):
        return 0.5 * v @ v + C * np.maximum(0, 1 - D @ v).sum()

    ref = minimize(primal, np.zeros(D.shape[1]), method="Powell", options={"xtol": 1e-10, "ftol": 1e-12}).x
    assert primal(w) == pytest.approx(primal(ref), rel=1e-4)
    np.testing.assert_allclose(w, ref, atol=1e-2)


def test_ranksvm_and_rankboost_are_repeatable(rng):
    X, y, qid = data(rng)
    ev = [(X, y, qid)]
    for cls in (RankSVM, RankBoost):
        a = [s[0] for _, s in cls(seed=5).iterate(X, y, qid, ev)]
        b = [s[0] for _, s in cls(seed=5).iterate(X, y, qid, ev)]
        for u, v in zip(a, b):
            np.testing.assert_array_equal(u, v)


def test_rankboost_finds_the_informative_feature():
    rng = np.random.default_rng(0)
    X = rng.random((200, 4))
    qid = np.repeat(np.arange(10), 20)
    y = (X[:, 2] > 0.6).astype(int)  # feature 3 decides relevance
    rb = RankBoost(n_rounds=3)
    steps = list(rb.iterate(X, y, qid, [(X, y, qid)]))
    assert rb.weak_[0][0] == 2 and 0.5 < rb.weak_[0][1] < 0.7 and rb.weak_[0][2] > 0
    assert np.mean(per_query(steps[0][1][0], y, qid, ("ndcg@10",))["ndcg@10"]) == pytest.approx(1.0)


def test_mean_ndcg_columns_matches_metric(rng):
    X, y, qid = data(rng)
    S = rng.normal(size=(X.shape[0], 4))
    ref = [np.mean(per_query(S[:, k], y, qid, ("ndcg@10",))["ndcg@10"]) for k in range(4)]
    np.testing.assert_allclose(mean_ndcg_columns(S, y, qid, 10), ref)


@pytest.mark.parametrize("name", sorted(RANKERS) + sorted(LISTS))
def test_out_of_range_rejected(name):
    from rankrepro.algorithms import ParamError

    bad = {"perceptron": {"alpha": 0.0}, "ranksvm": {"C_grid": [-1.0]}, "rankboost": {"n_rounds": 0},
           "lambdamart": {"learning_rate": -0.1}, "fixed_list": {"ranking": "RXN"}}[name]
    cls = {**RANKERS, **LISTS}[name]
    with pytest.raises(ParamError):
        cls(**bad).validate()


def test_fixed_list_labels():
    assert LISTS["fixed_list"](ranking="RNR").labels().tolist() == [1, 0, 1]
    assert ndcg_at(LISTS["fixed_list"](ranking="RRNNNR").labels()) == pytest.approx(0.907, abs=1e-3)
