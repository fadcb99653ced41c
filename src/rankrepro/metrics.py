"""Metrics and their conventions.

Rank loss (Crammer & Singer 2005; Harrington 2003): |yhat - y|, the number of thresholds
between the predicted and the true rank.  The *online* (time-averaged) rank loss after T
rounds is (1/T) sum_{t<=T} |yhat_t - y_t|, where yhat_t is predicted before round t's
update; the *test* rank loss is the mean |yhat - y| of the final rule on held-out data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MetricSpec:
    name: str
    description: str
    #: kept at every checkpoint round (a curve) rather than once per trial
    curve: bool
    needs_test: bool


METRICS: dict[str, MetricSpec] = {
    "online_rank_loss": MetricSpec("online_rank_loss", "time-averaged rank loss (1/T) sum_t |yhat_t - y_t| "
                                   "over the training stream, predictions made before each update", True, False),
    "test_rank_loss": MetricSpec("test_rank_loss", "mean |yhat - y| of the final rule on the test set", False, True),
}


def rank_loss(y_pred, y_true) -> float:
    y_pred = np.asarray(y_pred)
    y_true = np.asarray(y_true)
    if y_pred.shape != y_true.shape:
        raise ValueError(f"rank_loss: shapes differ {y_pred.shape} vs {y_true.shape}")
    if y_pred.size == 0:
        raise ValueError("rank_loss: empty input")
    return float(np.mean(np.abs(y_pred.astype(np.int64) - y_true.astype(np.int64))))


def online_rank_loss_curve(y_pred, y_true, rounds) -> np.ndarray:
    """(1/T) sum_{t<=T} |yhat_t - y_t| at each T in ``rounds`` (1-based round numbers)."""
    err = np.abs(np.asarray(y_pred, dtype=np.int64) - np.asarray(y_true, dtype=np.int64))
    cum = np.cumsum(err)
    rounds = np.asarray(rounds, dtype=np.int64)
    if rounds.size and (rounds.min() < 1 or rounds.max() > err.size):
        raise ValueError(f"online_rank_loss_curve: rounds must lie in 1..{err.size}")
    return cum[rounds - 1] / rounds


def checkpoints(n_rounds: int, n_points: int) -> np.ndarray:
    """About ``n_points`` log-spaced rounds in 1..n_rounds, always including both ends."""
    if n_rounds < 1:
        raise ValueError("checkpoints: n_rounds must be >= 1")
    pts = np.unique(np.round(np.geomspace(1, n_rounds, num=max(2, n_points))).astype(np.int64))
    return np.unique(np.concatenate([[1], pts, [n_rounds]]))
