"""Coactive learning experiments (Shivaswamy & Joachims 2012): movie recommendation (Sec. 5.2,
:func:`coactive_movies_trial`) and web search (Sec. 5.1, :func:`coactive_ranking_trial`, at the
end of this module).

Movies:

One trial is one group of the second-half users (the users are dealt into ``n_trials``
groups by the experiment's seed, the same for every cell, so cells are compared on the
same users).  All users of the group are simulated together: each round the learner
recommends, per user, the available movie of highest estimated utility; the simulated user
returns a movie as feedback; both leave the candidate set.  Regret of a round is the
utility (w*_u . m) of the best available movie minus that of the recommended one; the curve
is the time-averaged regret (1/T) sum_t regret_t, averaged over the group's users.

Learners: the preference perceptron (all users of the group at once) or the Ranking SVM
baseline (one model per user, retrained on 10% growth; see
:class:`~rankrepro.algorithms.coactive.CoactiveRankSVM`).  Both receive the same object each
round: the pair (presented movie, feedback movie), as phi(ybar) - phi(y).  ``wall_seconds``
is the time of the simulation (the setup is shared and excluded); ``learner_seconds`` the
part spent by the learner alone (scoring the movies to present, updating or retraining):
the simulated user's cost is the same for both learners and would dilute their ratio.
Both are elapsed time; ``train_seconds`` is the learner's span in the process's own CPU time
(web search: the rounds', the span of ``wall_seconds``), which another process on the machine
barely moves: the claims about cost are decided on it (rankrepro.claims.timing).

Feedback: ``strict`` -- the lowest-utility available movie that is still strictly
alpha-informative; ``noisy`` -- a movie rated one higher than the presented one (the user's
actual rating when there is one, else w*_u . m rounded to 1..5), among the available ones
drawn at random (``noisy_pick: random``) or the one of highest true utility (``best``; the
next rating up when none is one higher); a movie already at the top rating is its own
feedback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import time

import numpy as np

from omegaconf import OmegaConf

from ..algorithms.coactive import (COACTIVE, TOP, CoactiveRankSVM, SortedUtilities, least_squares_w,  # noqa: F401
                                   noisy_ranking_feedback, position_weights, ranking_rounds,
                                   strict_ranking_feedback)
from ..data.builders import BUILDERS
from ..metrics import checkpoints
from .base import Protocol, Spec


@dataclass(frozen=True)
class CoactiveSpec(Spec):
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
    # 0 where available, -inf where not: added to the scores it hides the unavailable movies
    # (x + 0.0 == x; a masked assignment of -inf over the whole users x movies matrix every
    # round cost more than the scores themselves)
    shut = np.zeros(U.shape)
    rows = np.arange(users.size)
    rng = np.random.default_rng(spec.algo_seed)
    R = _noisy_ratings(setup, users) if cfg.feedback == "noisy" else None
    T = min(spec.n_rounds, M.shape[0] // 2)
    regret = np.zeros((users.size, T))
    sorted_u = SortedUtilities(U)
    learner_time = learner_cpu = 0.0
    for t in range(T):
        tl, cl = time.perf_counter(), time.process_time()
        S = learner.scores(M) if learner is not None else np.stack([s.w for s in svms]) @ M.T
        S += shut
        y = np.argmax(S, axis=1)  # the available movie of highest estimated utility
        learner_time += time.perf_counter() - tl
        learner_cpu += time.process_time() - cl
        u_pres = U[rows, y]
        if cfg.feedback == "strict":
            ybar, best = sorted_u.feedback(avail, y, cfg.alpha)
        else:
            best = sorted_u.best(avail)
            ybar = y.copy()
            r_pres = R[rows, y]
            for k in np.flatnonzero(r_pres < 5):
                for want in range(int(r_pres[k]) + 1, 6):
                    cand = np.flatnonzero(avail[k] & (R[k] == want))
                    if cand.size:
                        if cfg.noisy_pick == "random":
                            ybar[k] = cand[rng.integers(cand.size)]
                        else:  # the highest true utility; ties: the lowest index
                            ybar[k] = cand[np.argmax(U[k, cand])]
                        break
        regret[:, t] = best - u_pres
        tl, cl = time.perf_counter(), time.process_time()
        if learner is not None:
            learner.update(M[ybar] - M[y])
        else:
            for k, s in enumerate(svms):
                s.add_pair(M[ybar[k]] - M[y[k]])
        learner_time += time.perf_counter() - tl
        learner_cpu += time.process_time() - cl
        avail[rows, y] = False
        avail[rows, ybar] = False
        shut[rows, y] = -np.inf
        shut[rows, ybar] = -np.inf
    wall = time.perf_counter() - t0
    pts = checkpoints(T, spec.curve_points)
    avg = np.cumsum(regret, axis=1)[:, pts - 1] / pts
    return [("regret", int(p), float(v)) for p, v in zip(pts, avg.mean(axis=0))] + [
        ("wall_seconds", None, wall), ("learner_seconds", None, learner_time),
        ("train_seconds", None, learner_cpu)]


# -------------------------------------------------------------------------------------
# web search (Sec. 5.1): rankings of a query's documents, the joint feature map of eq. 12
# (the simulated users and the rounds: :mod:`rankrepro.algorithms.coactive`)
# -------------------------------------------------------------------------------------

def coactive_ranking_trial(spec: CoactiveSpec) -> list[tuple[str, int | None, float]]:
    """One query order of Sec. 5.1 (trial ``spec.group`` of ``spec.n_groups``): the queries of
    the whole data set in a random order (capped at ``spec.n_rounds``); per round the learner
    presents the documents sorted by its scores (ties broken at random), the simulated user
    returns a ranking (strict: :func:`strict_ranking_feedback`; noisy:
    :func:`noisy_ranking_feedback`), and the learner updates on phi(ybar) - phi(y).  The regret
    of a round is U(y*) - U(y) with U(y) = sum_i w*.x_{y_i} / log(i+1) over the top five; the
    curve is the running average regret.  ``wall_seconds`` times the rounds (w* and the
    data load excluded)."""
    part = BUILDERS[spec.builder](data_path=spec.data_path, **spec.builder_params)
    X, labels = part.X, part.y
    bounds = np.flatnonzero(np.r_[True, np.diff(part.qid) != 0, True])
    starts, ends = bounds[:-1], bounds[1:]
    w_star = least_squares_w(X, labels)
    u_all = X @ w_star
    perm = np.random.default_rng(np.random.SeedSequence(spec.split_seed, spawn_key=(9, spec.group))).permutation(
        starts.size)
    T = perm.size if spec.n_rounds is None else min(spec.n_rounds, perm.size)
    cfg = COACTIVE[spec.estimator](**spec.params)
    rng = np.random.default_rng(spec.algo_seed)
    n_features = X.shape[1]
    if cfg.variant == "ranksvm":
        svm, learner = CoactiveRankSVM(n_features, seed=int(spec.group)), None
    else:
        svm, learner = None, cfg.make(n_features, 1)
    t0, c0 = time.perf_counter(), time.process_time()
    regret = ranking_rounds(cfg, learner, svm, X, labels, u_all, starts, ends, perm[:T], rng)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    pts = checkpoints(T, spec.curve_points)
    avg = np.cumsum(regret)[pts - 1] / pts
    return [("regret", int(p), float(v)) for p, v in zip(pts, avg)] + [("wall_seconds", None, wall),
                                                                      ("train_seconds", None, cpu)]


class _Coactive(Protocol):
    """Both coactive experiments: the same learners and spec; a trial is a group of users
    (movies) or a query order (web search), ``n_train`` caps its rounds."""

    estimators = COACTIVE
    uses = frozenset({"n_train"})

    def spec(self, exp, cell, trial, data_path, data_seed, algo_seed) -> CoactiveSpec:
        d = exp.cfg.dataset
        return CoactiveSpec(estimator=cell.estimator, params=dict(cell.params), builder=d.builder,
                            builder_params=OmegaConf.to_container(d.params), split_seed=int(exp.cfg.experiment.seed),
                            group=trial, n_groups=exp.n_trials, n_rounds=exp.n_train,
                            curve_points=exp.curve_points, data_path=data_path, algo_seed=algo_seed,
                            max_users=exp.max_users)


class CoactiveMovies(_Coactive):
    name = "coactive_movies"
    unit = "user groups"

    def run(self, spec: CoactiveSpec):
        return coactive_movies_trial(spec)

    def size_text(self, exp) -> str:
        return f"{exp.n_trials} user groups, up to {exp.n_train} recommendations per user"


class CoactiveRanking(_Coactive):
    name = "coactive_ranking"
    unit = "query orders"

    def run(self, spec: CoactiveSpec):
        return coactive_ranking_trial(spec)

    def size_text(self, exp) -> str:
        return f"{exp.n_trials} random query orders, one pass over the queries (at most {exp.n_train} rounds)"


MOVIES = CoactiveMovies()
RANKING = CoactiveRanking()
