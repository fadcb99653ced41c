"""The collaborative ordinal regression data of Yu, Yu & Tresp (2006), Sec. 4.

From a ratings data set: keep the items rated at least ``min_item`` times, then the users
with at least ``min_user`` ratings among them; ``n_tasks`` users are the tasks (their ranks
are the targets, 0 = missing), every other kept user is a feature of the items.  Which users
are tasks (``tasks``): ``most`` -- the ``n_tasks`` users with the most ratings (the paper);
``random`` -- ``n_tasks`` users drawn at random (``task_seed``) among those with at least
``task_min_ratings`` ratings.  The prior kernel is the correlation kernel of Basilico &
Hofmann (2004): each feature user's ratings minus their mean (missing values filled by the
mean, so 0 after centring), then the cosine between two items' vectors (``kernel: cosine``);
``kernel: zscore`` also divides each feature user's centred ratings by their standard
deviation before the cosine (every feature user weighs the same).

Built once per parameter set (a trial only draws the training items): the kernel and the
targets are kept beside the processed data (``collab_gp-<key>.npz``, about 50 MB for
MovieLens 1M) and read back bit for bit by every later job, instead of being rebuilt by each
of the ~90 cell jobs of the experiment (about a second each).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from ..algorithms.feature_maps import cosine_kernel
from .arrays import derived_arrays, load_cached
from .ratings import filter_min_ratings, to_rank


@dataclass(frozen=True)
class CollabData:
    K: np.ndarray          # items x items prior kernel (unit diagonal)
    Y: np.ndarray          # tasks x items ranks 1..n_ranks, 0 = missing
    n_ranks: int
    n_users: int           # kept users (tasks + features)
    n_ratings: int         # kept ratings

    @property
    def n_items(self) -> int:
        return self.K.shape[0]


#: bump when the construction below changes (the kept files are then rebuilt)
_VERSION = 1


@functools.lru_cache(maxsize=4)
def collab_gp(*, data_path: str, min_item: int = 50, min_user: int = 20, n_tasks: int = 100, tasks: str = "most",
              task_min_ratings: int = 100, task_seed: int = 0, kernel: str = "cosine") -> CollabData:
    if tasks not in ("most", "random"):
        raise ValueError(f"dataset.params.tasks={tasks!r}: must be 'most' or 'random'")
    if kernel not in ("cosine", "zscore"):
        raise ValueError(f"dataset.params.kernel={kernel!r}: must be 'cosine' or 'zscore'")
    params = dict(min_item=int(min_item), min_user=int(min_user), n_tasks=int(n_tasks), tasks=tasks,
                  task_min_ratings=int(task_min_ratings), task_seed=int(task_seed), kernel=kernel)
    z = derived_arrays(data_path, "collab_gp", [_VERSION, params], lambda: _build(data_path, **params))
    n_ranks, n_users, n_ratings = (int(v) for v in z["counts"])
    return CollabData(z["K"], z["Y"], n_ranks, n_users, n_ratings)


def _build(data_path: str, *, min_item: int, min_user: int, n_tasks: int, tasks: str, task_min_ratings: int,
           task_seed: int, kernel: str) -> dict[str, np.ndarray]:
    d = load_cached(data_path)
    user, item, score = d["user"], d["item"], d["score"]
    keep = filter_min_ratings(user, item, min_user=min_user, min_item=min_item)
    user, item, score = user[keep], item[keep], score[keep]
    _, u = np.unique(user, return_inverse=True)
    _, i = np.unique(item, return_inverse=True)
    n_u, n_i = int(u.max()) + 1, int(i.max()) + 1
    counts = np.bincount(u, minlength=n_u)
    if tasks == "most":  # the n_tasks users with most ratings (ties: lower id first), in id order
        tasks = np.sort(np.lexsort((np.arange(n_u), -counts))[:n_tasks])
    else:
        pool = np.flatnonzero(counts >= task_min_ratings)
        if pool.size < n_tasks:
            raise ValueError(f"dataset.params.task_min_ratings={task_min_ratings}: only {pool.size} users qualify, "
                             f"n_tasks={n_tasks} needed")
        tasks = np.sort(np.random.default_rng(task_seed).choice(pool, size=n_tasks, replace=False))
    is_task = np.zeros(n_u, dtype=bool)
    is_task[tasks] = True
    rank = to_rank(score, d["scale"])
    Y = np.zeros((tasks.size, n_i), dtype=np.int64)
    row_of = np.full(n_u, -1)
    row_of[tasks] = np.arange(tasks.size)
    t = is_task[u]
    Y[row_of[u[t]], i[t]] = rank[t]
    f = ~t
    fu, fi, fs = u[f], i[f], score[f].astype(float)
    means = np.bincount(fu, weights=fs, minlength=n_u) / np.maximum(np.bincount(fu, minlength=n_u), 1)
    vals = fs - means[fu]
    if kernel == "zscore":
        sd = np.sqrt(np.bincount(fu, weights=vals * vals, minlength=n_u) / np.maximum(np.bincount(fu, minlength=n_u), 1))
        vals = vals / np.where(sd[fu] > 0, sd[fu], 1.0)
    X = sparse.csr_matrix((vals, (fi, fu)), shape=(n_i, n_u))
    K = cosine_kernel(X)
    return {"K": K, "Y": Y, "counts": np.array([len(d["scale"]), n_u, int(keep.sum())], dtype=np.int64)}
