"""Rating-matrix operations the collaborative-filtering protocols need.

Centring makes "unseen" a neutral 0: EachMovie's scores 0, 0.2, ..., 1 minus 0.5 give
-0.5..0.5 (Harrington 2003; Crammer & Singer 2005); the MovieLens analogue maps 1..5 to
(score - 3) / 4, the same -0.5..0.5 range.  Ranks are 1..k in score order.
"""

from __future__ import annotations

import numpy as np


def filter_min_ratings(user: np.ndarray, item: np.ndarray, min_user: int = 0, min_item: int = 0,
                       iterate: bool = False) -> np.ndarray:
    """Boolean mask of the ratings kept: items with >= min_item ratings, then users with >=
    min_user ratings among those (repeated until stable when ``iterate``)."""
    keep = np.ones(user.size, dtype=bool)
    while True:
        before = keep.sum()
        if min_item:
            _, inv, cnt = np.unique(item[keep], return_inverse=True, return_counts=True)
            k = np.zeros(user.size, dtype=bool)
            k[np.flatnonzero(keep)[cnt[inv] >= min_item]] = True
            keep &= k
        if min_user:
            _, inv, cnt = np.unique(user[keep], return_inverse=True, return_counts=True)
            k = np.zeros(user.size, dtype=bool)
            k[np.flatnonzero(keep)[cnt[inv] >= min_user]] = True
            keep &= k
        if not iterate or keep.sum() == before:
            return keep


def centre(score: np.ndarray, scale) -> np.ndarray:
    """Map a rating scale linearly onto [-0.5, 0.5] (EachMovie: score - 0.5)."""
    lo, hi = float(min(scale)), float(max(scale))
    return (np.asarray(score, dtype=float) - lo) / (hi - lo) - 0.5


def to_rank(score: np.ndarray, scale) -> np.ndarray:
    """Rank 1..k of each score on its scale."""
    levels = np.asarray(sorted(scale), dtype=float)
    idx = np.searchsorted(levels, np.asarray(score, dtype=float) - 1e-9)
    if np.any(idx >= levels.size) or np.any(np.abs(levels[np.minimum(idx, levels.size - 1)] - score) > 1e-6):
        raise ValueError("score not on the scale")
    return idx + 1
