"""The online learners as scikit-learn estimators: cloned, scored (higher is better) and
selected with scikit-learn's own tools."""
import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_val_score  # noqa: E402

from rankrepro.algorithms import REGISTRY, PRank, WidrowHoff  # noqa: E402
from rankrepro.algorithms.kernels import FEATURE_MAPS  # noqa: E402
from rankrepro.data.synthetic import synthetic_hgo  # noqa: E402


@pytest.fixture(scope="module")
def hgo():
    s = synthetic_hgo(600, 200, np.random.default_rng(0))
    return FEATURE_MAPS["poly2"](s.X_train), s.y_train


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_sklearn_clone_and_params(name):
    cls = REGISTRY[name]
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
