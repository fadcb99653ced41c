"""The ordinal-regression metrics of ORCA-style benchmarks (Gutierrez et al. 2016): the
macro-averaged mean absolute error (AMAE, Baccianella, Esuli & Sebastiani 2009) and Cohen's
kappa with quadratic weights (QWK).

* **AMAE**: the mean absolute error within each true rank, averaged over the ranks present
  in the truth: sum_j (1/n_j) sum_{i: y_i = j} |yhat_i - y_i|, divided by the number of ranks
  present.  A learner that predicts the commonest rank everywhere scores well on MAE and
  badly on AMAE.  Predictions are scored as they are, like the rank loss
  (:func:`rankrepro.metrics.rank_loss`): the unrounded mean rank of voted PRank and the OAP
  ensembles counts its distance from the truth.
* **QWK**: 1 - sum_ij w_ij O_ij / sum_ij w_ij E_ij with w_ij = (i - j)^2 / (K - 1)^2, O the
  confusion counts of true rank i against predicted rank j (1..K) and E = outer(row sums,
  column sums) / n, the counts expected by chance.  1 is perfect agreement, 0 agreement by
  chance.  Kappa needs a predicted *rank*: a real-valued prediction (a mean rank) is
  rounded to the nearest rank, halves up, and clipped to 1..K.  Undefined (NaN) when the
  truth and the predictions are one and the same single rank (0/0).

Registered into :data:`rankrepro.metrics.METRICS` from here, not listed in
:mod:`rankrepro.metrics`: that module is in every cell's code fingerprint, this one only in
the fingerprints of the protocols that compute these metrics (the online and collaborative
GP protocols).
"""

from __future__ import annotations

import numpy as np

from .metrics import METRICS, MetricSpec


def _pair(y_pred, y_true, name: str) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(y_pred, dtype=np.float64)
    t = np.asarray(y_true)
    if p.shape != t.shape or p.ndim != 1:
        raise ValueError(f"{name}: shapes differ or are not flat: {p.shape} vs {t.shape}")
    if p.size == 0:
        raise ValueError(f"{name}: empty input")
    return p, t.astype(np.int64)


def as_ranks(y_pred, n_ranks: int) -> np.ndarray:
    """Predictions as ranks 1..n_ranks: the nearest rank, halves up (2.5 -> 3), clipped."""
    p = np.floor(np.asarray(y_pred, dtype=np.float64) + 0.5)
    return np.clip(p, 1, n_ranks).astype(np.int64)


def amae(y_pred, y_true) -> float:
    """Macro-averaged mean absolute error over the true ranks present."""
    p, t = _pair(y_pred, y_true, "amae")
    err = np.abs(p - t)
    ranks, inverse, counts = np.unique(t, return_inverse=True, return_counts=True)
    per_rank = np.bincount(inverse, weights=err, minlength=ranks.size) / counts
    return float(np.mean(per_rank))


def qwk(y_pred, y_true, n_ranks: int) -> float:
    """Quadratic weighted kappa of the predicted against the true ranks 1..n_ranks."""
    p, t = _pair(y_pred, y_true, "qwk")
    k = int(n_ranks)
    if k < 2:
        raise ValueError(f"qwk: needs at least 2 ranks, got {k}")
    if t.min() < 1 or t.max() > k:
        raise ValueError(f"qwk: true ranks must lie in 1..{k}, got {t.min()}..{t.max()}")
    r = as_ranks(p, k)
    observed = np.bincount((t - 1) * k + (r - 1), minlength=k * k).reshape(k, k).astype(np.float64)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / t.size
    i = np.arange(k, dtype=np.float64)
    w = (i[:, None] - i[None, :]) ** 2 / (k - 1) ** 2
    den = float(np.sum(w * expected))
    if den == 0.0:
        return float("nan")
    return 1.0 - float(np.sum(w * observed)) / den


ORDINAL_METRICS = {
    # the online protocol (Harrington 2003; Crammer & Singer 2005): over the training stream
    # (predictions made before each update, like the online rank loss) and on the test set
    "online_amae": MetricSpec("online_amae", "macro-averaged absolute error (AMAE) of the predictions made before "
                              "each update, over the whole training stream", False, False),
    "online_qwk": MetricSpec("online_qwk", "quadratic weighted kappa of the predictions made before each update, "
                             "over the whole training stream (higher is better)", False, False),
    "test_amae": MetricSpec("test_amae", "macro-averaged absolute error (AMAE) of the final rule on the test set",
                            False, True),
    "test_qwk": MetricSpec("test_qwk", "quadratic weighted kappa of the final rule on the test set, mean ranks "
                           "rounded to the nearest rank (higher is better)", False, True),
    # the collaborative GP protocol (Yu, Yu & Tresp 2006): over all task users' test items of
    # a trial pooled (one user's test items may hold a single rank, where kappa is undefined)
    "amae": MetricSpec("amae", "macro-averaged absolute error (AMAE) over all task users' test items pooled",
                       False, False),
    "qwk": MetricSpec("qwk", "quadratic weighted kappa over all task users' test items pooled (higher is better)",
                      False, False),
}

#: the metrics where a higher value is better (every other metric of a learner: lower)
HIGHER_IS_BETTER = frozenset({"online_qwk", "test_qwk", "qwk"})

for _k, _v in ORDINAL_METRICS.items():
    METRICS.setdefault(_k, _v)
