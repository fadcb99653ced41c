"""Coactive movie recommendation (Shivaswamy & Joachims 2012, Sec. 5.2).

One trial is one group of the second-half users (the users are dealt into ``n_trials``
groups by the experiment's seed, the same for every cell, so cells are compared on the
same users).  All users of the group are simulated together: each round the learner
recommends, per user, the available movie of highest estimated utility; the simulated user
returns a movie as feedback; both leave the candidate set.  Regret of a round is the
utility (w*_u . m) of the best available movie minus that of the recommended one; the curve
is the time-averaged regret (1/T) sum_t regret_t, averaged over the group's users.

Learners: the preference perceptron (all users of the group at once) or the Ranking SVM
baseline (one model per user, retrained on 10% growth; see
:class:`~rankrepro.algorithms.coactive.CoactiveRankSVM`).  ``wall_seconds`` is the time of the
simulation (the setup is shared and excluded).

Feedback: ``strict`` -- the lowest-utility available movie that is still strictly
alpha-informative; ``noisy`` -- a movie rated one higher than the presented one (the user's
actual rating when there is one, else w*_u . m rounded to 1..5), drawn at random among the
available ones (the next rating up when none is one higher); a movie already at the top
rating is its own feedback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import time

import numpy as np

from ..algorithms.coactive import COACTIVE, CoactiveRankSVM, strictly_alpha_informative_item
from ..data.builders import BUILDERS
from ..metrics import checkpoints


@dataclass(frozen=True)
class CoactiveSpec:
    estimator: str
    params: dict[str, Any]
    builder: str
    builder_params: dict[str, Any]
    split_seed: int
    group: int
    n_groups: int
    n_rounds: int
    curve_points: int
    data_path: str
    algo_seed: np.random.SeedSequence = field(hash=False)
    #: a scale's cap on the users simulated per group (None: no cap)
    max_users: int | None = None


def _noisy_ratings(setup, users: np.ndarray) -> np.ndarray:
    """Per user and movie: the actual rating when there is one, else w*.m rounded to 1..5."""
    R = np.clip(np.rint(setup.W_star[users] @ setup.M.T), 1, 5)
    for k, u in enumerate(users):
        movies, ratings = setup.ratings[u]
        R[k, movies] = ratings
    return R


def coactive_movies_trial(spec: CoactiveSpec) -> list[tuple[str, int | None, float]]:
    setup = BUILDERS[spec.builder](spec.split_seed, data_path=spec.data_path, **spec.builder_params)
    n_second = setup.W_star.shape[0]
    deal = np.random.default_rng(np.random.SeedSequence(spec.split_seed, spawn_key=(8,))).permutation(n_second)
    users = np.sort(deal[spec.group::spec.n_groups])
    cfg = COACTIVE[spec.estimator](**spec.params)
    for cap in (cfg.max_users, spec.max_users):
        if cap is not None:
            users = users[:cap]
    M = setup.M
    U = setup.W_star[users] @ M.T  # true utilities (users x movies)
    t0 = time.perf_counter()
    if cfg.variant == "ranksvm":
        svms = [CoactiveRankSVM(M.shape[1], seed=int(u)) for u in users]
        learner = None
    else:
        learner = cfg.make(M.shape[1], users.size)
    avail = np.ones_like(U, dtype=bool)
    rows = np.arange(users.size)
    rng = np.random.default_rng(spec.algo_seed)
    R = _noisy_ratings(setup, users) if cfg.feedback == "noisy" else None
    T = min(spec.n_rounds, M.shape[0] // 2)
    regret = np.zeros((users.size, T))
    Ua = U.copy()  # utilities with the removed movies at -inf
    for t in range(T):
        S = learner.scores(M) if learner is not None else np.stack([s.w for s in svms]) @ M.T
        S[~avail] = -np.inf
        y = np.argmax(S, axis=1)
        u_pres = U[rows, y]
        best = Ua.max(axis=1)
        regret[:, t] = best - u_pres
        if cfg.feedback == "strict":
            ybar = strictly_alpha_informative_item(U, y, cfg.alpha, masked=Ua)
        else:
            ybar = y.copy()
            r_pres = R[rows, y]
            for k in np.flatnonzero(r_pres < 5):
                for want in range(int(r_pres[k]) + 1, 6):
                    cand = np.flatnonzero(avail[k] & (R[k] == want))
                    if cand.size:
                        ybar[k] = cand[rng.integers(cand.size)]
                        break
        if learner is not None:
            learner.update(M[ybar] - M[y])
        else:
            for k, s in enumerate(svms):
                s.add_pair(M[ybar[k]] - M[y[k]])
        avail[rows, y] = False
        avail[rows, ybar] = False
        Ua[rows, y] = -np.inf
        Ua[rows, ybar] = -np.inf
    wall = time.perf_counter() - t0
    pts = checkpoints(T, spec.curve_points)
    avg = np.cumsum(regret, axis=1)[:, pts - 1] / pts
    return [("regret", int(p), float(v)) for p, v in zip(pts, avg.mean(axis=0))] + [("wall_seconds", None, wall)]
