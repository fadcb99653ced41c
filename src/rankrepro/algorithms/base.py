"""Shared protocol of the online ordinal learners.

Every learner is a small estimator in the scikit-learn mould:

* keyword-only hyperparameters, stored as given by ``__init__`` and checked in one
  place (:meth:`OnlineRanker._validate_params`) against the class's ``_constraints``;
* fitted state in trailing-underscore attributes, created on the first call of
  :meth:`partial_fit` / :meth:`fit_online`;
* randomness only through the ``seed`` hyperparameter (an int, a
  :class:`numpy.random.SeedSequence` or ``None``), never global state.

The online protocol of the papers is *predict, then receive the rank, then update*:
:meth:`fit_online` returns the prediction made on each round before the update, so the
time-averaged rank loss ``(1/T) sum |yhat_t - y_t|`` is exact.  Ranks are the integers
``1..n_ranks``.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from scipy import sparse


class ParamError(ValueError):
    """A hyperparameter outside its allowed range; ``.param`` names it."""

    def __init__(self, param: str, value: Any, rule: str, owner: str):
        self.param = param
        self.value = value
        self.rule = rule
        super().__init__(f"{owner}: hyperparameter {param}={value!r} is invalid: {rule}")


@dataclass(frozen=True)
class Interval:
    """Allowed values of a numeric hyperparameter, e.g. ``Interval(float, 0, 1, left_open=True)``."""

    kind: type
    low: float | None = None
    high: float | None = None
    left_open: bool = False
    right_open: bool = False

    def describe(self) -> str:
        lo = "-inf" if self.low is None else repr(self.low)
        hi = "inf" if self.high is None else repr(self.high)
        left = "(" if self.left_open or self.low is None else "["
        right = ")" if self.right_open or self.high is None else "]"
        kind = "an integer" if self.kind is int else "a number"
        return f"must be {kind} in {left}{lo}, {hi}{right}"

    def check(self, value: Any) -> bool:
        if isinstance(value, bool):
            return False
        if self.kind is int:
            if not isinstance(value, Integral):
                return False
        elif not isinstance(value, Real):
            return False
        v = float(value)
        if not math.isfinite(v):
            return False
        if self.low is not None and (v < self.low or (self.left_open and v == self.low)):
            return False
        if self.high is not None and (v > self.high or (self.right_open and v == self.high)):
            return False
        return True


@dataclass(frozen=True)
class OneOf:
    """A string option: one of the listed values."""

    options: tuple

    def describe(self) -> str:
        return "must be one of " + ", ".join(repr(o) for o in self.options)

    def check(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.options


def check_seed(value: Any) -> bool:
    return value is None or isinstance(value, (np.random.SeedSequence,)) or (
        isinstance(value, Integral) and not isinstance(value, bool) and int(value) >= 0
    )


def rows(X: sparse.csr_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The CSR arrays the compiled kernels take: row pointers, column indices, values."""
    return X.indptr.astype(np.int64, copy=False), X.indices.astype(np.int64, copy=False), X.data


def round_to_rank(score: np.ndarray, n_ranks: int) -> np.ndarray:
    """Nearest rank to a real-valued prediction, halves rounded up, clipped to 1..k."""
    r = np.floor(np.asarray(score, dtype=float) + 0.5)
    r = np.where(np.isnan(r), 1.0, r)
    return np.clip(r, 1, n_ranks).astype(np.int64)


class OnlineRanker:
    """Base class: validation, input checks, cloning and the online protocol."""

    #: name -> Interval (or a callable returning bool) of each hyperparameter
    _constraints: ClassVar[dict[str, Any]] = {"n_ranks": Interval(int, 2, None)}
    #: short name used in configs and reports
    name: ClassVar[str] = "online_ranker"

    # -- parameters -----------------------------------------------------------------
    @classmethod
    def _param_names(cls) -> list[str]:
        import inspect

        sig = inspect.signature(cls.__init__)
        return [p for p in sig.parameters if p != "self"]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The hyperparameters (scikit-learn's protocol; there are no nested estimators, so
        ``deep`` changes nothing)."""
        return {k: getattr(self, k) for k in self._param_names()}

    def set_params(self, **params: Any) -> "OnlineRanker":
        names = set(self._param_names())
        for k, v in params.items():
            if k not in names:
                raise ParamError(k, v, f"unknown hyperparameter (known: {sorted(names)})", type(self).__name__)
            setattr(self, k, v)
        return self

    def clone(self) -> "OnlineRanker":
        """A new unfitted estimator with the same hyperparameters."""
        return type(self)(**copy.deepcopy(self.get_params()))

    def _validate_params(self) -> None:
        owner = type(self).__name__
        for cls in type(self).__mro__:
            for name, rule in getattr(cls, "_constraints", {}).items():
                if name not in self._param_names():
                    continue
                value = getattr(self, name)
                if isinstance(rule, (Interval, OneOf)):
                    if not rule.check(value):
                        raise ParamError(name, value, rule.describe(), owner)
                elif not rule(value):
                    raise ParamError(name, value, getattr(rule, "__doc__", None) or "invalid value", owner)
        if "seed" in self._param_names() and not check_seed(getattr(self, "seed")):
            raise ParamError("seed", getattr(self, "seed"), "must be None, a non-negative int or a SeedSequence", owner)

    def validate(self) -> "OnlineRanker":
        """Check the hyperparameters without fitting (used when a config loads)."""
        self._validate_params()
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    # -- inputs ---------------------------------------------------------------------
    def _check_X(self, X: Any) -> sparse.csr_matrix:
        """Dense or scipy-sparse input as canonical CSR rows (what the kernels iterate)."""
        name = type(self).__name__
        if sparse.issparse(X):
            X = sparse.csr_matrix(X, dtype=np.float64)
        else:
            X = np.asarray(X, dtype=np.float64)
            if X.ndim != 2:
                raise ValueError(f"{name}: X must be 2-D (n_samples, n_features), got shape {X.shape}")
            if not np.all(np.isfinite(X)):
                raise ValueError(f"{name}: X contains NaN or infinity")
            X = sparse.csr_matrix(X)
        if not np.all(np.isfinite(X.data)):
            raise ValueError(f"{name}: X contains NaN or infinity")
        if hasattr(self, "n_features_in_") and X.shape[1] != self.n_features_in_:
            raise ValueError(f"{name}: X has {X.shape[1]} features, the learner was started with {self.n_features_in_}")
        X.sum_duplicates()
        X.sort_indices()
        return X

    def _check_y(self, y: Any, n: int) -> np.ndarray:
        y_arr = np.asarray(y)
        if y_arr.shape != (n,):
            raise ValueError(f"{type(self).__name__}: y must have shape ({n},), got {y_arr.shape}")
        if y_arr.size and not np.all(np.equal(np.mod(y_arr, 1), 0)):
            raise ValueError(f"{type(self).__name__}: ranks must be integers 1..{self.n_ranks}")
        y_int = y_arr.astype(np.int64)
        if y_int.size and (y_int.min() < 1 or y_int.max() > self.n_ranks):
            raise ValueError(
                f"{type(self).__name__}: ranks must lie in 1..{self.n_ranks}, got {y_int.min()}..{y_int.max()}"
            )
        return y_int

    # -- protocol -------------------------------------------------------------------
    def _init_state(self, n_features: int) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _online(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _predict(self, X: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _ensure_started(self, X: np.ndarray) -> None:
        if not hasattr(self, "n_features_in_"):
            self._validate_params()
            self.n_features_in_ = X.shape[1]
            self.n_rounds_ = 0
            self._init_state(X.shape[1])

    def fit_online(self, X: Any, y: Any) -> np.ndarray:
        """Run the online protocol over the rows of ``X``; return the prediction of each
        round, made before that round's update."""
        X = self._check_X(X)
        y = self._check_y(y, X.shape[0])
        self._ensure_started(X)
        preds = self._online(X, y)
        self.n_rounds_ += X.shape[0]
        return preds

    def partial_fit(self, X: Any, y: Any) -> "OnlineRanker":
        self.fit_online(X, y)
        return self

    def fit(self, X: Any, y: Any) -> "OnlineRanker":
        """One online pass from a fresh state."""
        for attr in [a for a in vars(self) if a.endswith("_") and not a.startswith("__")]:
            delattr(self, attr)
        return self.partial_fit(X, y)

    def _check_fitted(self) -> None:
        if not hasattr(self, "n_features_in_"):
            raise RuntimeError(f"{type(self).__name__} is not fitted: call partial_fit first")

    def predict(self, X: Any) -> np.ndarray:
        self._check_fitted()
        return self._predict(self._check_X(X))

    def __sklearn_tags__(self):
        """scikit-learn (>= 1.6) asks every estimator for its tags: defaults, with y required
        (scikit-learn is only needed by whoever calls this)."""
        from sklearn.base import BaseEstimator

        tags = BaseEstimator.__sklearn_tags__(self)
        tags.target_tags.required = True
        return tags

    def score(self, X: Any, y: Any) -> float:
        """Minus the average rank loss (1/n) sum |yhat - y| of the current rule on (X, y):
        higher is better, as scikit-learn's model selection expects."""
        from ..metrics import rank_loss

        X = self._check_X(X)
        return -rank_loss(self.predict(X), self._check_y(y, X.shape[0]))
