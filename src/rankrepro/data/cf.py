"""Collaborative-filtering instances: predict one rater's rank from everybody else's.

Three protocols, each a data-set builder ``f(n_train, n_test, rng, *, data_path, ...)``
returning a :class:`~rankrepro.data.synthetic.Split`:

* :func:`cf_judges` (Harrington 2003, Sec. 4.2, cystic fibrosis and OHSUMED): items are
  judged query-document pairs; each round draws a different pair and one of its judges at
  random; the target is that judge's rank, the instance the other judges' values (0 where
  a judge gave none).
* :func:`cf_people` (Harrington's EachMovie protocol): people with more than ``min_ratings``
  ratings; a random target person; the first ``first`` movies they rated, split at random
  into ``n_train`` / ``n_test``; the instance of a movie is the other selected people's
  centred scores (0 for unseen).
* :func:`cf_viewer_stream` (Crammer & Singer 2005, Sec. 6): viewers with at least
  ``min_ratings`` ratings; a random target viewer whose first ``n_train`` ratings are the
  online stream; instances are the other selected viewers' centred ratings.

The rating matrix is built once per process (sparse, items x people) and each trial only
slices the rows it needs, so a trial costs O(its instances' non-zeros).
"""

from __future__ import annotations

import functools

import numpy as np
from scipy import sparse

from .arrays import load_cached
from .ratings import centre, filter_min_ratings, to_rank
from .synthetic import Split


# -------------------------------------------------------------------------------------
# judges (cystic fibrosis, OHSUMED)
# -------------------------------------------------------------------------------------
def judge_instances(scores: np.ndarray, pairs: np.ndarray, judges: np.ndarray,
                    instance_values: str = "rank") -> tuple[np.ndarray, np.ndarray]:
    """Instances and targets for the given (pair, target judge) draws.

    ``scores`` is (pairs x judges) with 0..2 scores and -1 = not judged.  The target rank is
    score + 1; the instance holds the other judges' values in judge order: their rank
    (score + 1, ``instance_values='rank'``), raw score (``'score'``) or centred score
    (score - 1 in -1..1, ``'centred'``), 0 where absent."""
    if instance_values not in INSTANCE_VALUES:
        raise ValueError(f"instance_values must be one of {INSTANCE_VALUES}, got {instance_values!r}")
    n_j = scores.shape[1]
    S = scores[pairs].astype(np.float64)
    y = S[np.arange(pairs.size), judges].astype(np.int64) + 1
    if np.any(y < 1):
        raise ValueError("a target judge has no judgment for its pair")
    shift = {"rank": 1.0, "score": 0.0, "centred": -1.0}[instance_values]
    vals = np.where(S < 0, 0.0, S + shift)
    others = np.array([[j for j in range(n_j) if j != t] for t in range(n_j)])
    X = vals[np.arange(pairs.size)[:, None], others[judges]]
    return X, y


def draw_judges(judged: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """For each row of the boolean (pairs x judges) mask, one of its True columns, uniformly."""
    counts = judged.sum(axis=1)
    k = np.floor(rng.random(judged.shape[0]) * counts).astype(np.int64)  # which judged judge
    rank_in_row = np.cumsum(judged, axis=1) - 1
    return np.argmax(judged & (rank_in_row == k[:, None]), axis=1)


INSTANCE_VALUES = ("rank", "score", "centred")
INSTANCE_NORMS = ("none", "unit")


def with_constant(X: np.ndarray, constant_feature: bool) -> np.ndarray:
    """Append a constant feature 1 (a bias for learners without thresholds, e.g. WH)."""
    return np.hstack([X, np.ones((X.shape[0], 1))]) if constant_feature else X


def normalise_rows(X: np.ndarray, instance_norm: str) -> np.ndarray:
    """``'unit'``: every instance scaled to unit Euclidean norm (an all-zero row stays zero);
    ``'none'``: as given."""
    if instance_norm not in INSTANCE_NORMS:
        raise ValueError(f"instance_norm must be one of {INSTANCE_NORMS}, got {instance_norm!r}")
    if instance_norm == "none":
        return X
    n = np.linalg.norm(X, axis=1, keepdims=True)
    return np.divide(X, n, out=np.zeros_like(X), where=n > 0)


TEST_PAIRS = ("held_out", "drawn_apart")


def cf_judges(n_train: int, n_test: int, rng: np.random.Generator, *, data_path: str,
              min_judged: int = 2, instance_values: str = "rank", constant_feature: bool = False,
              test_pairs: str = "held_out") -> Split:
    """``test_pairs``: ``held_out`` -- training and test examples are n_train + n_test different
    pairs; ``drawn_apart`` -- the training pairs are different from each other, and so are the
    test pairs, each set drawn from all pairs on its own (a test pair may also be a training
    pair, with its own target judge drawn); the training set is the same under both."""
    if test_pairs not in TEST_PAIRS:
        raise ValueError(f"test_pairs must be one of {TEST_PAIRS}, got {test_pairs!r}")
    d = load_cached(data_path)
    scores = d["scores"]
    judged = (scores >= 0).sum(axis=1)
    ok = np.flatnonzero(judged >= min_judged)
    if (n_train + n_test if test_pairs == "held_out" else max(n_train, n_test)) > ok.size:
        raise ValueError(f"cf_judges: {n_train} + {n_test} examples requested, only {ok.size} pairs have "
                         f">= {min_judged} judgments")
    pairs = rng.permutation(ok)[: n_train + n_test]  # a different pair each round
    if test_pairs == "drawn_apart":
        # the test pairs from a child stream: the training pairs and every target judge are
        # drawn as under held_out (common random numbers: only the test pairs differ)
        pairs = np.concatenate([pairs[:n_train], rng.spawn(1)[0].permutation(ok)[:n_test]])
    judges = draw_judges(scores[pairs] >= 0, rng)
    X, y = judge_instances(scores, pairs, judges, instance_values)
    X = with_constant(X, constant_feature)
    return Split(X[:n_train], y[:n_train], X[n_train:], y[n_train:], n_ranks=3)


# -------------------------------------------------------------------------------------
# people x items (EachMovie / MovieLens)
# -------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=8)
def people_matrix(data_path: str, min_ratings: int, strict: bool) -> dict:
    """The selected people's ratings: a sparse items x people matrix of centred scores and,
    per person, their items in file order with their ranks."""
    d = load_cached(data_path)
    user, item, score, scale = d["user"], d["item"], d["score"], tuple(d["scale"].tolist())
    thr = min_ratings + 1 if strict else min_ratings
    keep = filter_min_ratings(user, item, min_user=thr)
    u, it, s = user[keep], item[keep], score[keep]
    people, col = np.unique(u, return_inverse=True)
    items, row = np.unique(it, return_inverse=True)
    M = sparse.csr_matrix((centre(s, scale), (row, col)), shape=(items.size, people.size))
    M.sum_duplicates()
    order = np.argsort(col, kind="stable")  # file order within each person
    bounds = np.searchsorted(col[order], np.arange(people.size + 1))
    ranks = to_rank(s, scale)
    return {"M": M, "rows": row[order], "ranks": ranks[order], "bounds": bounds, "n_people": people.size,
            "n_ranks": len(scale)}


def person_instances(P: dict, target: int, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``n_items`` items the target rated: instances (the other people's centred
    scores, the target's own column removed) and the target's ranks."""
    lo, hi = P["bounds"][target], P["bounds"][target + 1]
    rows = P["rows"][lo:hi][:n_items]
    y = P["ranks"][lo:hi][:n_items]
    X = P["M"][rows].toarray()
    X = np.delete(X, target, axis=1)
    return X, y


def _pick_person(P: dict, rng: np.random.Generator, need: int) -> int:
    counts = np.diff(P["bounds"])
    ok = np.flatnonzero(counts >= need)
    if ok.size < 2:
        raise ValueError(f"fewer than two people with >= {need} ratings")
    return int(rng.choice(ok))


def cf_people(n_train: int, n_test: int, rng: np.random.Generator, *, data_path: str, min_ratings: int = 300,
              strict: bool = True, first: int = 300, instance_norm: str = "none") -> Split:
    P = people_matrix(data_path, min_ratings, strict)
    if n_train + n_test > first:
        raise ValueError(f"cf_people: {n_train} + {n_test} exceeds the first {first} items")
    target = _pick_person(P, rng, first)
    X, y = person_instances(P, target, first)
    X = normalise_rows(X, instance_norm)
    idx = rng.permutation(first)
    tr, te = idx[:n_train], idx[n_train:n_train + n_test]
    # the training stream keeps the person's rating order; the test set is the rest
    tr.sort()
    return Split(X[tr], y[tr], X[te], y[te], n_ranks=P["n_ranks"])


def cf_viewer_stream(n_train: int, n_test: int, rng: np.random.Generator, *, data_path: str,
                     min_ratings: int = 100, instance_norm: str = "none") -> Split:
    P = people_matrix(data_path, min_ratings, False)
    target = _pick_person(P, rng, max(min_ratings, n_train + n_test))
    X, y = person_instances(P, target, n_train + n_test)
    X = normalise_rows(X, instance_norm)
    return Split(X[:n_train], y[:n_train], X[n_train:], y[n_train:], n_ranks=P["n_ranks"])
