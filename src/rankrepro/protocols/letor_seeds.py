"""The LETOR protocol replicated over the learner's own randomness: one trial is one seed.

Elsas et al. (2008) measure each learner once on the five fixed LETOR folds and print the
five-fold mean.  The folds are not a source of replication noise (the paper's numbers were
measured on the same folds); what varies from one run of the paper's protocol to another is
the learner's own randomness: the order in which a perceptron visits the training pairs, the
committee's draws.  So here trial i is one draw of that randomness (seed i) run over ALL
five folds, exactly as :mod:`.letor` runs one fold, and the trial's value of a scalar metric
is the mean over the five folds: a cell's interval is then over seeds of the five-fold mean.

Rows of one trial (seed):

* each scalar metric of :func:`.letor.letor_trial` (``test_map``, ``selected_step``,
  ``train_seconds``, ...): the mean over the five folds;
* ``fold_<metric>`` (round = the fold, 1..5): the fold's own value, so that the by-fold view
  stays beside the five-fold mean;
* the curves (``valid_ndcg@10``, ``valid_map``): at each step the mean over the folds (the
  steps every fold reached);
* ``query_<metric>`` (round = the query id): every test query of the five folds (the folds'
  test parts partition the queries, so a query id occurs once per seed).

A learner that is deterministic given the data (``algorithms.<key>.deterministic: true``:
RankSVM, RankBoost, LambdaMART) runs one trial only (:meth:`LetorSeeds.trials_of`); its
record's ``n`` is 1.  Fold f of seed i draws the learner's randomness from the trial's
algorithm seed extended by f (``SeedSequence(entropy, spawn_key=(*key, f))``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..algorithms.rankers import RANKERS
from ..fold_metrics import FOLD_BASES  # noqa: F401 - registers the fold_<metric> names
from .base import Protocol, Spec
from .letor import LetorSpec, letor_trial

#: the five fixed LETOR folds
FOLDS = (1, 2, 3, 4, 5)


@dataclass(frozen=True)
class LetorSeedsSpec(Spec):
    builder: str
    metrics: tuple[str, ...]
    data_path: str
    algo_seed: np.random.SeedSequence = field(hash=False)
    max_steps: int | None = None
    folds: tuple[int, ...] = FOLDS


def fold_seed(algo_seed: np.random.SeedSequence, fold: int) -> np.random.SeedSequence:
    """The learner's randomness on fold ``fold`` of one trial (seed)."""
    return np.random.SeedSequence(algo_seed.entropy, spawn_key=(*algo_seed.spawn_key, int(fold)))


def combine_folds(by_fold: dict[int, list[tuple[str, int | None, float]]]) -> list[tuple[str, int | None, float]]:
    """One seed's rows from its folds' rows (see the module docstring)."""
    rows: list[tuple[str, int | None, float]] = []
    scalars: dict[str, dict[int, float]] = {}
    curves: dict[str, dict[int, dict[int, float]]] = {}
    queries: list[tuple[str, int | None, float]] = []
    for f, frows in sorted(by_fold.items()):
        for m, r, v in frows:
            if m.startswith("query_"):
                queries.append((m, r, v))
            elif r is None:
                scalars.setdefault(m, {})[f] = v
            else:
                curves.setdefault(m, {}).setdefault(int(r), {})[f] = v
    n_folds = len(by_fold)
    for m, steps in curves.items():
        for r in sorted(steps):
            if len(steps[r]) == n_folds:  # the steps every fold reached
                rows.append((m, r, float(np.mean([steps[r][f] for f in sorted(steps[r])]))))
    for m, vals in scalars.items():
        if len(vals) != n_folds:
            continue
        rows.append((m, None, float(np.mean([vals[f] for f in sorted(vals)]))))
        rows += [(f"fold_{m}", int(f), float(vals[f])) for f in sorted(vals)]
    return rows + queries


def letor_seeds_trial(spec: LetorSeedsSpec) -> list[tuple[str, int | None, float]]:
    by_fold = {}
    for f in spec.folds:
        one = LetorSpec(estimator=spec.estimator, params=dict(spec.params), builder=spec.builder, fold=int(f),
                        metrics=spec.metrics, data_path=spec.data_path, algo_seed=fold_seed(spec.algo_seed, f),
                        max_steps=spec.max_steps)
        by_fold[int(f)] = letor_trial(one)
    return combine_folds(by_fold)


class LetorSeeds(Protocol):
    name = "letor_seeds"
    trials_extend = True  # trial i is seed i, whatever the number of seeds
    estimators = RANKERS
    uses = frozenset()  # the folds fix the sizes
    unit = "seeds"

    def validate(self, cfg, require) -> None:
        super().validate(cfg, require)
        for i, m in enumerate(cfg.experiment.metrics):
            require(f"experiment.metrics[{i}]", not str(m).startswith("fold_"),
                    f"'{m}' is written by the protocol itself (by fold, beside each scalar metric); list '{m[5:]}'")

    def deterministic(self, exp, cell) -> bool:
        a = exp.cfg.algorithms.get(cell.algorithm)
        return bool(a is not None and a.get("deterministic"))

    def trials_of(self, exp, cell) -> int:
        """The trials a cell runs: one for a learner deterministic given the data, else the
        experiment's number of seeds."""
        return 1 if self.deterministic(exp, cell) else int(exp.n_trials)

    def spec(self, exp, cell, trial, data_path, data_seed, algo_seed) -> LetorSeedsSpec:
        return LetorSeedsSpec(estimator=cell.estimator, params=dict(cell.params), builder=exp.cfg.dataset.builder,
                              metrics=tuple(exp.cfg.experiment.metrics), data_path=data_path, algo_seed=algo_seed,
                              max_steps=exp.max_steps)

    def run(self, spec: LetorSeedsSpec):
        return letor_seeds_trial(spec)

    def size_text(self, exp) -> str:
        return f"{exp.n_trials} seeds x {len(FOLDS)} folds (five-fold mean per seed; deterministic learners once)"


PROTOCOL = LetorSeeds()
