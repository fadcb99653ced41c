"""Coactive learning (Shivaswamy & Joachims 2012): the preference perceptron and its variants,
run for many users at once (their weight vectors are the rows of one matrix).

The learner presents, for each user, the object that maximises w_u . phi(x, y); the user
returns an object ybar (feedback); the update moves w_u along phi(x, ybar) - phi(x, y).

* ``variant="perceptron"`` -- Algorithm 1: w <- w + (phi(x, ybar) - phi(x, y)); with
  ``batch=k`` the updates of k rounds are applied together every k rounds (Sec. 4.2).
* ``variant="convex"`` -- Algorithm 2: eta_t = 1/sqrt(t), w <- Proj_B(w + eta_t G delta), B the
  l2 ball of radius ``radius``.

The simulators of the paper's experiments use :func:`strictly_alpha_informative_item`.
This module is the algorithmic core of the coactive experiments; the experiments themselves
(Figs. 2-5) are not in the catalog yet.
"""

from __future__ import annotations

import numpy as np

from .base import Interval, ParamError


class PreferencePerceptron:
    _constraints = {"n_features": Interval(int, 1, None), "n_users": Interval(int, 1, None),
                    "batch": Interval(int, 1, None), "G": Interval(float, 0.0, None, left_open=True)}

    def __init__(self, *, n_features: int, n_users: int = 1, variant: str = "perceptron", batch: int = 1,
                 radius: float | None = None, G: float = 1.0):
        self.n_features, self.n_users, self.variant = n_features, n_users, variant
        self.batch, self.radius, self.G = batch, radius, G
        for name, rule in self._constraints.items():
            if not rule.check(getattr(self, name)):
                raise ParamError(name, getattr(self, name), rule.describe(), "PreferencePerceptron")
        if variant not in ("perceptron", "convex"):
            raise ParamError("variant", variant, "must be 'perceptron' or 'convex'", "PreferencePerceptron")
        if variant == "convex" and (radius is None or not radius > 0):
            raise ParamError("radius", radius, "the convex variant needs a positive radius", "PreferencePerceptron")
        self.W = np.zeros((n_users, n_features))
        self.t = 0
        self._pending = np.zeros_like(self.W)

    def scores(self, Phi: np.ndarray) -> np.ndarray:
        """Utility estimates: Phi is (objects x features), shared by all users, or
        (users x objects x features); returns (users x objects)."""
        if Phi.ndim == 2:
            return self.W @ Phi.T
        return np.einsum("uf,uof->uo", self.W, Phi)

    def update(self, delta: np.ndarray) -> None:
        """delta = phi(x, ybar) - phi(x, y) for every user (users x features)."""
        delta = np.asarray(delta, dtype=float).reshape(self.n_users, self.n_features)
        self.t += 1
        if self.variant == "convex":
            self.W = self.W + (self.G / np.sqrt(self.t)) * delta
            norms = np.linalg.norm(self.W, axis=1, keepdims=True)
            self.W = np.where(norms > self.radius, self.W * (self.radius / np.maximum(norms, 1e-300)), self.W)
            return
        self._pending += delta
        if self.t % self.batch == 0:
            self.W = self.W + self._pending
            self._pending[:] = 0.0


def strictly_alpha_informative_item(utility: np.ndarray, presented: np.ndarray, alpha: float,
                                    available: np.ndarray | None = None,
                                    masked: np.ndarray | None = None) -> np.ndarray:
    """For each user (row), the lowest-utility available item whose utility gain over the
    presented item is at least alpha times the largest possible gain (eq. 4).  When the
    presented item is already the best, the feedback is the presented item itself.
    ``masked`` (the utilities with unavailable items at -inf) may be passed instead of
    ``available`` to save recomputing it every round."""
    U = np.asarray(utility, dtype=float)
    if masked is None:
        avail = np.ones_like(U, dtype=bool) if available is None else np.asarray(available, dtype=bool)
        masked = np.where(avail, U, -np.inf)
    rows = np.arange(U.shape[0])
    u_pres = U[rows, presented]
    u_best = masked.max(axis=1)
    need = u_pres + alpha * (u_best - u_pres) - 1e-12
    return np.argmin(np.where(masked >= need[:, None], masked, np.inf), axis=1)


class CoactiveLearner:
    """Config-level description of a coactive cell: the learner (variant, batch, radius) and
    the simulated user's feedback (``feedback``: strict with quality ``alpha``, or noisy)."""

    name = "preference_perceptron"

    def __init__(self, *, variant: str = "perceptron", batch: int = 1, radius: float | None = None,
                 feedback: str = "strict", alpha: float = 1.0):
        self.variant, self.batch, self.radius, self.feedback, self.alpha = variant, batch, radius, feedback, alpha

    @classmethod
    def _param_names(cls) -> list[str]:
        return ["variant", "batch", "radius", "feedback", "alpha"]

    def validate(self) -> "CoactiveLearner":
        if self.feedback not in ("strict", "noisy"):
            raise ParamError("feedback", self.feedback, "must be 'strict' or 'noisy'", "CoactiveLearner")
        if not Interval(float, 0.0, 1.0, left_open=True).check(self.alpha):
            raise ParamError("alpha", self.alpha, "must be a number in (0, 1]", "CoactiveLearner")
        PreferencePerceptron(n_features=1, variant=self.variant, batch=self.batch, radius=self.radius)
        return self

    def make(self, n_features: int, n_users: int) -> PreferencePerceptron:
        return PreferencePerceptron(n_features=n_features, n_users=n_users, variant=self.variant, batch=self.batch,
                                    radius=self.radius)


COACTIVE = {CoactiveLearner.name: CoactiveLearner}
