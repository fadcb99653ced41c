"""Every learner as a scikit-learn estimator: scikit-learn's own estimator checks
(``check_estimator``: 42 checks per learner) pass for one instance of each registered
learner, with no check excluded; the online learners are cloned, scored (higher is better)
and selected with scikit-learn's tools; the LETOR rankers take query groups as LightGBM's
``LGBMRanker`` does."""
import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_val_score  # noqa: E402

from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from rankrepro.algorithms import ONLINE, PRank, WidrowHoff, families  # noqa: E402
from rankrepro.algorithms.feature_maps import FEATURE_MAPS  # noqa: E402
from rankrepro.data.synthetic import synthetic_hgo  # noqa: E402


@pytest.fixture(scope="module")
def hgo():
    s = synthetic_hgo(600, 200, np.random.default_rng(0))
    return FEATURE_MAPS["poly2"](s.X_train), s.y_train


@pytest.mark.parametrize("name", sorted(ONLINE))
def test_sklearn_clone_and_params(name):
    cls = ONLINE[name]
    est = cls(n_ranks=5)
    c = clone(est)
    assert type(c) is cls and c.get_params(deep=True) == est.get_params(deep=False)
    assert c is not est


def test_score_is_minus_the_rank_loss(hgo):
    X, y = hgo
    est = PRank(n_ranks=5).fit(X, y)
    assert est.score(X, y) == pytest.approx(-np.mean(np.abs(est.predict(X) - y)))


def test_cross_validation_and_grid_search(hgo):
    X, y = hgo
    s = cross_val_score(PRank(n_ranks=5), X, y, cv=3)
    assert s.shape == (3,) and np.all(s <= 0) and np.all(s > -2)
    gs = GridSearchCV(WidrowHoff(n_ranks=5), {"eta": [0.2, 0.05, 0.01]}, cv=3).fit(X, y)
    assert gs.best_params_["eta"] in (0.2, 0.05, 0.01)
    assert gs.best_estimator_.n_rounds_ == len(y)


def _instances():
    """One instance per registered learner, small enough for the checks.  The online
    learners get n_ranks=20: the checks' targets are class labels shifted to >= 1 (the
    ``positive_only`` tag) and one check's reach 9; ranks beyond n_ranks are refused by
    design.  Seeds are fixed so that fitting twice gives the same model
    (scikit-learn sets only parameters named random_state)."""
    out = []
    for fam, reg in families().items():
        for name, cls in sorted(reg.items()):
            kw = {"n_ranks": 20} if fam in ("online", "gp") else {}
            if "seed" in cls._param_names():
                kw["seed"] = 0
            kw.update({"oap_bpm": {"N": 5}, "oap_bagg": {"N": 5}, "oap_vp": {"N": 5},
                       "perceptron": {"n_iter": 3, "committee": 3}, "rankboost": {"n_rounds": 10},
                       "lambdamart": {"n_rounds": 10}, "gp_model": {"em_iters": 3}}.get(name, {}))
            out.append(cls(**kw))
    return out


#: the one check not run, as it needs SCIPY_ARRAY_API and array libraries (CuPy, torch): the
#: learners compute with NumPy and numba and do not claim array-API support
NOT_RUN = ("check_array_api_input",)

# Expected warnings, quieted here rather than in the learners:
# * "does not inherit from sklearn.base.BaseEstimator": by design, Estimator (algorithms/base.py)
#   implements scikit-learn's protocol itself so that the package imports and pickles without
#   scikit-learn (BaseEstimator would add its own repr, tags and a _sklearn_version to every
#   pickle); every check below passes all the same.  scikit-learn warns once per learner when the
#   checks are collected (see _checks) and again in check_estimator;
# * the SkipTestWarning of check_array_api_input (NOT_RUN) inside check_estimator;
# * Widrow-Hoff's divergence warning: the checks' data have ||x||^2 far beyond the paper's, so
#   eta=0.1 diverges and the learner says so, by design (its own tests check that warning).
NOT_SKLEARN_BASE = "ignore:Estimator .* does not inherit from `sklearn.base.BaseEstimator`"
pytestmark = [pytest.mark.filterwarnings(NOT_SKLEARN_BASE),
              pytest.mark.filterwarnings("ignore:Skipping check check_array_api_input"),
              pytest.mark.filterwarnings("ignore:WidrowHoff.* diverged:RuntimeWarning")]


def _checks():
    """scikit-learn's own (estimator, check) pairs, less ``NOT_RUN``."""
    import warnings

    with warnings.catch_warnings():  # at collection, where pytestmark does not reach
        warnings.filterwarnings("ignore", message="Estimator .* does not inherit from `sklearn.base.BaseEstimator`")
        mark = parametrize_with_checks(_instances())
    ids = mark.kwargs["ids"]
    return [pytest.param(est, check, id=f"{ids(est)}-{ids(check)}") for est, check in mark.args[1]
            if not any(n in ids(check) for n in NOT_RUN)]


@pytest.mark.parametrize("estimator,check", _checks())
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


def test_gp_collaborative_and_ordinal_variants_pass_the_checks_too():
    from sklearn.utils.estimator_checks import check_estimator

    from rankrepro.algorithms.gp import GPModel

    for kw in ({"likelihood": "ordinal"}, {"likelihood": "ordinal", "collaborative": True}, {"collaborative": True}):
        check_estimator(GPModel(n_ranks=20, em_iters=2, **kw))


def test_rankers_fit_with_query_groups_and_select_by_validation(rng):
    """fit(X, y, qid, eval_set) keeps the step of best validation NDCG@10 -- the same step
    and the same validation scores as the LETOR protocol's iterate() gives."""
    from rankrepro.algorithms.rankers import RankBoost
    from rankrepro.metrics import per_query

    X = rng.normal(size=(300, 6))
    y = np.clip(np.round(X @ np.array([1.0, 0.6, 0.0, 0.0, -0.4, 0.2]) + rng.normal(0, 0.8, 300)), 0, 2).astype(int)
    qid = np.repeat(np.arange(30), 10)
    tr, va = slice(0, 200), slice(200, 300)
    r = RankBoost(n_rounds=15).fit(X[tr], y[tr], qid=qid[tr], eval_set=(X[va], y[va], qid[va]))
    curve = [float(per_query(s, y[va], qid[va], ("ndcg@10",))["ndcg@10"].mean())
             for _, (s,) in RankBoost(n_rounds=15).iterate(X[tr], y[tr], qid[tr], [(X[va], y[va], qid[va])])]
    assert r.best_step_ == 1 + int(np.argmax(curve)) and r.best_score_ == max(curve)
    assert r.score(X[va], y[va], qid[va]) == pytest.approx(max(curve))
    # a ranker in scikit-learn's model selection, grouped by query
    from sklearn.model_selection import GroupKFold, cross_val_score

    s = cross_val_score(RankBoost(n_rounds=5), X, y, groups=qid, cv=GroupKFold(3), params={"qid": qid})
    assert s.shape == (3,) and np.all((s >= 0) & (s <= 1))


def test_gp_model_predicts_the_protocols_computation(rng):
    """fit/predict of the GP model is the experiments' fit_predict_kernel on the cosine kernel
    of the training and test items together (transductive, as in the paper)."""
    from rankrepro.algorithms.gp import GPModel
    from rankrepro.algorithms.feature_maps import cosine_kernel

    V = rng.normal(size=(40, 12))
    Y = rng.integers(1, 6, size=(40, 5)) * (rng.random((40, 5)) < 0.8)
    m = GPModel(likelihood="ordinal", collaborative=True, em_iters=4)
    P = m.fit(V[:30], Y[:30]).predict(V[30:])
    direct = GPModel(likelihood="ordinal", collaborative=True, em_iters=4).fit_predict_kernel(
        cosine_kernel(V), np.vstack([Y[:30], np.zeros((10, 5), dtype=int)]).T, np.arange(30), np.arange(30, 40))
    np.testing.assert_array_equal(P, np.stack(direct.pred, axis=1))
    assert m.score(V[30:], Y[30:]) == pytest.approx(-np.mean(np.abs(P - Y[30:])[Y[30:] > 0]))


def test_coactive_learner_fit_is_the_web_search_rounds(rng):
    """The regret of fit's rounds falls, as the protocol's does (strict feedback, alpha=1:
    the user returns the best top five, so the perceptron's regret averages down)."""
    from rankrepro.algorithms.coactive import CoactiveLearner

    X = rng.normal(size=(2000, 5))
    y = np.clip(np.round(X @ np.array([1.0, 0.5, -0.3, 0.0, 0.2]) + 1), 0, 3).astype(int)
    m = CoactiveLearner(seed=1).fit(X, y, qid=np.repeat(np.arange(200), 10))
    assert m.regret_.shape == (200,) and m.regret_[100:].mean() < 0.5 * m.regret_[:20].mean()
    assert m.score(X, y, np.repeat(np.arange(200), 10)) > 0.8


def test_collecting_the_checks_warns_of_nothing_expected():
    """The 16 "does not inherit from BaseEstimator" warnings of the collection are quieted."""
    import subprocess
    import sys
    from pathlib import Path

    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                        "-W", "error::UserWarning", __file__], capture_output=True, text=True, timeout=120,
                       cwd=Path(__file__).resolve().parents[1])
    assert r.returncode == 0 and "BaseEstimator" not in r.stdout + r.stderr, (r.stdout + r.stderr)[-2000:]
