"""The conformance checks of a learner class, for the package's own learners
(tests/test_conformance.py) and for anyone's (``rankrepro check-learner package.module.Class``).

Each check returns a :class:`Check` (name, passed, why) instead of raising, so that all of
them run and each says what it found.  The checks, per family (``online``, ``ranker``,
``gp``, ``coactive``):

* ``interface``: the methods the family's base only declares (``missing method _predict
  (OnlineRanker requires it)``, :func:`rankrepro.pipeline.learner_checks.missing_methods`), and
  the methods and hyperparameters the family's protocol calls
  (:data:`rankrepro.pipeline.targets.PROTOCOL_CALLS`);
* ``protocol calls``: the calls the protocol makes, on a tiny data set (online: a real
  trial of the online protocol on the synthetic data; ranker: ``iterate`` as the LETOR
  protocol steps it; gp: ``fit_predict_kernel`` as the collaborative protocol calls it;
  coactive: the web-search rounds of Sec. 5.1 through ``make``), with the outputs the protocol
  uses checked as in a run (:mod:`rankrepro.pipeline.learner_checks`: shape, finite, integer
  ranks in 1..n_ranks): second, so that a bad output is the first failure named;
* ``inputs unchanged``: fit and predict leave their arrays as they were;
* ``same seed, same result``: two fits from the same seed predict the same (online: their
  ``fit_online`` predictions too, which the protocol scores), and a refit of the same instance
  forgets the first fit;
* ``clone``: ``clone()`` (and scikit-learn's ``clone``) give an unfitted learner with the same
  parameters that refuses to predict (``NotFittedError``), and the repr rebuilds it;
* ``pickling``: a fitted learner predicts the same after a pickle round trip;
* ``parameters checked``: every hyperparameter has a constraint, each constraint broken once
  is refused (``ParamError`` naming it) by ``validate()`` and before fitting, an unknown
  hyperparameter is refused by ``set_params``;
* ``bad input rejected``: rows with NaN (and, online, ranks outside 1..n_ranks and rows of
  another width) are refused with a ``ValueError``.
"""

from __future__ import annotations

import pickle
import traceback
from copy import deepcopy
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

#: the families, and the protocol each one's learners are run by
FAMILIES = ("online", "ranker", "gp", "coactive")

#: small settings of the package's learners (by ``name``), so that each check runs in milliseconds
SMALL = {"oap_bpm": {"N": 5}, "oap_bagg": {"N": 5}, "oap_vp": {"N": 5}, "perceptron": {"n_iter": 4, "committee": 3},
         "ranksvm": {"C_grid": [0.1, 1.0]}, "rankboost": {"n_rounds": 8}, "lambdamart": {"n_rounds": 20},
         "gp_model": {"em_iters": 3, "likelihood": "ordinal", "collaborative": True}}


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    why: str = ""


class Failed(AssertionError):
    """A check's finding (its message is the check's ``why``)."""


def family_of(cls: type) -> str | None:
    """The family a class belongs to by its bases (None: not one of the package's)."""
    from .algorithms.base import OnlineRanker

    if issubclass(cls, OnlineRanker):
        return "online"
    if callable(getattr(cls, "iterate", None)):
        return "ranker"
    if callable(getattr(cls, "fit_predict_kernel", None)):
        return "gp"
    if callable(getattr(cls, "make", None)):
        return "coactive"
    return None


def small(cls: type, **kw: Any):
    """An instance with small settings (``n_ranks`` 4 and ``seed`` 7 where it has them)."""
    params = {**SMALL.get(getattr(cls, "name", ""), {}), **kw}
    names = cls._param_names()
    if "n_ranks" in names:
        params.setdefault("n_ranks", 4)
    if "seed" in names:
        params.setdefault("seed", 7)
    return cls(**params)


def toy(family: str, rng: np.random.Generator) -> tuple[tuple, tuple]:
    """(fit arguments, predict arguments) of a small problem of the family."""
    if family == "online":
        X = rng.uniform(-0.5, 0.5, size=(120, 6))
        return (X, rng.integers(1, 5, size=120)), (X,)
    if family == "gp":
        X = rng.normal(size=(30, 8))
        Y = rng.integers(1, 5, size=(30, 4)) * (rng.random((30, 4)) < 0.7)
        return (X[:20], Y[:20]), (X[20:],)
    X = rng.normal(size=(80, 5))
    y = (X @ np.array([1.0, 0.5, 0.0, -0.5, 0.2]) > 0).astype(int) + (X[:, 0] > 1)
    qid = np.repeat(np.arange(8), 10)
    return (X, y, qid), (X, qid)


def _fitted(cls, family, rng, **kw):
    est = small(cls, **kw)
    fit_args, pred_args = toy(family, rng)
    return est.fit(*fit_args), pred_args


def _same(a, b, what: str) -> None:
    a, b = np.asarray(a), np.asarray(b)
    # NaN where NaN was: a NaN output is the outputs' finding (check "protocol calls"), not this one's
    nan_ok = a.dtype.kind in "fc" and b.dtype.kind in "fc"
    if not np.array_equal(a, b, equal_nan=nan_ok):
        raise Failed(what)


# -- the checks (each raises Failed, or any error, when the learner fails it) -----------------
def check_interface(cls, family):
    from .pipeline.learner_checks import missing_methods
    from .pipeline.targets import FAMILY_PROTOCOL, missing_calls

    missing = missing_methods(cls)
    if missing:  # a method the family's base only declares (it raises NotImplementedError)
        raise Failed("; ".join(missing))
    lacks = missing_calls(cls, FAMILY_PROTOCOL[family])
    if lacks:
        raise Failed(f"lacks {', '.join(lacks)} (protocol '{FAMILY_PROTOCOL[family]}' calls them)")
    return f"has what protocol '{FAMILY_PROTOCOL[family]}' calls"


def check_inputs_unchanged(cls, family):
    fit_args, pred_args = toy(family, np.random.default_rng(0))
    before = deepcopy((fit_args, pred_args))
    small(cls).fit(*fit_args).predict(*pred_args)
    for i, (a, b) in enumerate(zip([*fit_args, *pred_args], [*before[0], *before[1]])):
        _same(a, b, f"argument {i} of fit/predict was modified in place")
    return "fit and predict leave their arrays as they were"


def check_same_seed(cls, family):
    if family == "online":  # the online protocol scores the predictions fit_online makes, not only predict's
        (X, y), _ = toy(family, np.random.default_rng(3))
        _same(small(cls).fit_online(X.copy(), y.copy()), small(cls).fit_online(X.copy(), y.copy()),
              "two online runs (fit_online) from the same seed and data predict differently (randomness not drawn "
              "from the seed hyperparameter, e.g. NumPy's global random state?)")
    a, args = _fitted(cls, family, np.random.default_rng(3))
    b, _ = _fitted(cls, family, np.random.default_rng(3))
    _same(a.predict(*args), b.predict(*args), "two fits from the same seed and data predict differently")
    first = a.predict(*args)
    a.fit(*toy(family, np.random.default_rng(3))[0])
    _same(a.predict(*args), first, "refitting the same instance does not give the first fit's predictions "
                                   "(state kept from the first fit?)")
    if family == "online":
        return ("same seed and data, same online (fit_online) and final (predict) predictions; a refit forgets "
                "the first fit")
    return "same seed and data, same predictions; a refit forgets the first fit"


def check_clone(cls, family):
    from .algorithms.base import NotFittedError

    est, args = _fitted(cls, family, np.random.default_rng(1))
    clones = [("clone()", est.clone())]
    try:
        from sklearn.base import clone
    except ImportError:  # pragma: no cover - scikit-learn is a test dependency
        clone = None
    if clone is not None:
        clones.append(("sklearn.base.clone", clone(est)))
    for how, c in clones:
        if type(c) is not type(est) or c.get_params() != est.get_params():
            raise Failed(f"{how} changed the class or the parameters")
        if hasattr(c, "n_features_in_"):
            raise Failed(f"{how} kept fitted state (n_features_in_)")
        try:
            c.predict(*args)
        except NotFittedError:
            pass
        else:
            raise Failed(f"an unfitted {how} predicted instead of raising NotFittedError")
    rebuilt = eval(repr(est), {cls.__name__: cls})  # noqa: S307 - the learner's own repr
    if rebuilt.get_params() != est.get_params():
        raise Failed(f"repr {repr(est)!r} does not rebuild the parameters")
    return "clones are unfitted with the same parameters; the repr rebuilds the learner"


def check_pickling(cls, family):
    est, args = _fitted(cls, family, np.random.default_rng(2))
    _same(pickle.loads(pickle.dumps(est)).predict(*args), est.predict(*args),
          "a fitted learner predicts differently after pickling")
    return "a fitted learner predicts the same after a pickle round trip"


def breaking_values(rule) -> list:
    """Values that break a constraint: a wrong type always, and a value just outside a range."""
    from .algorithms.base import Boolean, OneOf, Range

    out = [object()]
    if isinstance(rule, Range):
        if rule.low is not None:
            out.append(rule.kind(rule.low) if rule.left_open else rule.kind(rule.low - 1))
        if rule.high is not None:
            out.append(rule.kind(rule.high) if rule.right_open else rule.kind(rule.high + 1))
        if rule.kind is int:
            out.append(2.5)
    elif isinstance(rule, OneOf):
        out.append("no such option")
    elif isinstance(rule, Boolean):
        out.append("yes")
    return out


def check_parameters(cls, family):
    from .algorithms.base import ParamError

    fit_args, _ = toy(family, np.random.default_rng(4))
    constraints = cls.constraints()
    free = set(cls._param_names()) - {"n_features", "n_users"} - set(constraints)
    if free:
        raise Failed(f"hyperparameter(s) {sorted(free)} have no constraint in _constraints")
    n = 0
    for param, rule in constraints.items():
        for bad in breaking_values(rule):
            est = small(cls, **{param: bad})
            for how, call in (("validate()", est.validate), ("fit", lambda e=est: e.fit(*fit_args))):
                try:
                    call()
                except ParamError as err:
                    if how == "validate()" and err.param != param:
                        raise Failed(f"{param}={bad!r}: validate() blamed '{err.param}'") from None
                else:
                    raise Failed(f"{param}={bad!r} ({rule.describe()}) was accepted by {how}")
            n += 1
    try:
        small(cls).set_params(nonsense=1)
    except ParamError:
        pass
    else:
        raise Failed("set_params accepted an unknown hyperparameter")
    return f"{len(constraints)} constraint(s), each broken ({n} values) and refused before fitting"


def check_bad_input(cls, family):
    fit_args, pred_args = toy(family, np.random.default_rng(5))
    X = fit_args[0]
    refused = []

    def refuses(what, call):
        try:
            call()
        except ValueError:
            refused.append(what)
            return
        except Exception as e:  # noqa: BLE001 - reported
            raise Failed(f"{what}: raised {type(e).__name__} ({e}), not ValueError") from None
        raise Failed(f"{what} was accepted")

    nan = X.copy()
    nan[0, 0] = np.nan
    refuses("a NaN in the rows", lambda: small(cls).fit(nan, *fit_args[1:]))
    if family == "online":
        y = fit_args[1].copy()
        y[2] = 5
        refuses("a rank outside 1..n_ranks", lambda: small(cls).fit_online(X[:5], y[:5]))
        est = small(cls)
        est.fit_online(X[:5], fit_args[1][:5])
        refuses("rows of another width after the first", lambda: est.fit_online(X[:5, :3], fit_args[1][:5]))
        refuses("a 1-D row to predict", lambda: est.predict(X[0]))
    return "refused with ValueError: " + ", ".join(refused)


def check_protocol(cls, family):
    """The protocol's calls, made on the learner's checking class (the class a trial runs:
    :func:`rankrepro.pipeline.learner_checks.checking_class`), so that an output the protocol
    cannot use (NaN, a wrong shape, ranks outside 1..n_ranks, one row short) is named here,
    as the method that returned it and what was wrong."""
    from .pipeline.learner_checks import LearnerOutputError, checking_class
    from .pipeline.targets import FAMILY_PROTOCOL

    protocol = FAMILY_PROTOCOL[family]
    try:
        return _PROTOCOL_RUNS[family](checking_class(cls, protocol), protocol)
    except LearnerOutputError as e:
        raise Failed(getattr(e, "detail", str(e))) from None


def _online_protocol(cls, protocol):
    """A real trial of the online protocol (the synthetic data of Crammer & Singer's Fig. 6,
    300 rounds, 50 test rows), the learner standing in the registry as a config's target does."""
    from .protocols.online import TrialSpec, online_trial

    name = f"{cls.__module__}.{cls.__qualname__}"
    params = {k: v for k, v in small(cls).get_params().items() if k not in ("n_ranks", "seed")}
    spec = TrialSpec(estimator=name, params=params, builder="synthetic_hgo", builder_params={}, n_ranks=5,
                     features="identity", n_train=300, n_test=50, curve_points=5,
                     metrics=("online_rank_loss", "test_rank_loss"), data_seed=np.random.SeedSequence(1),
                     algo_seed=np.random.SeedSequence(2))
    rows = _with_registered(protocol, name, cls, lambda: online_trial(spec))
    values = [v for _, _, v in rows]
    if len(rows) != 6 or not all(np.isfinite(values)) or not all(0 <= v <= 4 for v in values):
        raise Failed(f"the trial's rows are not 5 curve points and a test loss in [0, 4]: {rows}")
    return f"an online trial ran: final online rank loss {rows[-2][2]:.3f}, test rank loss {rows[-1][2]:.3f}"


def _ranker_protocol(cls, protocol):
    rng = np.random.default_rng(6)
    (X, y, qid), _ = toy("ranker", rng)
    (Xv, yv, qv), _ = toy("ranker", rng)
    evals = [(Xv, yv, qv), (X[:40], y[:40], qid[:40])]
    steps = 0
    for step, scores in small(cls).iterate(X, y, qid, evals):
        s_val, s_test = scores
        if np.shape(s_val) != (len(yv),) or np.shape(s_test) != (40,):
            raise Failed(f"step {step}: scores of shapes {np.shape(s_val)}, {np.shape(s_test)}; "
                         f"expected ({len(yv)},) and (40,)")
        if not (np.all(np.isfinite(s_val)) and np.all(np.isfinite(s_test))):
            raise Failed(f"step {step}: scores are not finite")
        float(step)
        steps += 1
        if steps >= 5:
            break
    if not steps:
        raise Failed("iterate yielded no step")
    return f"iterate(X, y, qid, evals) yielded {steps} step(s) of scores for every evaluation set"


def _gp_protocol(cls, protocol):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(12, 6))
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    K = Xn @ Xn.T
    Y = rng.integers(1, 5, size=(3, 12)) * (rng.random((3, 12)) < 0.8)
    est = small(cls)
    n_items = int(getattr(est, "n_items", 6))
    if n_items >= 12:
        est.set_params(n_items=6)
        n_items = 6
    perm = rng.permutation(12)
    train, test = np.sort(perm[:n_items]), np.sort(perm[n_items:])
    fit = est.fit_predict_kernel(K, Y, train, test)
    if len(fit.pred) != 3 or any(np.shape(p) != (test.size,) for p in fit.pred):
        raise Failed(f"pred is not one array of {test.size} predictions per user")
    for attr in ("objective", "ep_sweeps", "ep_unconverged"):
        getattr(fit, attr)
    return f"fit_predict_kernel(K, Y, train, test) predicted {test.size} items for each of 3 users"


def _coactive_protocol(cls, protocol):
    from .algorithms.coactive import least_squares_w, ranking_rounds

    rng = np.random.default_rng(8)
    (X, y, qid), _ = toy("coactive", rng)
    cfg = small(cls)
    if cfg.variant == "ranksvm":
        return "the ranksvm variant runs the package's Ranking SVM: nothing of the class to call"
    learner = cfg.make(X.shape[1], 1)
    bounds = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1], True])
    regret = ranking_rounds(cfg, learner, None, X, y, X @ least_squares_w(X, y), bounds[:-1], bounds[1:],
                            rng.permutation(bounds.size - 1), rng)
    if np.shape(regret) != (bounds.size - 1,) or not np.all(np.isfinite(regret)):
        raise Failed(f"the rounds' regrets are not {bounds.size - 1} finite values")
    return f"make() and the web-search rounds ran {bounds.size - 1} rounds, mean regret {float(np.mean(regret)):.3f}"


_PROTOCOL_RUNS: dict[str, Callable] = {"online": _online_protocol, "ranker": _ranker_protocol, "gp": _gp_protocol,
                                       "coactive": _coactive_protocol}


def _with_registered(protocol: str, name: str, cls: type, run: Callable):
    from .protocols import PROTOCOLS

    registry = PROTOCOLS[protocol].estimators
    had = registry.get(name)
    registry[name] = cls
    try:
        return run()
    finally:
        if had is None:
            registry.pop(name, None)
        else:
            registry[name] = had


#: every check by name, in the order they run
CHECKS: dict[str, Callable] = {
    "interface": check_interface, "protocol calls": check_protocol, "inputs unchanged": check_inputs_unchanged,
    "same seed, same result": check_same_seed, "clone": check_clone, "pickling": check_pickling,
    "parameters checked": check_parameters, "bad input rejected": check_bad_input,
}


def run_check(name: str, cls: type, family: str) -> Check:
    """One check: passed with what it saw, or failed with why (the error's type and message,
    and the line of the learner's code it came from when it came from there)."""
    try:
        return Check(name, True, CHECKS[name](cls, family) or "")
    except Failed as e:
        return Check(name, False, str(e))
    except Exception as e:  # noqa: BLE001 - every error is a finding
        where = ""
        for frame in reversed(traceback.extract_tb(e.__traceback__)):
            if _users_code(frame.filename):  # the innermost line of the learner's own code
                where = f" at {frame.filename}:{frame.lineno}"
                break
        first = str(e).splitlines()[0] if str(e) else ""
        return Check(name, False, f"{type(e).__name__}: {first}{where}")


def _users_code(filename: str) -> bool:
    """Whether a traceback's file is neither this package's nor an installed library's."""
    from .pipeline.learner_checks import users_code

    return users_code(filename)


def run_checks(cls: type, family: str | None = None) -> list[Check]:
    """Every check of the family (default: the family of the class's base) on ``cls``; once the
    interface fails, the others are not run (they would only fail the same way)."""
    family = family or family_of(cls)
    if family not in FAMILIES:
        return [Check("family", False, f"{cls.__name__} is of no family by its bases: give --family "
                                       f"({'|'.join(FAMILIES)})")]
    out = [run_check("interface", cls, family)]
    if out[0].passed:
        out += [run_check(n, cls, family) for n in CHECKS if n != "interface"]
    return out
