"""Collaborative ordinal regression (Yu, Yu & Tresp 2006, Sec. 4): one trial is one random
draw of the training items.

The ``n_items`` training items are drawn at random from all items (the same draw for every
model in a trial: the draw depends on the trial's data seed only, so models are compared on
the same items); every task user's labels on them are the training data, the user's labels
on the other items are the test data (transductive: the test items are known, their labels
are missing).  Each user's mean absolute error and zero-one error over their test items are
averaged over the users; the ordinal metrics of ORCA-style benchmarks (AMAE and quadratic
weighted kappa, :mod:`rankrepro.ordinal_metrics`) are computed over all users' test items
pooled, one confusion matrix per trial.  ``fit_seconds`` times the fit and prediction.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from omegaconf import OmegaConf

from ..algorithms.gp import GP
from ..data.builders import BUILDERS
from ..ordinal_metrics import amae, qwk
from .base import Protocol, Spec


@dataclass(frozen=True)
class GPSpec(Spec):
    builder: str
    builder_params: dict[str, Any]
    data_path: str
    data_seed: np.random.SeedSequence = field(hash=False)
    #: scale caps: task users kept (the first ones in id order), EM iterations
    max_users: int | None = None
    max_steps: int | None = None


def gp_fit(spec: GPSpec):
    """One trial's fit: the model's :class:`~rankrepro.algorithms.gp.FitResult`, the ranks Y
    (users x items), the test items, the seconds the fit and prediction took and the number
    of ranks."""
    data = BUILDERS[spec.builder](data_path=spec.data_path, **spec.builder_params)
    params = dict(spec.params)
    if spec.max_steps is not None:
        params["em_iters"] = min(int(params.get("em_iters", 20)), spec.max_steps)
    model = GP[spec.estimator](**params, n_ranks=data.n_ranks)
    Y = data.Y if spec.max_users is None else data.Y[:spec.max_users]
    m = data.n_items
    if model.n_items >= m:
        raise ValueError(f"n_items={model.n_items} leaves no test item (the data have {m} items)")
    perm = np.random.default_rng(spec.data_seed).permutation(m)
    train, test = np.sort(perm[:model.n_items]), np.sort(perm[model.n_items:])
    t0 = time.perf_counter()
    fit = model.fit_predict_kernel(data.K, Y, train, test)
    return fit, Y, test, time.perf_counter() - t0, data.n_ranks


def gp_trial(spec: GPSpec) -> list[tuple[str, int | None, float]]:
    fit, Y, test, seconds, n_ranks = gp_fit(spec)
    return _rows(fit, fit.pred, Y, test, seconds, n_ranks)


def gp_trial_rereads(spec: GPSpec, others: list[GPSpec]) -> tuple[list, list[list]]:
    """One fit, read under ``spec``'s prediction rule and under each of ``others``' (specs
    that differ from ``spec`` in the estimator's prediction-only parameters alone,
    ``GPModel.PREDICT_ONLY``): ``spec``'s rows and each other's, as :func:`gp_trial` gives
    them for each spec (its ``fit_seconds`` the one fit's)."""
    only = GP[spec.estimator].PREDICT_ONLY
    for o in others:
        if _shared(o, only) != _shared(spec, only):
            raise ValueError(f"a spec to read off the fit of {spec.estimator} differs in more than {', '.join(only)}")
    fit, Y, test, seconds, n_ranks = gp_fit(spec)
    rule = lambda sp: sp.params.get("ordinal_predict", "mode")  # noqa: E731 - the estimator's default
    return (_rows(fit, fit.preds[rule(spec)], Y, test, seconds, n_ranks),
            [_rows(fit, fit.preds[rule(o)], Y, test, seconds, n_ranks) for o in others])


def _shared(spec: GPSpec, only: tuple[str, ...]) -> tuple:
    """What a fit depends on: the spec without its prediction-only parameters."""
    ss = spec.data_seed
    return (spec.estimator, sorted((k, repr(v)) for k, v in spec.params.items() if k not in only), spec.builder,
            repr(sorted(spec.builder_params.items())), spec.data_path, spec.max_users, spec.max_steps,
            repr(ss.entropy), tuple(ss.spawn_key), ss.pool_size)


def _rows(fit, preds, Y, test, seconds, n_ranks) -> list[tuple[str, int | None, float]]:
    mae, zo = [], []
    pooled_pred, pooled_truth = [], []
    for u, pred in enumerate(preds):
        truth = Y[u, test]
        seen = truth > 0
        if seen.any():
            mae.append(float(np.mean(np.abs(pred[seen] - truth[seen]))))
            zo.append(float(np.mean(pred[seen] != truth[seen])))
            pooled_pred.append(pred[seen])
            pooled_truth.append(truth[seen])
    rows = [("mae", None, float(np.mean(mae))), ("zero_one", None, float(np.mean(zo))),
            ("fit_seconds", None, seconds), ("em_iterations", None, float(len(fit.objective) or 1))]
    if fit.ep_sweeps:
        rows.append(("ep_unconverged", None, float(fit.ep_unconverged)))
    p, t = np.concatenate(pooled_pred), np.concatenate(pooled_truth)
    rows += [("amae", None, amae(p, t)), ("qwk", None, qwk(p, t, n_ranks))]
    return rows


class CollabGP(Protocol):
    """The training items are drawn per trial (``n_items``, a hyperparameter of the model):
    no ``n_train`` or ``n_test``."""

    name = "collab_gp"
    trials_extend = True  # a trial is its index and seeds only
    estimators = GP
    uses = frozenset({"n_ranks"})
    #: the committed cells were fingerprinted with the placeholder ``experiment.n_train: 1``
    fingerprint_constants = {"experiment.n_train": 1}

    def spec(self, exp, cell, trial, data_path, data_seed, algo_seed) -> GPSpec:
        d = exp.cfg.dataset
        return GPSpec(estimator=cell.estimator, params=dict(cell.params), builder=d.builder,
                      builder_params=OmegaConf.to_container(d.params), data_path=data_path, data_seed=data_seed,
                      max_users=exp.max_users, max_steps=exp.max_steps)

    def run(self, spec: GPSpec):
        return gp_trial(spec)

    def run_rereads(self, spec: GPSpec, others: list[GPSpec]):
        """``spec``'s rows and those of ``others``, read off one fit (:func:`gp_trial_rereads`)."""
        return gp_trial_rereads(spec, others)

    def size_text(self, exp) -> str:
        return f"{exp.n_trials} random draws of the training items"


PROTOCOL = CollabGP()
