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


def _every_attr(est) -> dict:
    """Every attribute of the learner: arrays and scalars as bytes, a generator as its state."""
    out = {}
    for k, v in vars(est).items():
        if isinstance(v, np.random.Generator):
            out[k] = repr(v.bit_generator.state)
        else:
            a = np.asarray(v)
            out[k] = (a.dtype.str, a.shape, a.tobytes()) if a.dtype != object else repr(v)
    return out


def _bad_rows(bad, at=40_000):
    rng = np.random.default_rng(7)
    X = rng.uniform(-1.0, 1.0, (70_000, 15))  # large: checked by the kernels as they go (base._COMPILED_PASS)
    y = rng.integers(1, 5, 70_000)
    Xbad = X.copy()
    Xbad[at, 3] = bad
    return X, y, Xbad


def _params(name):
    if name.startswith("oap"):
        return {"n_ranks": 4, "N": 10, "seed": 5}
    return {"n_ranks": 4, **({"eta": 0.01} if name in ("widrow_hoff", "mu_prank") else {})}


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("name", sorted(ONLINE) + ["widrow_hoff_diverged"])
def test_refused_row_leaves_the_learner_as_it_was(name, bad):
    """A large dense X is not scanned before the run: the kernels refuse a non-finite row when
    they meet it (rounds before it have updated the state by then). The refusal is the one
    line the scan gave, and the learner is left as it was before the call: the same state,
    bit for bit, in the same arrays (a generator's state too), and it goes on as a learner that
    never saw the call; a learner the call would have started is left unfitted."""
    import warnings

    diverged = name == "widrow_hoff_diverged"
    cls = WidrowHoff if diverged else ONLINE[name]
    params = {"n_ranks": 4, "eta": 50.0} if diverged else _params(name)  # eta=50: inf and NaN weights
    X, y, Xbad = _bad_rows(bad)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        a, b = cls(**params), cls(**params)
        a.fit_online(X[:3000], y[:3000])
        b.fit_online(X[:3000], y[:3000])
        before, objects = _every_attr(a), dict(vars(a))
        with pytest.raises(ValueError, match=rf"^{cls.__name__}: input X contains NaN or infinity$"):
            a.fit_online(Xbad, y)
        assert _every_attr(a) == before
        assert all(vars(a)[k] is v for k, v in objects.items())
        assert _same(a.fit_online(X[3000:], y[3000:]), b.fit_online(X[3000:], y[3000:]))
        assert _every_attr(a) == _every_attr(b)
        fresh = cls(**params)
        with pytest.raises(ValueError, match="NaN or infinity"):
            fresh.fit_online(Xbad, y)
        assert _every_attr(fresh) == _every_attr(cls(**params))
        assert _same(fresh.fit_online(X, y), cls(**params).fit_online(X, y))


@pytest.mark.parametrize("name", ["prank", "widrow_hoff", "oap_vp"])
def test_non_finite_x_refused_before_the_rest(name):
    """A large dense X is checked late, but a non-finite one is still refused before the labels
    and the width are looked at, as the pass before the run refused it."""
    X, y, Xbad = _bad_rows(np.nan, at=69_999)
    est = ONLINE[name](**_params(name))
    for labels in (np.where(np.arange(len(y)) == 5, 9, y), y[:-1], y.astype(float) + 0.5):
        with pytest.raises(ValueError, match="NaN or infinity"):
            est.fit_online(Xbad, labels)
    with pytest.raises(ValueError, match="ranks must lie in 1..4, got 1..9"):
        est.fit_online(X, np.where(np.arange(len(y)) == 5, 9, y))
    assert not hasattr(est, "n_features_in_")
    est.fit_online(X[:10], y[:10])
    with pytest.raises(ValueError, match="NaN or infinity"):
        est.fit_online(np.hstack([Xbad, Xbad[:, :1]]), y)
    with pytest.raises(ValueError, match="features"):
        est.fit_online(np.hstack([X, X[:, :1]]), y)


@pytest.mark.parametrize("name", ["prank", "mcp", "oap_bpm"])
def test_many_ranks_checked_by_the_compiled_pass(name):
    """Many int64 ranks are checked by one compiled pass (base.OnlineRanker._check_y) and
    given to the kernels as they are; out of range they are refused with check_target's
    message; other dtypes and layouts take check_target's path: the same predictions."""
    X, y, _ = _bad_rows(np.nan)
    for wrong, got in ((0, "0..4"), (5, "1..5")):
        with pytest.raises(ValueError, match=rf"ranks must lie in 1..4, got {got}$"):
            ONLINE[name](**_params(name)).fit_online(X, np.where(np.arange(len(y)) == 60_000, wrong, y))
    ref = ONLINE[name](**_params(name)).fit_online(X, y)
    for labels in (y.astype(np.int32), y.astype(float), np.repeat(y, 2)[::2]):
        assert _same(ONLINE[name](**_params(name)).fit_online(X, labels), ref)
