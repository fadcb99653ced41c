"""One suite over every learner: the estimator protocol of DESIGN.md.

The first part runs the checks of :mod:`rankrepro.conformance` (the ones ``rankrepro
check-learner`` runs on anyone's class) over every registered learner of every family
(online ordinal learners, LETOR rankers, GP models, coactive learners), as river's check
suite does: the protocol's interface, inputs not mutated, same seed same result, clone,
pickling, parameters checked (every constraint of the class broken once), bad input
rejected, the protocol's calls on a tiny data set.  The rest checks what only the online
learners promise (the online protocol: chunked passes, predictions before updates, sparse
rows)."""
import pickle

import numpy as np
import pytest

from rankrepro import conformance
from rankrepro.algorithms import ONLINE, NotFittedError, ParamError, families

FAMILIES = families()
#: the registries' family names -> the conformance module's
FAMILY = {"online": "online", "rankers": "ranker", "gp": "gp", "coactive": "coactive"}
LEARNERS = [(fam, name) for fam, reg in FAMILIES.items() for name in sorted(reg)]


@pytest.mark.parametrize("check", list(conformance.CHECKS))
@pytest.mark.parametrize("fam,name", LEARNERS)
def test_every_learner_passes_the_conformance_checks(fam, name, check):
    cls = FAMILIES[fam][name]
    assert conformance.family_of(cls) == FAMILY[fam]
    result = conformance.run_check(check, cls, FAMILY[fam])
    assert result.passed, f"{name}: {check}: {result.why}"


SEEDED = {name for name, cls in ONLINE.items() if "seed" in cls._param_names()}


# -------------------------------------------------------------------------------------
# the online protocol
# -------------------------------------------------------------------------------------
def make(name, **kw):
    cls = ONLINE[name]
    params = {"n_ranks": 4, **kw}
    if name in SEEDED:
        params.setdefault("seed", 7)
        params.setdefault("N", 5)
    return cls(**params)


@pytest.fixture
def data(rng):
    X = rng.uniform(-0.5, 0.5, size=(300, 6))
    y = rng.integers(1, 5, size=300)
    return X, y


@pytest.mark.parametrize("name", sorted(ONLINE))
def test_inputs_not_mutated(name, data):
    X, y = data
    X0, y0 = X.copy(), y.copy()
    est = make(name)
    est.fit_online(X, y)
    est.predict(X)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)


@pytest.mark.parametrize("name", sorted(ONLINE))
def test_same_seed_same_result(name, data):
    X, y = data
    a, b = make(name), make(name)
    np.testing.assert_array_equal(a.fit_online(X, y), b.fit_online(X, y))
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


@pytest.mark.parametrize("name", sorted(SEEDED))
def test_other_seed_other_result(name, data):
    X, y = data
    a, b = make(name, seed=1, tau=0.5), make(name, seed=2, tau=0.5)
    a.fit_online(X, y)
    b.fit_online(X, y)
    assert not np.array_equal(a.member_coef_, b.member_coef_)


@pytest.mark.parametrize("name", sorted(ONLINE))
def test_chunked_equals_one_pass(name, data):
    X, y = data
    a, b = make(name), make(name)
    whole = a.fit_online(X, y)
    parts = np.concatenate([b.fit_online(X[:100], y[:100]), b.fit_online(X[100:], y[100:])])
    np.testing.assert_array_equal(whole, parts)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


@pytest.mark.parametrize("name", sorted(ONLINE))
def test_pickle_midstream(name, data):
    X, y = data
    a = make(name)
    a.fit_online(X[:150], y[:150])
    b = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(a.fit_online(X[150:], y[150:]), b.fit_online(X[150:], y[150:]))
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


@pytest.mark.parametrize("name", sorted(ONLINE))
def test_clone_is_unfitted_with_same_params(name, data):
    X, y = data
    a = make(name)
    a.fit_online(X, y)
    c = a.clone()
    assert c.get_params() == a.get_params()
    assert not hasattr(c, "n_features_in_")
    with pytest.raises(NotFittedError, match="not fitted"):
        c.predict(X)
    np.testing.assert_array_equal(make(name).fit_online(X, y), c.fit_online(X, y))


MEAN_OUTPUT = {"oap_bagg", "oap_vp", "voted_prank"}


@pytest.mark.parametrize("name", sorted(ONLINE))
def test_predictions_are_ranks(name, data):
    X, y = data
    kw = {"output": "rank"} if name in MEAN_OUTPUT else {}
    est = make(name, **kw)
    online = est.fit_online(X, y)
    for p in (online, est.predict(X)):
        assert p.dtype.kind == "i" and p.min() >= 1 and p.max() <= 4


@pytest.mark.parametrize("name", sorted(MEAN_OUTPUT))
def test_mean_output_is_the_unrounded_vote(name, data):
    """Harrington's H(x) = sum v_i h_i(x) / sum v_i: output='mean' predicts it unrounded, in
    [1, k]; output='rank' is its nearest rank; online predictions are ranks either way."""
    from rankrepro.algorithms.base import round_to_rank

    X, y = data
    mean, rank = make(name, output="mean"), make(name, output="rank")
    np.testing.assert_array_equal(mean.fit_online(X, y), rank.fit_online(X, y))
    m = mean.predict(X)
    assert m.dtype.kind == "f" and m.min() >= 1 and m.max() <= 4
    assert np.any(m != np.round(m))  # a real mean, not a rank
    np.testing.assert_array_equal(round_to_rank(m, 4), rank.predict(X))
    np.testing.assert_allclose(m, mean.decision_function(X))


def test_rank_loss_scores_real_predictions_as_they_are():
    from rankrepro.metrics import rank_loss

    assert rank_loss(np.array([2.6, 1.0, 3.4]), np.array([3, 1, 3])) == pytest.approx((0.4 + 0.0 + 0.4) / 3)
    assert rank_loss(np.array([1, 4]), np.array([2, 2])) == 1.5


@pytest.mark.parametrize("name", ["oap_bagg", "oap_vp"])
def test_unrounded_vote_loss_is_at_most_the_members_mean_loss(name, data):
    """|sum_j v_j h_j(x) / sum_j v_j - y| <= sum_j v_j |h_j(x) - y| / sum_j v_j (Jensen): the
    unrounded ensemble's test loss cannot exceed its members' weighted mean loss."""
    from rankrepro.metrics import rank_loss

    X, y = data
    est = make(name, output="mean", N=9, tau=0.5)
    est.fit_online(X, y)
    ranks = np.stack([1 + np.sum((X @ est.member_coef_[j])[:, None] >= est.member_thresholds_[j][None, :], axis=1)
                      for j in range(9)])
    v = est.votes_ if name == "oap_vp" else np.ones(9)
    member_loss = float(v @ np.abs(ranks - y).mean(axis=1) / v.sum())
    assert rank_loss(est.predict(X), y) <= member_loss + 1e-12


@pytest.mark.parametrize("name", sorted(ONLINE))
def test_bad_input_rejected(name, data):
    X, y = data
    est = make(name)
    with pytest.raises(ValueError, match="ranks must lie in 1..4"):
        est.fit_online(X[:5], np.array([1, 2, 5, 1, 1]))
    with pytest.raises(ValueError, match="NaN"):
        est.fit_online(np.full((2, 6), np.nan), np.array([1, 2]))
    est.fit_online(X[:5], y[:5])
    with pytest.raises(ValueError, match="features"):
        est.fit_online(X[:5, :3], y[:5])
    with pytest.raises(ValueError, match="2-D"):
        est.predict(X[0])


@pytest.mark.parametrize("name", sorted(ONLINE))
def test_unknown_param_rejected(name):
    with pytest.raises(ParamError, match="unknown hyperparameter"):
        make(name).set_params(nonsense=1)


@pytest.mark.parametrize("name,param,value", [
    ("oap_bpm", "tau", 0.0), ("oap_bpm", "tau", 1.5), ("oap_bagg", "N", 0), ("oap_vp", "N", 2.5),
    ("widrow_hoff", "eta", -0.1), ("mu_prank", "eta", 0.0), ("no_prank", "beta", -1.0), ("prank", "n_ranks", 1),
    ("oap_bpm", "tau", float("nan")), ("oap_bpm", "seed", -3),
])
def test_out_of_range_params_rejected_before_fitting(name, param, value):
    est = ONLINE[name](**{param: value})
    with pytest.raises(ParamError) as err:
        est.validate()
    assert err.value.param == param
    with pytest.raises(ParamError):
        est.fit_online(np.zeros((1, 2)), np.array([1]))


@pytest.mark.parametrize("name", sorted(ONLINE))
def test_sparse_input_equals_dense(name, rng):
    from scipy import sparse

    X = rng.uniform(-0.5, 0.5, size=(300, 40)) * (rng.random((300, 40)) < 0.1)
    y = rng.integers(1, 5, size=300)
    a, b = make(name), make(name)
    np.testing.assert_array_equal(a.fit_online(X, y), b.fit_online(sparse.csr_matrix(X), y))
    np.testing.assert_array_equal(a.predict(X), b.predict(sparse.csc_matrix(X)))
