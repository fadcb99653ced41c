"""The synthetic ordinal data of Herbrich, Graepel & Obermayer (2000).

Used by Harrington (2003, Sec. 4.1) and Crammer & Singer (2005, Sec. 6): x uniform on the
unit square; rank y = max {r : 10 (x1 - 0.5)(x2 - 0.5) + n > c_r} with
c = (-inf, -1, -0.1, 0.25, 1) and n ~ N(0, 0.125^2), so y in 1..5.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

HGO_THRESHOLDS = (-1.0, -0.1, 0.25, 1.0)


def hgo_score(X: np.ndarray, scale: float = 10.0) -> np.ndarray:
    return scale * (X[:, 0] - 0.5) * (X[:, 1] - 0.5)


def hgo_ranks(score: np.ndarray, thresholds=HGO_THRESHOLDS) -> np.ndarray:
    """1 + the number of thresholds c_2..c_k that the noisy score exceeds strictly."""
    c = np.asarray(thresholds, dtype=float)
    return 1 + (score[:, None] > c[None, :]).sum(axis=1).astype(np.int64)


def hgo_sample(n: int, rng: np.random.Generator, *, noise_sd: float = 0.125, scale: float = 10.0,
               thresholds=HGO_THRESHOLDS) -> tuple[np.ndarray, np.ndarray]:
    """n instances on [0,1]^2 and their ranks 1..len(thresholds)+1."""
    if n < 0:
        raise ValueError(f"hgo_sample: n must be >= 0, got {n}")
    X = rng.random((n, 2))
    noise = rng.normal(0.0, noise_sd, size=n) if noise_sd > 0 else np.zeros(n)
    return X, hgo_ranks(hgo_score(X, scale) + noise, thresholds)


@dataclass(frozen=True)
class Split:
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    n_ranks: int


def synthetic_hgo(n_train: int, n_test: int, rng: np.random.Generator, *, noise_sd: float = 0.125,
                  scale: float = 10.0, thresholds=HGO_THRESHOLDS) -> Split:
    """A training stream and an independent test set drawn from the same generator."""
    Xtr, ytr = hgo_sample(n_train, rng, noise_sd=noise_sd, scale=scale, thresholds=thresholds)
    Xte, yte = hgo_sample(n_test, rng, noise_sd=noise_sd, scale=scale, thresholds=thresholds)
    return Split(Xtr, ytr, Xte, yte, n_ranks=len(thresholds) + 1)
