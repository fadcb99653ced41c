"""The coactive preference perceptron (Shivaswamy & Joachims 2012) as a LETOR ranker: trained
from the simulated user feedback of the paper's Sec. 5.1 on a training set of queries, then
scored on test queries like the rankers of :mod:`.rankers` (the arena's LETOR family).

Each step of :meth:`CoactiveRanker.iterate` is one pass over the training queries in a fresh
random order, one round per query, exactly the rounds of :func:`.coactive.ranking_rounds`
(the code of the paper's own experiments, not a copy): the learner presents the query's
documents sorted by its current weights (ties at random); the simulated user returns an
improved top five; the weights move by phi(feedback) - phi(presented), phi the joint feature
map of eq. 12 (the documents' features weighted 1/log(1+i) over the top five positions,
:class:`.coactive.PreferencePerceptron`, Algorithm 1).  After each pass the current weights
score the evaluation sets, so the LETOR protocol picks the pass by validation NDCG@10 as it
picks the perceptrons' iterations.

The simulated user (``feedback``):

* ``strict`` (Sec. 5.1.1): the user's utility is w*, the least-squares fit of the training
  set's relevance labels on its features (the paper fits it on the whole data set; here only
  the training set's labels are seen); the user goes down the presented list until the best
  five documents by that utility among those seen, put on top, are strictly
  ``alpha``-informative.  ``alpha = 1`` (strong feedback) returns the ideal top five.
* ``noisy`` (Sec. 5.1.2): among the first ten presented documents, the five with the highest
  relevance labels go on top.

It never sees a label of a document it is not shown, nor the order beyond the top five: the
supervision is weaker than the pairwise preferences of every other ranker of the family.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(200, 4)); qid = np.repeat(np.arange(20), 10)
>>> y = np.digitize(X @ [1.0, 0.5, 0.0, 0.0], [-0.5, 0.5])
>>> r = CoactiveRanker(n_passes=5, seed=0).fit(X, y, qid=qid)
>>> bool(r.score(X, y, qid=qid) > 0.9)
True
"""

from __future__ import annotations

import time

import numpy as np

from .base import OneOf, Range
from .coactive import PreferencePerceptron, least_squares_w, ranking_rounds
from .rankers import BatchRanker


class CoactiveRanker(BatchRanker):
    """The preference perceptron trained by simulated feedback over ``n_passes`` passes of the
    training queries (``feedback``, ``alpha``: the simulated user, as in
    :class:`.coactive.CoactiveLearner`).  ``regret_`` holds each pass's mean utility regret
    U(y*) - U(y) of the presented rankings (U: the user's utility, the least-squares fit of the
    labels, over the top five), ``coef_`` the weights of the last pass."""

    name = "coactive_perceptron"
    _constraints = {"n_passes": Range(int, 1, None), "feedback": OneOf(("strict", "noisy")),
                    "alpha": Range(float, 0.0, 1.0, left_open=True)}

    def __init__(self, *, feedback: str = "strict", alpha: float = 1.0, n_passes: int = 100, seed=None):
        self.feedback, self.alpha, self.n_passes, self.seed = feedback, alpha, n_passes, seed

    def iterate(self, X, y, qid, evals):
        self._validate_params()
        t0 = time.process_time()
        X = np.asarray(X, dtype=np.float64)
        order = np.argsort(qid, kind="stable")
        X, y, qid = X[order], np.asarray(y)[order], np.asarray(qid)[order]
        bounds = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1], True])
        starts, ends = bounds[:-1], bounds[1:]
        # the user's utility (the strict user's; the regret of both users is measured by it)
        u_all = X @ least_squares_w(X, y)
        rng = np.random.default_rng(self.seed)
        learner = PreferencePerceptron(n_features=X.shape[1])
        #: CPU time spent learning (the rounds), without the per-pass evaluation
        self.train_seconds_ = time.process_time() - t0
        self.regret_ = []
        for t in range(1, self.n_passes + 1):
            t0 = time.process_time()
            regret = ranking_rounds(self, learner, None, X, y, u_all, starts, ends, rng.permutation(starts.size), rng)
            self.train_seconds_ += time.process_time() - t0
            self.regret_.append(float(regret.mean()))
            self.coef_ = learner.W[0].copy()
            yield t, [np.asarray(Xe, dtype=np.float64) @ self.coef_ for Xe, _, _ in evals]

    def _snapshot(self):
        return self.coef_.copy()

    def _score_with(self, model, X, qid):
        return np.asarray(X, dtype=np.float64) @ model
