"""Batch rankers: Ranking SVM against an independent solver, RankBoost, the protocol."""
import numpy as np
import pytest
from scipy.optimize import minimize

from rankrepro.algorithms.pairwise import make_pairs, mean_ndcg_columns
from rankrepro.algorithms.rankers import LISTS, RANKERS, RankBoost, RankSVM, _svm_dcd
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


def _dcd_transcribed(D, C, max_pass, eps, seed):
    """The solver's definition in plain Python floats and ints, visited in the same order:
    the xorshift generator, the Fisher-Yates shuffle of each pass, the coordinate step and
    its projected-gradient stopping rule (what the compiled kernel computes, prefetches
    apart)."""
    mask = (1 << 64) - 1
    x = seed | 1
    P, d = D.shape
    rows = D.tolist()
    Q = [0.0] * P
    for p in range(P):  # the kernel sums left to right from 0.0
        s = 0.0
        for v in rows[p]:
            s += v * v
        Q[p] = s
    alpha, w, order = [0.0] * P, [0.0] * d, list(range(P))
    for it in range(max_pass):
        for i in range(P - 1, 0, -1):
            x ^= (x << 13) & mask
            x ^= x >> 7
            x ^= (x << 17) & mask
            k = x % (i + 1)
            order[i], order[k] = order[k], order[i]
        pg_max, pg_min = -np.inf, np.inf
        for p in order:
            if Q[p] == 0.0:
                continue
            G = -1.0
            for j in range(d):
                G += w[j] * rows[p][j]
            a = alpha[p]
            pg = min(G, 0.0) if a == 0.0 else max(G, 0.0) if a == C else G
            pg_max, pg_min = max(pg_max, pg), min(pg_min, pg)
            if pg != 0.0:
                na = min(max(a - G / Q[p], 0.0), C)
                if na - a != 0.0:
                    da = na - a
                    alpha[p] = na
                    for j in range(d):
                        w[j] += da * rows[p][j]
        if pg_max - pg_min < eps:
            return it + 1, np.array(w), np.array(alpha)
    return max_pass, np.array(w), np.array(alpha)


@pytest.mark.parametrize("n, d, C, max_pass", [(120, 3, 0.05, 500), (120, 13, 10.0, 7), (120, 17, 0.5, 60),
                                                (38_000, 14, 1.0, 2)])
def test_ranksvm_solver_equals_its_transcription_bit_for_bit(rng, n, d, C, max_pass):
    """The compiled solver against the plain transcription: the same passes, weights and
    dual variables, bit for bit -- with rows wider than one cache line (d = 13, 14, 17), a
    solver that stops at its pass cap (C = 10, 7 passes) and one that converges, a zero pair
    (skipped), and a problem past the size from which the solver prefetches (38,000 x 14)."""
    from rankrepro.algorithms.rankers import _FAR

    assert (n * d > _FAR) == (n > 1000)
    D = rng.normal(size=(n, d))
    D[7] = 0.0
    state = np.array([12345 | 1], dtype=np.uint64)
    w, alpha = np.zeros(d), np.zeros(D.shape[0])
    passes = _svm_dcd(D, C, max_pass, 0.01, state, alpha, w)
    ref_passes, ref_w, ref_alpha = _dcd_transcribed(D, C, max_pass, 0.01, 12345)
    assert passes == ref_passes
    assert w.tobytes() == ref_w.tobytes() and alpha.tobytes() == ref_alpha.tobytes()


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


def test_lambdamart_first_steps_do_not_depend_on_the_rounds_to_come(rng):
    """A scale's step cap trains LambdaMART for the steps it keeps only (protocols.letor: 10
    rounds a step): the first steps' predictions of a 20-round run are those of a 300-round run,
    bit for bit."""
    from rankrepro.algorithms.rankers import LambdaMART

    X, qid = rng.normal(size=(240, 6)), np.repeat(np.arange(24), 10)
    y = np.clip(np.round(X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.5, size=240)), 0, 2)
    evals = [(X[:60], y[:60], qid[:60])]
    seed = np.random.SeedSequence(7)
    short = list(LambdaMART(n_rounds=20, seed=seed).iterate(X, y, qid, evals))
    long = list(LambdaMART(n_rounds=300, seed=seed).iterate(X, y, qid, evals))
    assert [t for t, _ in short] == [10, 20] and [t for t, _ in long][:2] == [10, 20] and len(long) == 30
    for (_, a), (_, b) in zip(short, long):
        assert np.array_equal(a[0], b[0])
    assert not np.array_equal(long[1][1][0], long[-1][1][0])  # later rounds do change the predictions


def test_the_letor_protocol_trains_lambdamart_for_the_kept_steps_only(monkeypatch):
    """max_steps=2 (smoke scale): LambdaMART is built with 20 rounds, not its 300; without a
    cap, with its own schedule."""
    from rankrepro.algorithms import rankers
    from rankrepro.protocols import letor

    built = []

    class Spy(rankers.LambdaMART):
        def iterate(self, X, y, qid, evals):  # the rounds it was built with, nothing trained
            built.append(self.n_rounds)
            yield 10, [np.zeros(len(e[1])) for e in evals]

    class Fold:
        def __init__(self):
            part = type("P", (), {"X": np.zeros((4, 2)), "y": np.array([0, 1, 0, 1]), "qid": np.array([1, 1, 2, 2])})
            self.train = self.valid = self.test = part

    monkeypatch.setitem(letor.RANKERS, "lambdamart", Spy)
    monkeypatch.setitem(letor.BUILDERS, "tiny", lambda fold, data_path=None: Fold())
    for cap, params, rounds in [(2, {}, 20), (None, {}, 300), (50, {"n_rounds": 120}, 120), (3, {"n_rounds": 15}, 15)]:
        built.clear()
        letor.letor_trial(letor.LetorSpec(estimator="lambdamart", params=params, builder="tiny", fold=1,
                                          metrics=("test_map",), data_path="", algo_seed=np.random.SeedSequence(1),
                                          max_steps=cap))
        assert built == [rounds], (cap, params)
