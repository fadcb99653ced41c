"""The perceptron family of Elsas et al. (2008), against a plain re-implementation."""
import numpy as np
import pytest

from rankrepro.algorithms.pairwise import PairwisePerceptron, borda, committee_scores, make_pairs


def toy(rng, n_q=6, n_d=12, d=4, noise=0.0):
    w = rng.normal(size=d)
    X = rng.random((n_q * n_d, d))
    qid = np.repeat(np.arange(n_q), n_d)
    s = X @ w + noise * rng.normal(size=X.shape[0])
    y = np.zeros(X.shape[0], dtype=int)
    for q in range(n_q):
        m = qid == q
        y[m] = np.digitize(s[m], np.quantile(s[m], [0.6, 0.85]))
    return X, y, qid


def plain(X, y, qid, T, alpha):
    """Table 1 written out directly, keeping every hypothesis with its counter."""
    hi, lo, eta = make_pairs(y, qid)
    w, c, hyps, miss = np.zeros(X.shape[1]), 0, [], np.zeros(hi.size)
    alive = np.ones(hi.size, bool)
    for _ in range(T):
        for p in range(hi.size):
            if not alive[p]:
                continue
            if X[lo[p]] @ w >= X[hi[p]] @ w:
                hyps.append((w.copy(), c))
                w = w + eta[p] * (X[hi[p]] - X[lo[p]])
                c = 0
                miss[p] += 1
                if miss[p] > alpha * T:
                    alive[p] = False
            else:
                c += 1
    hyps.append((w.copy(), c))
    return hyps


def test_make_pairs():
    hi, lo, eta = make_pairs(np.array([2, 0, 1, 0, 1]), np.array([1, 1, 1, 2, 2]))
    pairs = sorted(zip(hi.tolist(), lo.tolist()))
    assert pairs == [(0, 1), (0, 2), (2, 1), (4, 3)]
    assert sorted(eta.tolist()) == [1 / 3, 1 / 3, 1 / 3, 1.0]


@pytest.mark.parametrize("alpha", [0.85, 0.3])
def test_outputs_match_plain_implementation(rng, alpha):
    X, y, qid = toy(rng, noise=0.3)
    T = 6
    p = PairwisePerceptron(n_iter=T, committee=5, alpha=alpha, shuffle=False).fit(X, y, qid)
    hyps = plain(X, y, qid, T, alpha)
    np.testing.assert_allclose(p.last(), hyps[-1][0], atol=1e-12)
    Z = sum(c for _, c in hyps)
    np.testing.assert_allclose(p.average(), sum(c * w for w, c in hyps) / Z, atol=1e-12)
    best = max(c for _, c in hyps)
    assert any(np.allclose(p.pocket(), w) for w, c in hyps if c == best)
    W, c = p.members()
    top = sorted((c_ for _, c_ in hyps), reverse=True)[:5]
    assert sorted(c.tolist(), reverse=True) == top


def test_separable_data_reaches_zero_mistakes(rng):
    X, y, qid = toy(rng, noise=0.0)
    p = PairwisePerceptron(n_iter=200, committee=3, alpha=1.0, seed=0).start(X, y, qid)
    for _ in range(200):
        before = p.miss_.sum()
        p.partial_fit_iteration()
        if p.miss_.sum() == before:
            break
    hi, lo, _ = make_pairs(y, qid)
    assert np.all(X[hi] @ p.last() > X[lo] @ p.last())


def test_committee_combinations(rng):
    X, y, qid = toy(rng)
    W = rng.normal(size=(3, X.shape[1]))
    a = committee_scores(W, np.array([1.0, 0.0, 0.0]), X, qid, "A")
    np.testing.assert_allclose(a, X @ W[0])
    b = committee_scores(W, np.array([1.0, 1.0, 1.0]), X, qid, "B")
    ref = sum(borda(X @ W[k], qid) for k in range(3))
    np.testing.assert_allclose(b, ref)
    assert borda(np.array([0.1, 0.9, 0.5]), np.zeros(3, int)).tolist() == [1, 3, 2]
