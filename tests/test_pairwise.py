"""The perceptron family of Elsas et al. (2008), against a plain re-implementation."""
import numpy as np
import pytest

from rankrepro.algorithms.pairwise import PairwisePerceptron, borda, committee_scores, make_pairs, pair_differences


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


def plain(X, y, qid, T, alpha, order=None, alpha_iterations=100, committee=5):
    """Tables 1 and 2 written out directly, keeping every hypothesis with its counter; the
    pairs visited in ``order`` every pass (None: as make_pairs lists them)."""
    hi, lo, eta = make_pairs(y, qid)
    order = np.arange(hi.size) if order is None else order
    w, c, hyps, miss = np.zeros(X.shape[1]), 0, [], np.zeros(hi.size)
    K = []  # the committee: (w, c), admitted while not full, else when c beats the smallest
    alive = np.ones(hi.size, bool)
    for _ in range(T):
        for p in order:
            if not alive[p]:
                continue
            if X[lo[p]] @ w >= X[hi[p]] @ w:
                hyps.append((w.copy(), c))
                if len(K) < committee:
                    K.append((w.copy(), c))
                else:
                    m = min(range(len(K)), key=lambda k: K[k][1])
                    if c > K[m][1]:
                        K[m] = (w.copy(), c)
                w = w + eta[p] * (X[hi[p]] - X[lo[p]])
                c = 0
                miss[p] += 1
                if miss[p] > alpha * alpha_iterations:
                    alive[p] = False
            else:
                c += 1
    hyps.append((w.copy(), c))
    return hyps, K


def test_make_pairs():
    hi, lo, eta = make_pairs(np.array([2, 0, 1, 0, 1]), np.array([1, 1, 1, 2, 2]))
    pairs = sorted(zip(hi.tolist(), lo.tolist()))
    assert pairs == [(0, 1), (0, 2), (2, 1), (4, 3)]
    assert sorted(eta.tolist()) == [1 / 3, 1 / 3, 1 / 3, 1.0]


def test_make_pairs_compiled_is_the_numpy_loop_bit_for_bit(rng):
    """The compiled pair listing gives the query-by-query NumPy loop's pairs in its order, with its
    eta, for integer and float labels and ids, empty and one-document queries, no documents."""
    from rankrepro.algorithms.pairwise import _make_pairs_numpy

    for trial in range(120):
        n = int(rng.integers(0, 50)) if trial else 0
        y = rng.integers(0, 4, size=n).astype((np.int64, np.int32, np.float64)[trial % 3])
        q = rng.integers(0, 8, size=n).astype((np.int64, np.float64)[trial % 2])
        for got, want in zip(make_pairs(y, q), _make_pairs_numpy(y, q)):
            assert got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()


def test_pair_differences_are_numpys_bit_for_bit(rng):
    """The pair-difference matrix written in one compiled pass (the perceptron's and the Ranking
    SVM's) holds the very doubles of X[hi] - X[lo]: any feature matrix (non-contiguous and
    integer ones included), any pair order, no pairs."""
    X, y, qid = toy(rng, d=7)
    X[::5] *= 1e300  # far apart magnitudes: a subtraction that rounds
    X[1::7] = -X[1::7] * 1e-300
    hi, lo, _ = make_pairs(y, qid)
    perm = rng.permutation(hi.size)
    for A in (X, np.asfortranarray(X), X[:, ::2], rng.integers(-9, 9, size=X.shape)):
        for h, l in ((hi, lo), (hi[perm], lo[perm]), (hi[:0], lo[:0])):
            D = pair_differences(np.ascontiguousarray(A, dtype=np.float64), h, l)
            want = np.asarray(A, dtype=np.float64)[h] - np.asarray(A, dtype=np.float64)[l]
            assert D.shape == want.shape and D.dtype == np.float64
            assert D.tobytes() == want.tobytes()


@pytest.mark.parametrize("alpha, alpha_iterations", [(0.85, 100), (0.3, 6), (0.5, 3)])
@pytest.mark.parametrize("order", ["file", "random"])
def test_outputs_match_plain_implementation(rng, alpha, alpha_iterations, order):
    """Ours equals Tables 1-2 written out plainly, on the same pair order: file order, or the
    one permutation drawn from the seed ('random')."""
    X, y, qid = toy(rng, noise=0.3)
    T = 6
    p = PairwisePerceptron(n_iter=T, committee=5, alpha=alpha, alpha_iterations=alpha_iterations, order=order,
                           seed=11).fit(X, y, qid)
    n_pairs = make_pairs(y, qid)[0].size
    perm = None if order == "file" else np.random.default_rng(11).permutation(n_pairs)
    hyps, K = plain(X, y, qid, T, alpha, perm, alpha_iterations)
    np.testing.assert_allclose(p.last(), hyps[-1][0], atol=1e-12)
    Z = sum(c for _, c in hyps)
    np.testing.assert_allclose(p.average(), sum(c * w for w, c in hyps) / Z, atol=1e-12)
    best = max(c for _, c in hyps)
    assert any(np.allclose(p.pocket(), w) for w, c in hyps if c == best)
    # the committee as Table 2 keeps it (the current hypothesis competes with its running counter)
    W, c = p.members()
    ref = sorted([c_ for _, c_ in K] + [hyps[-1][1]], reverse=True)[:5]
    assert sorted(c.tolist(), reverse=True) == ref


def test_pair_orders_differ_and_are_repeatable(rng):
    X, y, qid = toy(rng, noise=0.3)
    a = PairwisePerceptron(n_iter=3, order="random", seed=1).fit(X, y, qid).average()
    b = PairwisePerceptron(n_iter=3, order="random", seed=1).fit(X, y, qid).average()
    f = PairwisePerceptron(n_iter=3, order="file", seed=1).fit(X, y, qid).average()
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, f)
    with pytest.raises(ValueError, match="order"):
        PairwisePerceptron(order="sorted")


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
