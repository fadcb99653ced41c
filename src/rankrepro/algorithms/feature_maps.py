"""Explicit feature maps of the kernels the papers use, and the item kernel of Yu et al.

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


def cosine_kernel(V) -> np.ndarray:
    """The cosine between the rows of ``V`` (dense or scipy-sparse), 0 where a row is zero,
    with a unit diagonal: the prior kernel of Yu, Yu & Tresp (2006) on items described by
    feature users' centred ratings (Basilico & Hofmann's correlation kernel).

    >>> cosine_kernel(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])).round(3).tolist()
    [[1.0, 0.707, 0.0], [0.707, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    G = V @ V.T
    G = G.toarray() if hasattr(G, "toarray") else np.asarray(G, dtype=np.float64)
    norm = np.sqrt(np.diag(G))
    with np.errstate(invalid="ignore", divide="ignore"):
        K = np.where(np.outer(norm, norm) > 0, G / np.outer(norm, norm), 0.0)
    K[np.diag_indices_from(K)] = 1.0
    return K


FEATURE_MAPS = {"identity": lambda X: np.asarray(X, dtype=np.float64), "poly2": poly2_features}
