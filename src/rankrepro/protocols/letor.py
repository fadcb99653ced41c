"""The LETOR protocol of Elsas et al. (2008): one trial is one of the five folds.

Train on the fold's training part, step by step (perceptron iterations, boosting rounds,
or values of C); after each step record validation NDCG@10 and MAP (the curves of Fig. 1);
pick the step with the best validation NDCG@10 (the first, on ties); report the test
metrics of that step, averaged over the fold's test queries, and each test query's value
(for the paired significance tests over queries).  The training time excludes the
protocol's own evaluation.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..algorithms.rankers import RANKERS
from ..data.builders import BUILDERS
from ..metrics import per_query
from .base import Protocol, Spec

TEST_METRICS = ("map", "ndcg@1", "ndcg@5", "ndcg@10")


@dataclass(frozen=True)
class LetorSpec(Spec):
    builder: str
    fold: int
    metrics: tuple[str, ...]
    data_path: str
    algo_seed: np.random.SeedSequence = field(hash=False)
    #: stop after this many steps (a smoke-scale cap); None runs the ranker's own schedule
    max_steps: int | None = None


def letor_trial(spec) -> list[tuple[str, int | None, float]]:
    fold = BUILDERS[spec.builder](spec.fold, data_path=spec.data_path)
    cls = RANKERS[spec.estimator]
    params = dict(spec.params)
    if "seed" in cls._param_names():
        params["seed"] = spec.algo_seed
    if spec.max_steps is not None and "max_pass" in cls._param_names():
        # a scale's step cap also caps the passes of a solver that iterates within a step (the
        # Ranking SVM's dual coordinate descent: ~100 passes at SVMlight's default C)
        params["max_pass"] = min(int(params.get("max_pass", cls().max_pass)), spec.max_steps)
    if spec.max_steps is not None and "n_rounds" in cls._param_names():
        # and the rounds of a booster evaluated every tenth round (LambdaMART: the steps it
        # yields are rounds 10, 20, ...): the steps kept need that many rounds, not the whole
        # schedule trained first (its first rounds are the same trees either way)
        params["n_rounds"] = min(int(params.get("n_rounds", cls().n_rounds)), 10 * spec.max_steps)
    ranker = cls(**params)
    evals = [(fold.valid.X, fold.valid.y, fold.valid.qid), (fold.test.X, fold.test.y, fold.test.qid)]
    rows: list[tuple[str, int | None, float]] = []
    best, best_val, best_step, train_s = None, -np.inf, None, 0.0
    best_cost = (None, None)  # CPU seconds and pair visits the selected step took to train
    it = ranker.iterate(fold.train.X, fold.train.y, fold.train.qid, evals)
    step_i = 0
    while True:
        t0 = time.perf_counter()
        try:
            step, (s_val, s_test) = next(it)
        except StopIteration:
            break
        train_s += time.perf_counter() - t0
        step_i += 1
        v = per_query(s_val, fold.valid.y, fold.valid.qid, ("ndcg@10", "map"))
        nd, mp = float(v["ndcg@10"].mean()), float(v["map"].mean())
        rows += [("valid_ndcg@10", step_i, nd), ("valid_map", step_i, mp)]
        if nd > best_val:
            best_val, best, best_step = nd, s_test, step
            best_cost = (getattr(ranker, "step_seconds_", None), getattr(ranker, "step_pairs_", None))
        if spec.max_steps is not None and step_i >= spec.max_steps:
            break
    q = per_query(best, fold.test.y, fold.test.qid, TEST_METRICS)
    qids = np.unique(fold.test.qid)
    for m in TEST_METRICS:
        if f"test_{m}" in spec.metrics:
            rows.append((f"test_{m}", None, float(q[m].mean())))
            rows += [(f"query_{m}", int(qq), float(v)) for qq, v in zip(qids, q[m])]
    # the ranker's own account of its learning time, when it keeps one (evaluation excluded)
    rows.append(("train_seconds", None, float(getattr(ranker, "train_seconds_", train_s))))
    rows.append(("selected_step", None, float(best_step)))
    if best_cost[0] is not None:
        # the CPU time it takes to train the selected model (the perceptron up to the selected
        # iteration; the Ranking SVM at the selected C alone), and its pair visits per second
        rows.append(("selected_train_seconds", None, float(best_cost[0])))
        rows.append(("selected_pairs_per_second", None, float(best_cost[1]) / max(float(best_cost[0]), 1e-9)))
    return rows


class Letor(Protocol):
    name = "letor"
    trials_extend = True  # trial i is fold i + 1
    estimators = RANKERS
    uses = frozenset()  # the folds fix the sizes
    unit = "folds"

    def validate(self, cfg, require) -> None:
        super().validate(cfg, require)
        n = cfg.experiment.n_trials
        require("experiment.n_trials", n <= 5, f"LETOR has 5 folds, got {n}")

    def spec(self, exp, cell, trial, data_path, data_seed, algo_seed) -> LetorSpec:
        return LetorSpec(estimator=cell.estimator, params=dict(cell.params), builder=exp.cfg.dataset.builder,
                         fold=trial + 1, metrics=tuple(exp.cfg.experiment.metrics), data_path=data_path,
                         algo_seed=algo_seed, max_steps=exp.max_steps)

    def run(self, spec: LetorSpec):
        return letor_trial(spec)

    def size_text(self, exp) -> str:
        return f"{exp.n_trials} folds"


PROTOCOL = Letor()
