"""Coactive learning (Shivaswamy & Joachims 2012): Lemma 2, Theorem 1, batch and convex variants."""
import numpy as np
import pytest

from rankrepro.algorithms import ParamError
from rankrepro.algorithms.coactive import CoactiveRankSVM, PreferencePerceptron, strictly_alpha_informative_item


@pytest.mark.parametrize("T", [16, 64, 256])
def test_lemma2_lower_bound(T):
    """Contexts e_1..e_T, Y = {-1, +1}, phi(x, y) = y x; w* = -(y_1..y_T)/sqrt(T) built from the
    learner's own outputs: every step has regret 2/sqrt(T), so REG_T = 2/sqrt(T) = Omega(1/sqrt(T)),
    even though the feedback ybar = y* is strictly 1-informative."""
    learner = PreferencePerceptron(n_features=T)
    outputs = []
    for t in range(T):
        x = np.zeros(T)
        x[t] = 1.0
        s = learner.scores(np.stack([-x, x]))[0]  # objects y = -1, +1
        y = 1.0 if s[1] >= s[0] else -1.0
        outputs.append(y)
        learner.update(((-y) * x - y * x)[None, :])  # feedback: the other label
    w_star = -np.array(outputs) / np.sqrt(T)
    regret = np.mean([abs(w_star[t]) - w_star[t] * outputs[t] for t in range(T)])
    assert regret == pytest.approx(2 / np.sqrt(T))


def simulate(rng, T, alpha, n_items=40, d=6, batch=1, variant="perceptron", radius=None):
    items = rng.normal(size=(n_items, d))
    items /= np.linalg.norm(items, axis=1, keepdims=True).max()  # R = 1
    w_star = rng.normal(size=d)
    U = items @ w_star
    learner = PreferencePerceptron(n_features=d, batch=batch, variant=variant, radius=radius)
    regrets = []
    for _ in range(T):
        y = int(np.argmax(learner.scores(items)[0]))
        ybar = int(strictly_alpha_informative_item(U[None, :], np.array([y]), alpha)[0])
        assert U[ybar] - U[y] >= alpha * (U.max() - U[y]) - 1e-12  # the feedback is strictly alpha-informative
        regrets.append(U.max() - U[y])
        learner.update((items[ybar] - items[y])[None, :])
    return np.array(regrets), np.linalg.norm(w_star), learner


@pytest.mark.parametrize("alpha", [0.1, 0.5, 1.0])
@pytest.mark.parametrize("seed", range(3))
def test_theorem1_regret_bound(alpha, seed):
    rng = np.random.default_rng(seed)
    reg, wn, _ = simulate(rng, 400, alpha)
    for T in (10, 50, 100, 400):
        assert reg[:T].mean() <= 2 * 1.0 * wn / (alpha * np.sqrt(T)) + 1e-9


def test_batch_bound_and_convex_projection():
    rng = np.random.default_rng(7)
    reg, wn, _ = simulate(rng, 400, 0.5, batch=4)
    for T in (40, 400):
        assert reg[:T].mean() <= 2 * wn * np.sqrt(4) / (0.5 * np.sqrt(T))
    reg, wn, learner = simulate(np.random.default_rng(8), 300, 0.5, variant="convex", radius=2.0)
    assert np.linalg.norm(learner.W) <= 2.0 + 1e-12
    assert reg[-100:].mean() <= reg[:100].mean()


def test_feedback_is_the_lowest_qualifying_item():
    U = np.array([[0.0, 1.0, 2.0, 3.0, 10.0]])
    # presented item 1 (utility 1): best 10, alpha 0.2 needs >= 1 + 1.8 = 2.8 -> item 3 (3.0), not 4
    assert strictly_alpha_informative_item(U, np.array([1]), 0.2).tolist() == [3]
    assert strictly_alpha_informative_item(U, np.array([4]), 0.5).tolist() == [4]  # already the best
    avail = np.array([[True, True, True, False, True]])
    assert strictly_alpha_informative_item(U, np.array([1]), 0.2, avail).tolist() == [4]
    masked = np.where(avail, U, -np.inf)
    assert strictly_alpha_informative_item(U, np.array([1]), 0.2, masked=masked).tolist() == [4]


def test_users_vectorised_equal_one_by_one():
    rng = np.random.default_rng(0)
    items = rng.normal(size=(30, 5))
    W_star = rng.normal(size=(4, 5))
    U = W_star @ items.T
    many = PreferencePerceptron(n_features=5, n_users=4)
    single = [PreferencePerceptron(n_features=5) for _ in range(4)]
    for _ in range(50):
        y = np.argmax(many.scores(items), axis=1)
        ybar = strictly_alpha_informative_item(U, y, 0.3)
        many.update(items[ybar] - items[y])
        for u, s in enumerate(single):
            yu = int(np.argmax(s.scores(items)[0]))
            assert yu == y[u]
            s.update((items[ybar[u]] - items[yu])[None, :])
    np.testing.assert_allclose(many.W, np.vstack([s.W for s in single]))


def test_bad_parameters():
    with pytest.raises(ParamError):
        PreferencePerceptron(n_features=3, batch=0)
    with pytest.raises(ParamError):
        PreferencePerceptron(n_features=3, variant="convex")


def test_movie_protocol_on_a_tiny_setup(monkeypatch):
    """The simulation on a hand-made setup: regret >= 0, falls under alpha = 1, repeatable."""
    from rankrepro.data import builders
    from rankrepro.data.coactive_movies import MovieSetup
    from rankrepro.protocols.coactive import CoactiveSpec, coactive_movies_trial

    rng = np.random.default_rng(0)
    M = rng.normal(size=(60, 4))
    W = rng.normal(size=(12, 4))
    setup = MovieSetup(M, W, [(np.array([0, 1]), np.array([5.0, 1.0]))] * 12, 4, 1.0, 0.0)
    monkeypatch.setitem(builders.BUILDERS, "tiny", lambda seed, data_path, **kw: setup)

    def run(alpha, feedback="strict"):
        spec = CoactiveSpec("preference_perceptron", {"feedback": feedback, "alpha": alpha}, "tiny", {}, 1, 0, 2,
                            25, 10, "unused", np.random.SeedSequence(3))
        return np.array([v for m, _, v in coactive_movies_trial(spec) if m == "regret"])

    a = run(1.0)
    assert np.all(a >= 0) and a[-1] < a[0]
    np.testing.assert_array_equal(a, run(1.0))
    assert np.all(run(0.5, "noisy") >= 0)


def test_ranksvm_baseline_retrains_on_growth_and_cross_validates():
    rng = np.random.default_rng(1)
    svm = CoactiveRankSVM(3, min_cv_pairs=20, cv_folds=5, C_grid=(0.1, 10.0))
    w_true = np.array([1.0, -2.0, 0.5])
    sizes = []
    for _ in range(80):
        d = rng.normal(size=3)
        svm.add_pair(d if d @ w_true > 0 else -d)
        sizes.append(svm.trained_on)
    # retrained at 1, 2, 3, ... then only when the pairs grew by 10%
    changes = sorted(set(sizes))
    assert changes[:3] == [1, 2, 3]
    assert all(b >= 1.1 * a for a, b in zip(changes[10:], changes[11:]))
    assert svm.n_fits > len(changes)  # cross-validation fits once 20 pairs were there
    D = np.array(svm.pairs)
    assert np.mean(D @ svm.w > 0) > 0.9
    svm.add_pair(np.zeros(3))  # a feedback equal to the presentation adds no pair
    assert len(svm.pairs) == 80


# ---------------------------------------------------------------------------------------
# web search (Sec. 5.1): ranking feedback, w*, the trial
# ---------------------------------------------------------------------------------------
from hypothesis import given, settings, strategies as st  # noqa: E402

from rankrepro.protocols.coactive import (  # noqa: E402
    least_squares_w, noisy_ranking_feedback, position_weights, strict_ranking_feedback)


def _utility(u, top):
    return u[top] @ position_weights(len(u))[:len(top)]


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 30), st.sampled_from([0.05, 0.1, 0.5, 1.0]), st.integers(0, 2**32 - 1))
def test_strict_ranking_feedback_is_strictly_alpha_informative_at_the_first_depth(n, alpha, seed):
    rng = np.random.default_rng(seed)
    u = rng.normal(size=n)
    order = rng.permutation(n)
    pick = strict_ranking_feedback(order, u, alpha)
    k = min(5, n)
    u_y, u_bar, u_best = _utility(u, order[:k]), _utility(u, pick), _utility(u, np.argsort(-u)[:k])
    assert len(set(pick.tolist())) == k
    assert u_bar - u_y >= alpha * (u_best - u_y) - 1e-9  # eq. 4
    depth = max(int(np.flatnonzero(np.isin(order, pick)).max()) + 1, k)
    # the user stopped at the first depth that works: one document less deep does not
    if depth > k:
        head = order[:depth - 1]
        best_head = head[np.argsort(-u[head], kind="stable")[:k]]
        assert _utility(u, best_head) - u_y < alpha * (u_best - u_y)


def test_noisy_ranking_feedback_takes_the_best_labels_of_the_top_ten():
    order = np.arange(14)[::-1]  # presented: 13, 12, ..., 0
    labels = np.array([4, 4, 4, 0, 0, 1, 0, 2, 0, 3, 0, 0, 1, 0])
    pick = noisy_ranking_feedback(order, labels)
    # the top ten presented are 13..4; their best labels: 9 (3), 7 (2), 12 (1), 5 (1), then 13 (0)
    assert pick.tolist() == [9, 7, 12, 5, 13]
    assert noisy_ranking_feedback(np.array([2, 0, 1]), np.array([0, 1, 2])).tolist() == [2, 1, 0]


def test_least_squares_w_matches_the_normal_equations():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 6))
    y = rng.integers(0, 3, size=200)
    Xc = X - X.mean(axis=0)  # the intercept removed by centring
    w = np.linalg.solve(Xc.T @ Xc, Xc.T @ (y - y.mean()))
    np.testing.assert_allclose(least_squares_w(X, y), w, rtol=1e-9, atol=1e-12)


def _ranking_npz(tmp_path, realisable):
    rng = np.random.default_rng(5)
    n_q, per = 120, 12
    X = rng.random((n_q * per, 8))
    score = X @ np.array([3.0, -2.0, 1.0, 0.0, 0.5, 0.0, -1.0, 2.0])
    y = score if realisable else np.digitize(score + rng.normal(scale=1.0, size=score.size), [0.5, 2.0])
    path = tmp_path / "ranking.npz"
    np.savez(path, X=X, y=y, qid=np.repeat(np.arange(n_q), per), fold=np.zeros(n_q * per, dtype=np.int8),
             part=np.full(n_q * per, "S1"))
    return str(path)


def _ranking_run(path, params, group=0, seed=3):
    from rankrepro.protocols.coactive import CoactiveSpec, coactive_ranking_trial

    spec = CoactiveSpec("preference_perceptron", params, "letor_all", {}, 7, group, 20, 10_000, 20, path,
                        np.random.SeedSequence(seed))
    rows = coactive_ranking_trial(spec)
    return np.array([v for m, _, v in rows if m == "regret"]), [r for r in rows if r[0] == "regret"]


def test_ranking_trial_regret_falls_under_strict_feedback_and_is_repeatable(tmp_path):
    path = _ranking_npz(tmp_path, realisable=True)
    a, rows = _ranking_run(path, {"feedback": "strict", "alpha": 1.0})
    assert np.all(a >= 0) and a[-1] < 0.2 * a[0]
    assert rows[-1][1] == 120  # one pass over the queries
    b, _ = _ranking_run(path, {"feedback": "strict", "alpha": 1.0})
    np.testing.assert_array_equal(a, b)
    c, _ = _ranking_run(path, {"feedback": "strict", "alpha": 1.0}, group=1)  # another query order
    assert not np.array_equal(a, c)


def test_ranking_trial_noisy_feedback_and_svm_baseline(tmp_path):
    path = _ranking_npz(tmp_path, realisable=False)
    p, _ = _ranking_run(path, {"feedback": "noisy"})
    s, _ = _ranking_run(path, {"feedback": "noisy", "variant": "ranksvm"})
    assert np.all(p >= 0) and np.all(s >= 0)
    assert p[-1] < p[0] and s[-1] < s[0]


def test_sorted_utilities_equal_the_numpy_definitions():
    """The movie simulation's O(log m) answers equal the numpy definitions exactly (the max
    over available items; strictly_alpha_informative_item), ties included, as items go."""
    from rankrepro.algorithms.coactive import SortedUtilities

    rng = np.random.default_rng(12)
    U = np.round(rng.normal(size=(40, 300)), 1)  # rounded: many ties
    avail = np.ones(U.shape, dtype=bool)
    su = SortedUtilities(U)
    rows = np.arange(40)
    for t in range(60):
        masked = np.where(avail, U, -np.inf)
        y = np.argmax(np.where(avail, rng.normal(size=U.shape), -np.inf), axis=1)
        np.testing.assert_array_equal(su.best(avail), masked.max(axis=1))
        for alpha in (0.1, 0.5, 1.0):
            fb, best = su.feedback(avail, y, alpha)
            np.testing.assert_array_equal(fb, strictly_alpha_informative_item(U, y, alpha, masked=masked))
            np.testing.assert_array_equal(best, masked.max(axis=1))
        gone = rng.integers(0, 300, size=(40, 3))  # remove some items, the best ones sometimes
        gone[::4, 0] = su.order[rows[::4], su.ptr[::4]]
        for g in gone.T:
            avail[rows, g] = False


def test_movie_setup_is_kept_on_disk_bit_for_bit(tmp_path):
    """The coactive movie setup is computed once and read back by later cells: what is read
    equals what was computed, array for array and bit for bit; newer data rebuild it."""
    import os

    from rankrepro.data.coactive_movies import compute_movie_setup, movie_setup, setup_cache_path

    rng = np.random.default_rng(4)
    n = 3000
    p = tmp_path / "ratings" / "data.npz"
    p.parent.mkdir()
    np.savez(p, user=rng.integers(0, 80, n), item=rng.integers(0, 50, n), score=rng.integers(1, 6, n).astype(float))
    args = (str(p), 7, (2, 3), (1.0,), 2)
    fresh = compute_movie_setup(*args)
    movie_setup.cache_clear()
    first = movie_setup(*args)
    cache = setup_cache_path(*args)
    assert cache.is_file()
    movie_setup.cache_clear()
    again = movie_setup(*args)
    for s in (first, again):
        assert np.array_equal(s.M, fresh.M) and np.array_equal(s.W_star, fresh.W_star)
        assert (s.dim, s.reg, s.holdout_rmse) == (fresh.dim, fresh.reg, fresh.holdout_rmse)
        assert all(np.array_equal(a, b) and a.dtype == b.dtype for x, y in zip(s.ratings, fresh.ratings)
                   for a, b in zip(x, y)) and len(s.ratings) == len(fresh.ratings)
    # data newer than the kept setup: computed again (and kept again)
    old = cache.stat().st_mtime
    os.utime(p, (old + 10, old + 10))
    movie_setup.cache_clear()
    movie_setup(*args)
    assert cache.stat().st_mtime > old
    movie_setup.cache_clear()
