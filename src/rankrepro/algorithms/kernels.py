"""Explicit feature maps of the kernels the papers use.

The degree-2 non-homogeneous polynomial kernel K(x, x') = ((x.x') + 1)^2 of Herbrich et
al. (2000), used by Harrington (2003) and Crammer & Singer (2005) on the synthetic data,
equals phi(x).phi(x') for phi(x) = (1, sqrt(2) x_i, x_i^2, sqrt(2) x_i x_j (i < j)).
Running the linear learners on phi(x) is exactly the kernelised algorithm, at a cost
independent of the number of rounds.
"""

from __future__ import annotations

import numpy as np


def poly2_features(X) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"poly2_features: X must be 2-D, got shape {X.shape}")
    n, d = X.shape
    iu, ju = np.triu_indices(d, k=1)
    return np.hstack([
        np.ones((n, 1)),
        np.sqrt(2.0) * X,
        X ** 2,
        np.sqrt(2.0) * X[:, iu] * X[:, ju],
    ])


def poly2_kernel(X, Z) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    Z = np.asarray(Z, dtype=np.float64)
    return (X @ Z.T + 1.0) ** 2


FEATURE_MAPS = {"identity": lambda X: np.asarray(X, dtype=np.float64), "poly2": poly2_features}
