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
    #: one value per test query (``round`` holds the query id): for paired tests, not summarised
    per_query: bool = False


METRICS: dict[str, MetricSpec] = {
    "online_rank_loss": MetricSpec("online_rank_loss", "time-averaged rank loss (1/T) sum_t |yhat_t - y_t| "
                                   "over the training stream, predictions made before each update", True, False),
    "test_rank_loss": MetricSpec("test_rank_loss", "mean |yhat - y| of the final rule on the test set", False, True),
    # coactive learning (Shivaswamy & Joachims 2012)
    "regret": MetricSpec("regret", "average utility regret (1/T) sum_t [U(y*_t) - U(y_t)], mean over users", True,
                         False),
    "wall_seconds": MetricSpec("wall_seconds", "wall-clock time of the simulation (s)", False, False),
    "learner_seconds": MetricSpec("learner_seconds", "wall-clock time of the learner alone: presenting and updating "
                                  "or retraining, the simulated user excluded (s)", False, False),
    # collaborative ordinal regression (Yu, Yu & Tresp 2006): one value per trial
    "mae": MetricSpec("mae", "mean absolute error of the predicted ranks on each user's test items, averaged over "
                      "the users", False, False),
    "zero_one": MetricSpec("zero_one", "mean zero-one error of the predicted ranks on each user's test items, "
                           "averaged over the users", False, False),
    "fit_seconds": MetricSpec("fit_seconds", "wall-clock time of fitting all users and predicting (s)", False, False),
    "em_iterations": MetricSpec("em_iterations", "EM iterations (or likelihood-parameter updates) run", False, False),
    "ep_unconverged": MetricSpec("ep_unconverged", "EP runs stopped at the sweep limit before converging", False,
                                 False),
    # a given ranked list, evaluated exactly (Elsas et al. 2008, Sec. 3)
    "list_discordant": MetricSpec("list_discordant", "Q, the number of misranked relevant/non-relevant pairs",
                                  False, False),
    "list_ndcg": MetricSpec("list_ndcg", "NDCG of the whole list", False, False),
    "list_rr": MetricSpec("list_rr", "reciprocal rank", False, False),
    "list_ap": MetricSpec("list_ap", "average precision", False, False),
    # LETOR (Elsas et al. 2008): one trial = one fold
    "valid_ndcg@10": MetricSpec("valid_ndcg@10", "validation NDCG@10 after each training step", True, False),
    "valid_map": MetricSpec("valid_map", "validation MAP after each training step", True, False),
    "train_seconds": MetricSpec("train_seconds", "CPU training time of the fold, every step (s)", False, False),
    "selected_train_seconds": MetricSpec("selected_train_seconds",
                                         "CPU time to train the validation-selected model (s)", False, False),
    "selected_pairs_per_second": MetricSpec("selected_pairs_per_second",
                                            "pair visits per CPU second while training the selected model",
                                            False, False),
    "selected_step": MetricSpec("selected_step", "training step chosen by validation NDCG@10", False, False),
    **{f"test_{m}": MetricSpec(f"test_{m}", f"test {m.upper()} at the selected step, mean over the fold's "
                                             "test queries", False, False) for m in ("map", "ndcg@1", "ndcg@5", "ndcg@10")},
    **{f"query_{m}": MetricSpec(f"query_{m}", f"test {m.upper()} of each test query", False, False, True)
       for m in ("map", "ndcg@1", "ndcg@5", "ndcg@10")},
}

#: the metrics that measure time, not results: they differ run to run and are the only ones
#: `rankrepro verify` does not compare bit for bit (the one list of them)
TIMING_METRICS = frozenset({"wall_seconds", "learner_seconds", "fit_seconds", "train_seconds",
                            "selected_train_seconds", "selected_pairs_per_second"})


def rank_loss(y_pred, y_true) -> float:
    y_pred = np.asarray(y_pred)
    y_true = np.asarray(y_true)
    if y_pred.shape != y_true.shape:
        raise ValueError(f"rank_loss: shapes differ {y_pred.shape} vs {y_true.shape}")
    if y_pred.size == 0:
        raise ValueError("rank_loss: empty input")
    # real-valued predictions (the unrounded vote of OAP-Bagg / OAP-VP / voted PRank) are
    # scored as they are: |H(x) - y|; integer ranks give the same value either way
    return float(np.mean(np.abs(y_pred.astype(np.float64) - y_true.astype(np.float64))))


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


# -------------------------------------------------------------------------------------
# ranked-list metrics (Elsas et al. 2008; LETOR's evaluation conventions)
# -------------------------------------------------------------------------------------
# Conventions, as LETOR's evaluation script computes them and as they reproduce the
# worked example of Elsas et al. (2008), Sec. 3:
#   * a list is the labels of the documents in ranked order (best first); labels are graded
#     0, 1, 2, ...; for the binary measures (AP, RR, P@k, bpref, RankEff) "relevant" means
#     label >= 1;
#   * NDCG@k: gain 2^label - 1; discount 1 at rank 1 and 1/log2(r) at rank r >= 2
#     (Jarvelin & Kekalainen); normalised by the DCG of the ideal ordering of the same
#     query's labels; k beyond the list length uses the whole list;
#   * a query without relevant documents scores 0 on every measure (LETOR's choice; it is
#     counted in the mean over queries).
def _discounts(n: int) -> np.ndarray:
    r = np.arange(1, n + 1, dtype=float)
    d = np.ones(n)
    d[1:] = 1.0 / np.log2(r[1:])
    return d


def dcg_at(labels, k: int | None = None) -> float:
    g = 2.0 ** np.asarray(labels, dtype=float) - 1.0
    n = g.size if k is None else min(k, g.size)
    return float(np.sum(g[:n] * _discounts(n)))


def ndcg_at(labels, k: int | None = None) -> float:
    labels = np.asarray(labels)
    ideal = dcg_at(np.sort(labels)[::-1], k)
    return 0.0 if ideal == 0 else dcg_at(labels, k) / ideal


def average_precision(labels) -> float:
    rel = np.asarray(labels) >= 1
    if not rel.any():
        return 0.0
    hits = np.cumsum(rel)
    ranks = np.flatnonzero(rel) + 1
    return float(np.mean(hits[rel] / ranks))


def reciprocal_rank(labels) -> float:
    rel = np.flatnonzero(np.asarray(labels) >= 1)
    return 0.0 if rel.size == 0 else 1.0 / (rel[0] + 1)


def precision_at(labels, k: int) -> float:
    rel = np.asarray(labels) >= 1
    return float(rel[:k].sum() / k)


def _nonrel_above(labels) -> tuple[int, int, np.ndarray]:
    """(R, N, for each relevant document the number of non-relevant ones ranked above it)."""
    rel = np.asarray(labels) >= 1
    return int(rel.sum()), int((~rel).sum()), np.cumsum(~rel)[rel]


def bpref(labels) -> float:
    """Buckley & Voorhees (2004) as Elsas et al. write it: for each relevant document, one
    minus the fraction of the first min(N, R) non-relevant documents ranked above it."""
    R, N, above = _nonrel_above(labels)
    if R == 0 or N == 0:
        return float(R > 0)
    m = min(N, R)
    return float(np.mean(1.0 - np.minimum(above, m) / m))


def rank_eff(labels) -> float:
    """RankEff (Ahlgren & Gronqvist 2006): 1 - (discordant pairs) / (N R)."""
    R, N, above = _nonrel_above(labels)
    if R == 0 or N == 0:
        return float(R > 0)
    return float(np.mean(1.0 - above / N))


def discordant_pairs(labels) -> int:
    """Q: relevant/non-relevant pairs in the wrong order."""
    return int(_nonrel_above(labels)[2].sum())


def ranked_labels(scores, labels) -> np.ndarray:
    """Labels in the order of decreasing score; ties broken by the original order (stable),
    so a constant scorer keeps the file order, as LETOR's tools do."""
    order = np.argsort(-np.asarray(scores, dtype=float), kind="stable")
    return np.asarray(labels)[order]


LIST_METRICS = {
    "map": average_precision,
    "rr": reciprocal_rank,
    "bpref": bpref,
    "rank_eff": rank_eff,
    **{f"ndcg@{k}": (lambda k: lambda lab: ndcg_at(lab, k))(k) for k in (1, 3, 5, 10)},
    **{f"p@{k}": (lambda k: lambda lab: precision_at(lab, k))(k) for k in (1, 3, 5, 10)},
}


def query_groups(qid) -> list[np.ndarray]:
    """Row indices of each query, queries in increasing id order, rows in file order."""
    qid = np.asarray(qid)
    order = np.argsort(qid, kind="stable")
    return np.split(order, np.flatnonzero(np.diff(qid[order])) + 1)


def per_query(scores, labels, qid, metrics=("map", "ndcg@1", "ndcg@5", "ndcg@10")) -> dict[str, np.ndarray]:
    """Each metric for each query (queries in increasing qid order)."""
    scores, labels = np.asarray(scores), np.asarray(labels)
    out = {m: [] for m in metrics}
    for idx in query_groups(qid):
        ranked = ranked_labels(scores[idx], labels[idx])
        for m in metrics:
            out[m].append(LIST_METRICS[m](ranked))
    return {m: np.array(v) for m, v in out.items()}
