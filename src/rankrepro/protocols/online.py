"""The online protocol of Harrington (2003) and Crammer & Singer (2005).

One trial: draw a data set with the trial's data generator; feed the training stream to
the learner round by round (predict, then update); record the time-averaged rank loss at
the checkpoint rounds; then, if the experiment has a test set, the rank loss of the final
rule on it.  The ordinal metrics of ORCA-style benchmarks (AMAE and quadratic weighted kappa,
:mod:`rankrepro.ordinal_metrics`) are computed when the experiment lists them: over the whole
training stream (``online_amae``, ``online_qwk``) and on the test set (``test_amae``,
``test_qwk``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from omegaconf import OmegaConf

from ..algorithms import FEATURE_MAPS, ONLINE
from ..data.builders import BUILDERS
from ..metrics import checkpoints, online_rank_loss_curve, rank_loss
from ..ordinal_metrics import amae, qwk
from .base import Protocol, Spec


@dataclass(frozen=True)
class TrialSpec(Spec):
    """Everything one trial needs; small and picklable (sent to joblib workers)."""

    builder: str
    builder_params: dict[str, Any]
    n_ranks: int
    features: str
    n_train: int
    n_test: int
    curve_points: int
    metrics: tuple[str, ...]
    data_seed: np.random.SeedSequence = field(hash=False)
    algo_seed: np.random.SeedSequence = field(hash=False)
    #: the processed npz of downloaded data (None for generated data)
    data_path: str | None = None


def online_trial(spec: TrialSpec) -> list[tuple[str, int | None, float]]:
    est, split, preds = _fit(spec)
    return _rows(spec, est, split, preds)


def online_trial_rereads(spec: TrialSpec, others: list[TrialSpec]) -> tuple[list, list[list]]:
    """One run of the learner, read under ``spec``'s settings and under each of ``others``'
    (specs that differ from ``spec`` only in the learner's prediction-only parameters,
    ``PREDICT_ONLY``: Harrington's ``output``, the mean rank or the nearest rank to it, is
    applied to the final rule's test predictions; the online predictions, and so the run,
    never read it): ``spec``'s rows and each other's, as :func:`online_trial` gives them for
    each spec."""
    only = tuple(getattr(ONLINE[spec.estimator], "PREDICT_ONLY", ()))
    for o in others:
        if not only or _shared(o, only) != _shared(spec, only):
            raise ValueError(f"a spec to read off the run of {spec.estimator} differs in more than "
                             f"{', '.join(only) or 'nothing'}")
    est, split, preds = _fit(spec)
    mine = _rows(spec, est, split, preds)
    theirs = []
    for o in others:
        est.set_params(**{k: v for k, v in o.params.items() if k in only})
        theirs.append(_rows(o, est, split, preds))
    return mine, theirs


def _shared(spec: TrialSpec, only: tuple[str, ...]) -> tuple:
    """What a run depends on: the spec without its prediction-only parameters."""
    out = []
    for f in fields(spec):
        v = getattr(spec, f.name)
        if f.name == "params":
            v = sorted((k, repr(p)) for k, p in v.items() if k not in only)
        elif isinstance(v, np.random.SeedSequence):
            v = (repr(v.entropy), tuple(v.spawn_key), v.pool_size)
        elif isinstance(v, dict):
            v = repr(sorted(v.items()))
        out.append((f.name, v))
    return tuple(out)


def _fit(spec: TrialSpec):
    """The trial's data and one online pass of its learner: (estimator, split, online predictions)."""
    data_rng = np.random.default_rng(spec.data_seed)
    extra = {"data_path": spec.data_path} if spec.data_path is not None else {}
    split = BUILDERS[spec.builder](spec.n_train, spec.n_test, data_rng, **spec.builder_params, **extra)
    Xtr = FEATURE_MAPS[spec.features](split.X_train)
    cls = ONLINE[spec.estimator]
    params = dict(spec.params)
    if "seed" in cls._param_names():
        params["seed"] = spec.algo_seed
    # the data fix the number of ranks (MovieLens has 5 where EachMovie has 6)
    est = cls(n_ranks=split.n_ranks, **params)
    preds = est.fit_online(Xtr, split.y_train)
    return est, split, preds


def _rows(spec: TrialSpec, est, split, preds) -> list[tuple[str, int | None, float]]:
    """The trial's rows: the online curve from the predictions made before each update, then
    the final rule's test metrics (predicted under the estimator's current settings)."""
    phi = FEATURE_MAPS[spec.features]
    rows: list[tuple[str, int | None, float]] = []
    if "online_rank_loss" in spec.metrics:
        pts = checkpoints(spec.n_train, spec.curve_points)
        for r, v in zip(pts, online_rank_loss_curve(preds, split.y_train, pts)):
            rows.append(("online_rank_loss", int(r), float(v)))
    test = [m for m in ("test_rank_loss", "test_amae", "test_qwk") if m in spec.metrics]
    yhat = est.predict(phi(split.X_test)) if test else None
    if "test_rank_loss" in spec.metrics:
        rows.append(("test_rank_loss", None, rank_loss(yhat, split.y_test)))
    # the ordinal metrics after the paper's own, so that adding them moves no earlier row
    if "online_amae" in spec.metrics:
        rows.append(("online_amae", None, amae(preds, split.y_train)))
    if "online_qwk" in spec.metrics:
        rows.append(("online_qwk", None, qwk(preds, split.y_train, split.n_ranks)))
    if "test_amae" in spec.metrics:
        rows.append(("test_amae", None, amae(yhat, split.y_test)))
    if "test_qwk" in spec.metrics:
        rows.append(("test_qwk", None, qwk(yhat, split.y_test, split.n_ranks)))
    return rows


class Online(Protocol):
    name = "online"
    trials_extend = True  # a trial is its index and seeds only
    estimators = ONLINE
    uses = frozenset({"n_train", "n_test", "n_ranks", "features"})

    def last_round(self, experiment_cfg) -> int | None:
        return int(experiment_cfg.n_train)  # a curve runs over the training rounds

    def spec(self, exp, cell, trial, data_path, data_seed, algo_seed) -> TrialSpec:
        d = exp.cfg.dataset
        return TrialSpec(
            estimator=cell.estimator, params=dict(cell.params), builder=d.builder,
            builder_params=OmegaConf.to_container(d.params), n_ranks=int(d.n_ranks),
            features=exp.cfg.experiment.features, n_train=exp.n_train, n_test=exp.n_test,
            curve_points=exp.curve_points, metrics=tuple(exp.cfg.experiment.metrics),
            data_seed=data_seed, algo_seed=algo_seed, data_path=data_path,
        )

    def run(self, spec: TrialSpec):
        return online_trial(spec)

    def run_rereads(self, spec: TrialSpec, others: list[TrialSpec]):
        """``spec``'s rows and those of ``others``, read off one run (:func:`online_trial_rereads`)."""
        return online_trial_rereads(spec, others)

    def size_text(self, exp) -> str:
        return f"{exp.n_trials} trials, {exp.n_train} training rounds, {exp.n_test} test examples"


PROTOCOL = Online()
