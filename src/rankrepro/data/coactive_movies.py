"""Movie feature vectors for the coactive movie-recommendation experiment (Shivaswamy &
Joachims 2012, Sec. 5.2): users split at random into two halves; on the first half a
regularised low-rank factorisation r_um - mu ~ p_u . q_m ("SVD embedding", fitted by
alternating least squares) gives the movie vectors q_m, its dimension and regularisation
chosen on a held-out tenth of the first half's ratings (squared error); each user u of the
second half gets w*_u, the least-squares fit of their ratings on the movie vectors.

The setup (about 10 s: nine ALS fits) is the same for every cell and trial of an
experiment: it is computed once and kept beside the processed data
(``coactive_setup-<key>.npz``, the key hashing the split seed and the search grid; rebuilt
when the data are newer), so the cells read it instead of refitting it.  The file holds the
arrays bit for bit.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .arrays import derived_arrays, derived_path, load_cached


def _groups(idx: np.ndarray, n: int) -> list[np.ndarray]:
    order = np.argsort(idx, kind="stable")
    bounds = np.searchsorted(idx[order], np.arange(n + 1))
    return [order[bounds[i]:bounds[i + 1]] for i in range(n)]


def _als(u: np.ndarray, m: np.ndarray, r: np.ndarray, n_u: int, n_m: int, dim: int, reg: float, sweeps: int,
         rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Regularised least squares, alternating between user and movie factors (one small
    dim x dim solve per user and per movie and sweep)."""
    P = 0.1 * rng.standard_normal((n_u, dim))
    Q = 0.1 * rng.standard_normal((n_m, dim))
    eye = reg * np.eye(dim)
    by_u, by_m = _groups(u, n_u), _groups(m, n_m)
    for _ in range(sweeps):
        for A, B, groups, other in ((P, Q, by_u, m), (Q, P, by_m, u)):
            for a, rows in enumerate(groups):
                if rows.size == 0:
                    A[a] = 0.0
                    continue
                X = B[other[rows]]
                A[a] = np.linalg.solve(X.T @ X + eye, X.T @ r[rows])
    return P, Q


@dataclass(frozen=True)
class MovieSetup:
    M: np.ndarray  # (movies x dim) movie vectors
    W_star: np.ndarray  # (second-half users x dim) least-squares user vectors
    ratings: list  # per second-half user: (movie indices, ratings 1..5)
    dim: int
    reg: float
    holdout_rmse: float


#: bump when the computation of the setup changes (old cache files are then ignored)
_SETUP_VERSION = 1


def setup_cache_path(data_path: str, split_seed: int, dims: tuple, regs: tuple, sweeps: int) -> Path:
    """Where :func:`movie_setup` keeps the setup (:func:`~rankrepro.data.arrays.derived_arrays`)."""
    return derived_path(data_path, "coactive_setup", _setup_key(split_seed, dims, regs, sweeps))


def _setup_key(split_seed: int, dims: tuple, regs: tuple, sweeps: int) -> list:
    return [_SETUP_VERSION, int(split_seed), list(dims), list(regs), int(sweeps)]


def _to_arrays(setup: MovieSetup) -> dict[str, np.ndarray]:
    sizes = np.array([m.size for m, _ in setup.ratings], dtype=np.int64)
    movies = np.concatenate([m for m, _ in setup.ratings]) if setup.ratings else np.zeros(0, np.int64)
    scores = np.concatenate([r for _, r in setup.ratings]) if setup.ratings else np.zeros(0)
    return dict(M=setup.M, W_star=setup.W_star, sizes=sizes, movies=movies, scores=scores,
                meta=np.array([setup.dim, setup.reg, setup.holdout_rmse]))


def _from_arrays(z: dict[str, np.ndarray]) -> MovieSetup:
    bounds = np.concatenate([[0], np.cumsum(z["sizes"])])
    movies, scores = z["movies"], z["scores"]
    ratings = [(movies[a:b], scores[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    dim, reg, rmse = z["meta"]
    return MovieSetup(z["M"], z["W_star"], ratings, int(dim), float(reg), float(rmse))


@functools.lru_cache(maxsize=4)
def movie_setup(data_path: str, split_seed: int, dims: tuple = (5, 10, 20), regs: tuple = (0.1, 1.0, 10.0),
                sweeps: int = 8) -> MovieSetup:
    return _from_arrays(derived_arrays(
        data_path, "coactive_setup", _setup_key(split_seed, dims, regs, sweeps),
        lambda: _to_arrays(compute_movie_setup(data_path, split_seed, dims, regs, sweeps))))


def compute_movie_setup(data_path: str, split_seed: int, dims: tuple = (5, 10, 20), regs: tuple = (0.1, 1.0, 10.0),
                        sweeps: int = 8) -> MovieSetup:
    d = load_cached(data_path)
    users, u_idx = np.unique(d["user"], return_inverse=True)
    movies, m_idx = np.unique(d["item"], return_inverse=True)
    r = d["score"].astype(float)
    rng = np.random.default_rng(np.random.SeedSequence(split_seed, spawn_key=(7,)))
    first = rng.permutation(users.size) < users.size // 2
    in1 = first[u_idx]
    u1, m1, r1 = u_idx[in1], m_idx[in1], r[in1]
    mu = r1.mean()
    hold = rng.random(u1.size) < 0.1
    best = None
    for dim in dims:
        for reg in regs:
            P, Q = _als(u1[~hold], m1[~hold], r1[~hold] - mu, users.size, movies.size, dim, reg, sweeps, rng)
            pred = mu + np.einsum("ij,ij->i", P[u1[hold]], Q[m1[hold]])
            rmse = float(np.sqrt(np.mean((np.clip(pred, 1, 5) - r1[hold]) ** 2)))
            if best is None or rmse < best[0]:
                best = (rmse, dim, reg)
    rmse, dim, reg = best
    _, Q = _als(u1, m1, r1 - mu, users.size, movies.size, dim, reg, sweeps, rng)
    # second half: each user's least-squares utility vector over the movie vectors
    second = np.flatnonzero(~first)
    order = np.argsort(u_idx, kind="stable")
    bounds = np.searchsorted(u_idx[order], np.arange(users.size + 1))
    W, per_user = [], []
    for uu in second:
        rows = order[bounds[uu]:bounds[uu + 1]]
        A, y = Q[m_idx[rows]], r[rows]
        W.append(np.linalg.solve(A.T @ A + 1e-6 * np.eye(dim), A.T @ y))
        per_user.append((m_idx[rows], r[rows]))
    return MovieSetup(Q, np.array(W), per_user, dim, reg, rmse)


def coactive_movies(split_seed: int, *, data_path: str, dims: tuple = (5, 10, 20), regs: tuple = (0.1, 1.0, 10.0),
                    sweeps: int = 8) -> MovieSetup:
    """Builder of the coactive movie protocol (see the module docstring)."""
    return movie_setup(data_path, int(split_seed), tuple(dims), tuple(regs), int(sweeps))
