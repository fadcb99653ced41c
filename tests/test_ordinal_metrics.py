"""AMAE and quadratic weighted kappa (rankrepro.ordinal_metrics) against independent
computations: scikit-learn's cohen_kappa_score for kappa, a per-rank loop written from
Baccianella et al.'s definition for AMAE, and hand-computed values; and the protocols that
report them."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from rankrepro.metric_names import METRICS
from rankrepro.ordinal_metrics import HIGHER_IS_BETTER, ORDINAL_METRICS, amae, as_ranks, qwk


def _amae_loop(pred, truth):
    per = []
    for r in sorted(set(truth.tolist())):
        m = truth == r
        per.append(sum(abs(float(p) - r) for p in pred[m]) / m.sum())
    return sum(per) / len(per)


@pytest.mark.parametrize("seed", range(20))
def test_qwk_agrees_with_sklearn_on_integer_ranks(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 7))
    n = int(rng.integers(5, 300))
    t = rng.integers(1, k + 1, n)
    p = np.clip(t + rng.integers(-2, 3, n), 1, k)
    want = cohen_kappa_score(t, p, weights="quadratic", labels=list(range(1, k + 1)))
    assert qwk(p, t, k) == pytest.approx(want, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_qwk_rounds_mean_ranks_halves_up_then_agrees_with_sklearn(seed):
    rng = np.random.default_rng(100 + seed)
    k = 5
    t = rng.integers(1, k + 1, 200)
    p = np.clip(t + rng.normal(0, 1.2, 200), 0.2, 5.8)  # real-valued, some beyond 1..K
    p[:4] = [1.5, 2.5, 3.5, 4.5]
    rounded = as_ranks(p, k)
    assert rounded[:4].tolist() == [2, 3, 4, 5]
    assert rounded.min() >= 1 and rounded.max() <= k
    want = cohen_kappa_score(t, rounded, weights="quadratic", labels=list(range(1, k + 1)))
    assert qwk(p, t, k) == pytest.approx(want, rel=1e-12, abs=1e-12)


def test_qwk_hand_computed_and_its_ends():
    # K = 3, truth 1 1 2 3, prediction 1 2 2 2: O has (1,1) (1,2) (2,2) (3,2); the weights
    # (i-j)^2/4 give sum w O = 1/4 + 1/4 = 0.5; rows 2,1,1 x columns 1,3,0 / 4 give
    # sum w E = (2*3*0.25 + 1*1*0.25 + 1*1*1 + 1*3*0.25) / 4 = 3.5/4, so kappa = 1 - 0.5/0.875 = 3/7
    assert qwk([1, 2, 2, 2], [1, 1, 2, 3], 3) == pytest.approx(3 / 7, abs=1e-15)
    t = np.array([1, 2, 3, 4, 5, 1, 3])
    assert qwk(t, t, 5) == 1.0
    assert np.isnan(qwk([2, 2], [2, 2], 5))  # one rank on both sides: 0/0
    assert qwk(6 - t, t, 5) < 0  # reversed ranks disagree more than chance


@pytest.mark.parametrize("seed", range(20))
def test_amae_agrees_with_a_per_rank_loop(seed):
    rng = np.random.default_rng(200 + seed)
    t = rng.integers(1, 6, int(rng.integers(3, 200)))
    p = t + rng.normal(0, 1, t.size)  # real-valued predictions count as they are
    assert amae(p, t) == pytest.approx(_amae_loop(p, t), rel=1e-12)


def test_amae_hand_computed_weighs_every_rank_alike():
    # the majority rank predicted everywhere: MAE 0.2 on 10 items, AMAE (0 + 2) / 2 = 1
    t = np.array([1] * 9 + [3])
    p = np.ones(10)
    assert np.mean(np.abs(p - t)) == pytest.approx(0.2)
    assert amae(p, t) == 1.0
    assert amae(t, t) == 0.0


def test_bad_input_is_refused_with_the_metric_named():
    with pytest.raises(ValueError, match="qwk: true ranks must lie in 1..3"):
        qwk([1, 2], [1, 4], 3)
    with pytest.raises(ValueError, match="amae: shapes differ"):
        amae([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="qwk: empty input"):
        qwk([], [], 3)


def test_the_names_are_registered_with_their_direction():
    for name in ORDINAL_METRICS:
        assert name in METRICS
    assert HIGHER_IS_BETTER == {m for m in ORDINAL_METRICS if m.endswith("qwk")}
    assert METRICS["test_amae"].needs_test and METRICS["test_qwk"].needs_test
    assert not METRICS["online_qwk"].needs_test


def _online_spec(metrics, estimator="prank", params=None):
    from rankrepro.protocols.online import TrialSpec

    ss = np.random.SeedSequence(7)
    d, a = ss.spawn(2)
    return TrialSpec(estimator=estimator, params=params or {}, builder="synthetic_hgo", builder_params={},
                     n_ranks=5, features="poly2", n_train=300, n_test=200, curve_points=5,
                     metrics=tuple(metrics), data_seed=d, algo_seed=a)


def test_the_online_protocol_adds_the_ordinal_rows_after_the_papers_own():
    from rankrepro.protocols.online import online_trial

    base = online_trial(_online_spec(["online_rank_loss", "test_rank_loss"]))
    full = online_trial(_online_spec(["online_rank_loss", "test_rank_loss", "online_amae", "online_qwk",
                                      "test_amae", "test_qwk"]))
    assert full[:len(base)] == base  # the paper's rows, bit for bit
    extra = {m: v for m, r, v in full[len(base):]}
    assert set(extra) == {"online_amae", "online_qwk", "test_amae", "test_qwk"}
    assert all(r is None for _, r, _ in full[len(base):])
    assert 0 <= extra["test_amae"] <= 4 and -1 <= extra["test_qwk"] <= 1


def test_the_online_protocols_ordinal_rows_equal_an_independent_computation():
    """The same trial by hand: the builder's split, PRank's online predictions and its final
    rule's test predictions, scored by scikit-learn and the per-rank loop."""
    from rankrepro.algorithms import FEATURE_MAPS, ONLINE
    from rankrepro.data.builders import BUILDERS
    from rankrepro.protocols.online import online_trial

    spec = _online_spec(["online_amae", "online_qwk", "test_amae", "test_qwk"])
    rows = {m: v for m, _, v in online_trial(spec)}
    split = BUILDERS["synthetic_hgo"](300, 200, np.random.default_rng(spec.data_seed))
    phi = FEATURE_MAPS["poly2"]
    est = ONLINE["prank"](n_ranks=split.n_ranks)
    online = est.fit_online(phi(split.X_train), split.y_train)
    test = est.predict(phi(split.X_test))
    labels = list(range(1, split.n_ranks + 1))
    assert rows["online_amae"] == pytest.approx(_amae_loop(online, split.y_train), rel=1e-12)
    assert rows["test_amae"] == pytest.approx(_amae_loop(test, split.y_test), rel=1e-12)
    assert rows["online_qwk"] == pytest.approx(
        cohen_kappa_score(split.y_train, online, weights="quadratic", labels=labels), rel=1e-12)
    assert rows["test_qwk"] == pytest.approx(
        cohen_kappa_score(split.y_test, test, weights="quadratic", labels=labels), rel=1e-12)


def test_the_gp_protocol_pools_every_users_test_items(monkeypatch):
    """The collaborative GP protocol's AMAE and kappa are over all task users' rated test
    items pooled: recomputed here from the fit's own predictions with scikit-learn."""
    from rankrepro.algorithms.gp import GPModel
    from rankrepro.data import builders
    from rankrepro.data.collab_gp import CollabData
    from rankrepro.protocols.gp import GPSpec, gp_fit, gp_trial
    from tests.test_gp import small_problem

    K, Y, _ = small_problem(seed=10, m=60)
    monkeypatch.setitem(builders.BUILDERS, "tiny_gp", lambda data_path: CollabData(K, Y, 5, 10, int((Y > 0).sum())))
    spec = GPSpec("gp_model", {"likelihood": "ordinal", "n_items": 20, "em_iters": 2}, "tiny_gp", {}, "unused",
                  np.random.SeedSequence(11))
    rows = {m: v for m, _, v in gp_trial(spec)}
    fit, Yf, test, _, n_ranks = gp_fit(spec)
    assert isinstance(GPModel, type) and n_ranks == 5
    truth = np.concatenate([Yf[u, test][Yf[u, test] > 0] for u in range(len(fit.pred))])
    pred = np.concatenate([p[Yf[u, test] > 0] for u, p in enumerate(fit.pred)])
    assert rows["amae"] == pytest.approx(_amae_loop(pred, truth), rel=1e-12)
    assert rows["qwk"] == pytest.approx(cohen_kappa_score(truth, pred, weights="quadratic", labels=[1, 2, 3, 4, 5]),
                                        rel=1e-12)
