"""Non-ordinal baselines of the experiments: the multiclass perceptron and Widrow-Hoff."""

from __future__ import annotations

import warnings

import numpy as np

from . import _compiled as K
from .base import rows, Range, OneOf, OnlineRanker, round_to_rank


class MulticlassPerceptron(OnlineRanker):
    """Multiclass perceptron MCP (Crammer & Singer 2001b), as Crammer & Singer (2005,
    Sec. 6) use it: one prototype per rank, prediction ``argmax_r W_r.x`` (a tie goes to the
    lowest rank, ``ties='lowest'``, the usual first-maximum convention, or to the highest,
    ``ties='highest'``; the paper does not say, and it decides the first rounds, where every
    prototype is zero), and on a mistake the uniform ultraconservative update: W_y += x and every
    rank r != y with W_r.x >= W_y.x loses x / |E|.  Ranks are treated as unordered classes.
    """

    name = "mcp"
    _dense_rows = True
    _kernel_state = ("prototypes_",)
    _constraints = {"ties": OneOf(("lowest", "highest"))}

    def __init__(self, *, n_ranks: int = 5, ties: str = "lowest"):
        self.n_ranks = n_ranks
        self.ties = ties

    def _init_state(self, n_features: int) -> None:
        self.prototypes_ = np.zeros((self.n_ranks, n_features))

    def _online(self, X, y):
        out = np.empty(X.shape[0], dtype=np.int64)
        K.mcp_online(*rows(X), y, self.prototypes_, out, self.ties == "highest")
        return out

    def decision_function(self, X) -> np.ndarray:
        self._check_fitted()
        return self._check_X(X) @ self.prototypes_.T

    def _predict(self, X):
        out = np.empty(X.shape[0], dtype=np.int64)
        K.predict_mcp(*rows(X), self.prototypes_, out, self.ties == "highest")
        return out


class WidrowHoff(OnlineRanker):
    """Widrow-Hoff (LMS) online regression on the rank value: ``w += eta (y - w.x) x``;
    the prediction is ``w.x`` rounded to the nearest rank (halves up) and clipped to
    1..k (Crammer & Singer 2005, Sec. 6).  A step size too large for ||x||^2 makes the
    weights diverge; ``diverged_`` records it (non-finite scores predict rank 1) and a
    RuntimeWarning is issued."""

    name = "widrow_hoff"
    _dense_rows = True
    _kernel_state = ("coef_",)
    _constraints = {"eta": Range(float, 0.0, None, left_open=True)}

    def __init__(self, *, n_ranks: int = 5, eta: float = 0.1):
        self.n_ranks = n_ranks
        self.eta = eta

    def _init_state(self, n_features: int) -> None:
        self.coef_ = np.zeros(n_features)
        self.diverged_ = False

    def _online(self, X, y):
        out = np.empty(X.shape[0], dtype=np.int64)
        with np.errstate(all="ignore"):
            div = bool(K.wh_online(*rows(X), y, self.coef_, float(self.eta), int(self.n_ranks), out))
        if div and not self.diverged_:
            warnings.warn(f"WidrowHoff(eta={self.eta}) diverged: the step size is too large for ||x||^2",
                          RuntimeWarning, stacklevel=3)
        self.diverged_ = self.diverged_ or div
        return out

    def decision_function(self, X) -> np.ndarray:
        self._check_fitted()
        with np.errstate(all="ignore"):
            return self._check_X(X) @ self.coef_

    def _predict(self, X):
        with np.errstate(all="ignore"):
            return round_to_rank(X @ self.coef_, self.n_ranks)
