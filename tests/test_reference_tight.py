"""The tight compiled loops written from the papers (``algorithms/reference_tight``, the speed
reference of ``make bench``) give the project's learners' predictions and final state to
the last bit on the same stream; and the learners' dense-row path (``algorithms/_rows``)
gives what their CSR path gives."""

import numpy as np
import pytest
from scipy import sparse

from rankrepro.algorithms import (ONLINE, OAPBPM, OAPVP, MulticlassPerceptron, OAPBagg, PRank, SiPRank, VotedPRank,
                                  WidrowHoff, poly2_features)
from rankrepro.algorithms import reference_tight as R
from rankrepro.data.synthetic import synthetic_hgo


def _stream(d: int, T: int = 3000):
    if d == 6:  # Harrington's / Crammer & Singer's synthetic stream, degree-2 features
        s = synthetic_hgo(T, 0, np.random.default_rng(0))
        return poly2_features(s.X_train), s.y_train
    rng = np.random.default_rng(d)
    Z = rng.uniform(-1, 1, (T, 4))
    Z[rng.random(Z.shape) < 0.2] = 0.0  # zero features: the dense loop and CSR must agree on them
    y = np.digitize(Z.sum(axis=1) + 0.3 * rng.normal(size=T), [-1.0, -0.3, 0.3, 1.0]) + 1
    return poly2_features(Z), y


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("d", [6, 15])
def test_prank_family_as_the_tight_loops(d):
    X, y = _stream(d)
    for est, single in ((PRank(), False), (SiPRank(), True)):
        preds, w, b = R.prank_tight(X, y, 5, single)
        assert _same(est.fit_online(X, y), preds)
        assert _same(est.coef_, w) and _same(est.thresholds_, b)
    vp = VotedPRank()
    preds, W, B, C = R.voted_prank_tight(X, y, 5)
    assert _same(vp.fit_online(X, y), preds)
    assert _same(vp.hyp_coef_, W) and _same(vp.hyp_thresholds_, B) and _same(vp.hyp_counts_, C)


@pytest.mark.parametrize("d", [6, 15])
def test_baselines_as_the_tight_loops(d):
    X, y = _stream(d)
    wh = WidrowHoff(eta=0.01)
    preds, w = R.widrow_hoff_tight(X, y, 5, 0.01)
    assert _same(wh.fit_online(X, y), preds) and _same(wh.coef_, w)
    mcp = MulticlassPerceptron()
    preds, M = R.mcp_tight(X, y, 5)
    assert _same(mcp.fit_online(X, y), preds) and _same(mcp.prototypes_, M)


@pytest.mark.parametrize("d", [6, 15])
@pytest.mark.parametrize("cls, rule", [(OAPBPM, 0), (OAPBagg, 1), (OAPVP, 2)])
def test_oap_as_the_tight_loop(d, cls, rule):
    X, y = _stream(d, 2000)
    N, tau = 20, 0.3
    est = cls(N=N, tau=tau, seed=3)
    got = est.fit_online(X, y)
    mask = np.random.default_rng(3).random((len(y), N)) < tau  # the estimator's own draws
    preds, W, B, ws, bs, v = R.oap_tight(X, y, 5, mask, rule)
    assert _same(got, preds)
    assert _same(est.member_coef_, W) and _same(est.member_thresholds_, B)
    assert _same(est.coef_sum_, ws) and _same(est.thresholds_sum_, bs) and _same(est.votes_, v)


def _state(est) -> dict:
    return {k: np.asarray(v).copy() for k, v in vars(est).items()
            if k.endswith("_") and isinstance(v, (np.ndarray, float, int, bool)) and k != "rng_"}


@pytest.mark.parametrize("name", sorted(ONLINE))
def test_dense_rows_as_csr_rows(name):
    """Every online learner, fed the same stream as a dense array and as CSR rows: the same
    predictions and the same state, bit for bit (the dense path skips the conversion)."""
    X, y = _stream(15, 1500)
    params = {"eta": 0.05} if name in ("widrow_hoff", "mu_prank") else {}
    if name.startswith("oap"):
        params = {"N": 10, "seed": 0}
    a, b = ONLINE[name](**params), ONLINE[name](**params)
    assert 2 * np.count_nonzero(X) >= X.size  # dense enough for the dense path
    assert _same(a.fit_online(X, y), b.fit_online(sparse.csr_matrix(X), y))
    sa, sb = _state(a), _state(b)
    assert sa.keys() == sb.keys() and all(_same(sa[k], sb[k]) for k in sa), name
    assert _same(a.predict(X[:50]), b.predict(X[:50]))


def test_dense_rows_as_csr_rows_when_widrow_hoff_diverges():
    """A step size too large: weights become inf and NaN; inf * 0 would be NaN, so the dense
    loop must add only the non-zero features then, as CSR does."""
    X, y = _stream(15, 3000)
    with pytest.warns(RuntimeWarning):
        a = WidrowHoff(eta=50.0)
        pa = a.fit_online(X, y)
    with pytest.warns(RuntimeWarning):
        b = WidrowHoff(eta=50.0)
        pb = b.fit_online(sparse.csr_matrix(X), y)
    assert a.diverged_ and not np.all(np.isfinite(a.coef_))
    assert _same(pa, pb) and _same(a.coef_, b.coef_)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_large_dense_input_refused_when_not_finite(bad):
    """Large dense arrays are checked by a compiled pass (base._all_finite): it refuses what
    np.isfinite refuses."""
    X = np.random.default_rng(0).normal(size=(70_000, 3))
    PRank().fit_online(X[:10], np.ones(10, dtype=int))
    X[69_999, 2] = bad
    with pytest.raises(ValueError, match="NaN or infinity"):
        PRank().fit_online(X, np.ones(len(X), dtype=int))
