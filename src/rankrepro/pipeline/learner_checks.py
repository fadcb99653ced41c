"""A learner's outputs checked where the protocols use them, and a failed trial said in one line.

The protocols (:mod:`rankrepro.protocols`) call their learners and use what they return as it
is: a ``predict`` that returns NaN, or one rank too many, used to become a number in a table
(``int(NaN)`` is a large negative integer) or a numpy error far from its cause.  The protocol
modules are part of every cell's code fingerprint (:mod:`rankrepro.pipeline.codeprint`), so
the checks are not written there: while a trial runs, :func:`checked` puts in the protocol's
registry, in place of the learner's class, a subclass of it (:func:`checking_class`;
``isinstance`` holds, the name, module and docstring are the class's) whose methods the
protocol calls return exactly what the learner's return, the same objects, after checking:

* ``online`` (``fit_online``, ``predict``): one rank per row of ``X``, finite integers in
  ``1..n_ranks`` (``predict``: finite values in ``[1, n_ranks]``, the mean rank of OAP-Bagg,
  OAP-VP and voted PRank being a real number the test rank loss scores as it is);
* ``letor`` / ``letor_seeds`` (``iterate``): each step a pair (step, one array of scores per
  evaluation set), each of the set's length and finite;
* ``collab_gp`` (``fit_predict_kernel``): one array of predictions per user, one per item
  asked, finite integer ranks in ``1..n_ranks``;
* ``coactive_*`` (``make``): the object it returns, whose ``scores`` must be (users x
  objects) and finite, and whose weights ``W`` (which the web-search rounds read) stay finite
  after ``update``;
* ``ranked_list`` (``labels``): a 1-D array of finite relevance labels >= 0.

A check that fails raises :class:`LearnerOutputError` naming the learner, the method and what
was wrong; :func:`trial_failure` turns it, or any error a trial raises, into one
:class:`TrialFailed` line naming the cell and trial too (and, for an error, its type, message
and the line of the learner's code it came from), which ``rankrepro run`` / ``arena`` print as
their one error line and the workflow's cell job writes last in its log.

The checks cost a few vector operations on each output (a sum is the fast path for "finite":
NaN or infinity make it non-finite; only then are the values looked at one by one), and a
class is built once per learner class and protocol.  No number changes: the outputs are
returned as they are, not copied or converted.

A class that inherits one of its family base's abstract methods (:data:`ABSTRACT`) without
overriding it cannot be constructed through the checking class (``TypeError: ... missing
method _predict (OnlineRanker requires it)``), and :func:`missing_methods` names them for the
config check of a target (:func:`rankrepro.pipeline.targets.check_target`) and for
``rankrepro check-learner``.

This module is not imported by the protocols or learners: it is outside every cell's code
fingerprint.
"""

from __future__ import annotations

import contextlib
import math
import threading
import traceback
from typing import Any, Iterator

#: the family bases' abstract methods ("module:Class" -> method -> the methods that call it; a
#: class that overrides all of its callers does not need it).  The bases raise
#: NotImplementedError in these; a subclass must override them.
ABSTRACT: dict[str, dict[str, tuple[str, ...]]] = {
    "rankrepro.algorithms.base:OnlineRanker": {"_init_state": ("fit_online", "_ensure_started"),
                                               "_online": ("fit_online",), "_predict": ("predict",)},
    "rankrepro.algorithms.base:QueryRanker": {"_scores": ("predict",)},
    "rankrepro.algorithms.rankers:BatchRanker": {"iterate": ("iterate",)},
    "rankrepro.algorithms.per_user:_PerUser": {"_learner": ("fit_predict_kernel",)},
}


class LearnerOutputError(ValueError):
    """What a learner's method returned is not what its protocol uses; ``str()`` names the
    learner, the method and what was wrong, in one line."""


class TrialFailed(RuntimeError):
    """A trial failed: one line naming the experiment, the cell, the trial, the learner and
    what went wrong (the original error is its ``__cause__`` where it was raised in this
    process)."""


def learner_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _defined_in(cls: type, name: str) -> type | None:
    for c in cls.__mro__:
        if name in vars(c):
            return c
    return None


def missing_methods(cls: type) -> list[str]:
    """The abstract methods of ``cls``'s family base (:data:`ABSTRACT`) that ``cls`` does not
    override (while it also does not override every method that calls them), as sentences
    ``missing method _predict (OnlineRanker requires it)``; empty when none."""
    out = []
    for base in cls.__mro__[1:]:
        table = ABSTRACT.get(f"{base.__module__}:{base.__qualname__}")
        if not table:
            continue
        for method, callers in table.items():
            if _defined_in(cls, method) is not base:
                continue  # overridden below the base (or above it: not this base's stub)
            if callers != (method,) and all(
                    (owner := _defined_in(cls, c)) is not None and owner not in _package_bases(cls)
                    for c in callers):
                continue  # the class replaces every method that would call it
            out.append(f"missing method {method} ({base.__name__} requires it)")
    return out


def _package_bases(cls: type) -> set[type]:
    return {c for c in cls.__mro__ if c.__module__.startswith("rankrepro.algorithms.base")
            or f"{c.__module__}:{c.__qualname__}" in ABSTRACT}


# -- the checks of one output -------------------------------------------------------------------
def _finite_problem(a) -> str | None:
    """None when every value of ``a`` (a numeric ndarray) is finite, else what is wrong."""
    import numpy as np

    if a.dtype.kind in "iub" or a.size == 0:
        return None
    with np.errstate(all="ignore"):
        if math.isfinite(float(np.sum(a))):  # NaN or infinity make the sum non-finite
            return None
    bad = ~np.isfinite(a)
    if not bad.any():
        return None  # a finite sum that overflowed
    n_nan = int(np.isnan(a).sum())
    first = np.unravel_index(int(np.argmax(bad.ravel())), a.shape)
    kinds = " and ".join(k for k, n in (("NaN", n_nan), ("infinity", int(bad.sum()) - n_nan)) if n)
    at = first[0] if len(first) == 1 else tuple(int(i) for i in first)
    return f"{kinds} at {int(bad.sum())} of {a.size} values (first at index {at})"


def _as_array(out):
    import numpy as np

    return out if isinstance(out, np.ndarray) else np.asarray(out)


def _numeric(a) -> str | None:
    if a.dtype.kind not in "iufb":
        return f"values of dtype {a.dtype}, not numbers"
    return None


def check_ranks(out, n: int, n_ranks: int, what: str = "ranks", integer: bool = True) -> str | None:
    """None when ``out`` is ``n`` finite integer ranks in 1..n_ranks (a 1-D array), else what
    is wrong, in a few words.  ``integer=False``: real values in [1, n_ranks] too (the mean
    rank that OAP-Bagg, OAP-VP and voted PRank predict, scored as it is)."""
    import numpy as np

    a = _as_array(out)
    expected = f"integer {what} 1..{n_ranks}" if integer else f"{what} in [1, {n_ranks}]"
    if a.shape != (n,):
        return f"an array of shape {a.shape}, expected ({n},): one {what[:-1]} per row"
    if (p := _numeric(a)) or (p := _finite_problem(a)):
        return f"{p}; expected {expected}"
    if integer and a.dtype.kind == "f" and n:
        frac = np.floor(a) != a
        if frac.any():
            i = int(np.argmax(frac))
            return f"non-integer {what} ({a[i].item()!r} at index {i}); expected integer {what} 1..{n_ranks}"
    if n:
        lo, hi = a.min(), a.max()
        if lo < 1 or hi > n_ranks:
            i = int(np.argmax((a < 1) | (a > n_ranks)))
            return f"{what} outside 1..{n_ranks} ({a[i].item()!r} at index {i})"
    return None


def check_scores(out, shape: tuple[int, ...], what: str = "scores") -> str | None:
    """None when ``out`` is an array of ``shape`` with finite values, else what is wrong."""
    a = _as_array(out)
    if a.shape != shape:
        return f"{what} of shape {a.shape}, expected {shape}"
    if (p := _numeric(a)) or (p := _finite_problem(a)):
        return f"{what} with {p}"
    return None


def _n_rows(X) -> int:
    shape = getattr(X, "shape", None)
    return int(shape[0]) if shape is not None else len(X)


# -- the checking subclasses ----------------------------------------------------------------------
def _fail(cls: type, method: str, problem: str):
    e = LearnerOutputError(f"learner {learner_name(cls)}: {method} returned {problem}")
    e.detail = f"{method} returned {problem}"  # without the learner's name (check-learner names it)
    raise e


def _online_methods(base: type) -> dict[str, Any]:
    def fit_online(self, X, y):
        out = super(sub_of(self), self).fit_online(X, y)
        if p := check_ranks(out, _n_rows(X), int(self.n_ranks)):
            _fail(base, "fit_online", p)
        return out

    def predict(self, X, *args, **kw):
        out = super(sub_of(self), self).predict(X, *args, **kw)
        # the test rank loss scores a real-valued mean rank as it is; the online curve (fit_online)
        # counts integer ranks
        if p := check_ranks(out, _n_rows(X), int(self.n_ranks), integer=False):
            _fail(base, "predict", p)
        return out

    return {"fit_online": fit_online, "predict": predict}


def _letor_methods(base: type) -> dict[str, Any]:
    def iterate(self, X, y, qid, evals):
        it = super(sub_of(self), self).iterate(X, y, qid, evals)  # called now, as the protocol calls it
        sizes = [_n_rows(e[0]) for e in evals]
        return _checked_steps(base, iter(it), sizes)

    return {"iterate": iterate}


def _checked_steps(base: type, it: Iterator, sizes: list[int]) -> Iterator:
    for i, item in enumerate(it, start=1):
        try:
            step, scores = item
            scores = list(scores)
        except (TypeError, ValueError):
            _fail(base, "iterate", f"at step {i} {type(item).__name__} {item!r:.60}, expected a pair "
                                   "(step, [scores of each evaluation set])")
        if len(scores) != len(sizes):
            _fail(base, "iterate", f"at step {i} scores for {len(scores)} evaluation set(s), expected {len(sizes)}")
        for k, (s, n) in enumerate(zip(scores, sizes)):
            if p := check_scores(s, (n,)):
                _fail(base, "iterate", f"at step {i}, for evaluation set {k} ({n} documents), {p}")
        yield item


def _gp_methods(base: type) -> dict[str, Any]:
    def fit_predict_kernel(self, K, Y, train, predict, *args, **kw):
        res = super(sub_of(self), self).fit_predict_kernel(K, Y, train, predict, *args, **kw)
        pred = getattr(res, "pred", None)
        n_users, n = _n_rows(Y), len(predict)
        if pred is None:
            _fail(base, "fit_predict_kernel", f"a {type(res).__name__} without .pred (one array of predictions "
                                              "per user)")
        if len(pred) != n_users:
            _fail(base, "fit_predict_kernel", f"predictions for {len(pred)} users, expected {n_users}")
        for u, p_u in enumerate(pred):
            if p := check_ranks(p_u, n, int(self.n_ranks)):
                _fail(base, "fit_predict_kernel", f"for user {u}, {p}")
        return res

    return {"fit_predict_kernel": fit_predict_kernel}


def _coactive_methods(base: type) -> dict[str, Any]:
    def make(self, n_features, n_users, *args, **kw):
        obj = super(sub_of(self), self).make(n_features, n_users, *args, **kw)
        with contextlib.suppress(TypeError):  # a class whose instances cannot change class: unchecked
            obj.__class__ = _made_class(base, type(obj), int(n_users))
        return obj

    return {"make": make}


_MADE: dict[tuple[type, type, int], type] = {}


def _made_class(owner: type, cls: type, n_users: int) -> type:
    """A checking subclass of the object ``make`` returned (``scores``, ``update``)."""
    key = (owner, cls, n_users)
    if key in _MADE:
        return _MADE[key]
    if getattr(cls, "__rr_checked__", None) is not None:
        return cls
    name = f"{learner_name(owner)}.make()"

    def scores(self, Phi, *args, **kw):
        out = super(sub, self).scores(Phi, *args, **kw)
        if p := check_scores(out, (n_users, _n_rows(Phi) if getattr(Phi, "ndim", 2) == 2 else Phi.shape[1])):
            raise LearnerOutputError(f"learner {name}: scores returned {p}")
        return out

    def update(self, *args, **kw):
        out = super(sub, self).update(*args, **kw)
        W = getattr(self, "W", None)
        if W is not None and (p := _finite_problem(_as_array(W))):
            raise LearnerOutputError(f"learner {name}: update left the weights W with {p}")
        return out

    ns = {"__module__": cls.__module__, "__qualname__": cls.__qualname__, "__doc__": cls.__doc__,
          "__rr_checked__": cls, "__reduce_ex__": _reduce_as(cls)}
    if callable(getattr(cls, "scores", None)):
        ns["scores"] = scores
    if callable(getattr(cls, "update", None)):
        ns["update"] = update
    sub = type(cls.__name__, (cls,), ns)
    _MADE[key] = sub
    return sub


def _list_methods(base: type) -> dict[str, Any]:
    def labels(self, *args, **kw):
        import numpy as np

        out = super(sub_of(self), self).labels(*args, **kw)
        a = _as_array(out)
        p = (f"an array of shape {a.shape}, expected 1-D" if a.ndim != 1 else _numeric(a) or _finite_problem(a))
        if p is None and a.size and a.min() < 0:
            p = f"relevance labels below 0 ({a.min().item()!r} at index {int(np.argmin(a))})"
        if p:
            _fail(base, "labels", p)
        return out

    return {"labels": labels}


_METHODS = {"online": _online_methods, "letor": _letor_methods, "letor_seeds": _letor_methods,
            "collab_gp": _gp_methods, "coactive_movies": _coactive_methods, "coactive_ranking": _coactive_methods,
            "ranked_list": _list_methods}


def sub_of(obj) -> type:
    """The checking class in ``type(obj)``'s hierarchy (the class whose ``super()`` is the learner's)."""
    for c in type(obj).__mro__:
        if "__rr_checked__" in vars(c):
            return c
    raise TypeError(f"{type(obj).__name__} is not a checking class")  # pragma: no cover - by construction


def _reduce_as(base: type):
    """``__reduce_ex__`` that pickles (and copies) an instance as one of ``base``: the checking
    class is not importable by name, the learner's is."""

    def __reduce_ex__(self, protocol):
        rv = base.__reduce_ex__(self, protocol)
        if isinstance(rv, tuple) and len(rv) >= 2 and isinstance(rv[1], tuple) and rv[1] and rv[1][0] is type(self):
            rv = (_new_of, (base, *rv[1][1:]), *rv[2:])
        return rv

    return __reduce_ex__


def _new_of(cls: type, *args):
    """An instance of ``cls`` made as pickle makes one (its state is set afterwards)."""
    return cls.__new__(cls, *args)


_CLASSES: dict[tuple[type, str], type] = {}


def checking_class(cls: type, protocol: str) -> type:
    """The subclass of ``cls`` whose methods protocol ``protocol`` calls check what they return
    (the module docstring); built once per class and protocol."""
    if getattr(cls, "__rr_checked__", None) is not None:
        return cls
    key = (cls, protocol)
    hit = _CLASSES.get(key)
    if hit is not None:
        return hit
    ns: dict[str, Any] = {"__module__": cls.__module__, "__qualname__": cls.__qualname__, "__doc__": cls.__doc__,
                          "__rr_checked__": cls, "__reduce_ex__": _reduce_as(cls)}
    methods = _METHODS.get(protocol)
    if methods is not None:
        ns.update({k: f for k, f in methods(cls).items() if callable(getattr(cls, k, None))})
    missing = missing_methods(cls)
    if missing:
        def __new__(klass, *args, **kw):
            raise TypeError(f"Can't instantiate {learner_name(cls)}: {'; '.join(missing)}")

        ns["__new__"] = __new__
    sub = type(cls.__name__, (cls,), ns)
    _CLASSES[key] = sub
    return sub


_LOCK = threading.Lock()
_INSTALLED: dict[tuple[int, str], list] = {}


@contextlib.contextmanager
def checked(protocol: str, estimator: str) -> Iterator[None]:
    """While the block runs, the learner ``estimator`` of protocol ``protocol``'s registry is
    its checking class (:func:`checking_class`); put back afterwards.  Trials running at once
    in threads of one process share one installation."""
    from ..protocols import PROTOCOLS

    registry = PROTOCOLS[protocol].estimators
    key = (id(registry), estimator)
    with _LOCK:
        entry = _INSTALLED.get(key)
        if entry is not None:
            entry[1] += 1
        else:
            cls = registry.get(estimator)
            if isinstance(cls, type):
                registry[estimator] = checking_class(cls, protocol)
                entry = _INSTALLED[key] = [cls, 1]
    if entry is None:  # not in the registry: the protocol says so its own way
        yield
        return
    try:
        yield
    finally:
        with _LOCK:
            entry = _INSTALLED[key]
            entry[1] -= 1
            if entry[1] == 0:
                del _INSTALLED[key]
                registry[estimator] = entry[0]


# -- a failed trial in one line -------------------------------------------------------------------
def users_code(filename: str) -> bool:
    """Whether a traceback's file is neither this package's nor an installed library's."""
    import sysconfig
    from pathlib import Path

    path = Path(filename).resolve()
    mine = Path(__file__).resolve().parents[1]
    system = [Path(p).resolve() for k in ("stdlib", "purelib", "platlib") if (p := sysconfig.get_paths().get(k))]
    return path.is_file() and not any(d == path or d in path.parents for d in (mine, *system))


def _users_frame(tb) -> traceback.FrameSummary | None:
    """The innermost frame of the learner's own code (neither this package's nor an installed
    library's), else the innermost frame of all."""
    frames = traceback.extract_tb(tb)
    for frame in reversed(frames):
        if users_code(frame.filename):
            return frame
    return frames[-1] if frames else None


def error_line(e: BaseException) -> str:
    """``Type: first line of the message (at file:line)``: an error in one line, at the
    learner's own line that raised it where there is one."""
    first = str(e).strip().splitlines()[0] if str(e).strip() else ""
    frame = _users_frame(e.__traceback__)
    where = f" (at {frame.filename}:{frame.lineno})" if frame is not None else ""
    return f"{type(e).__name__}: {first}{where}" if first else f"{type(e).__name__}{where}"


def trial_failure(e: Exception, where: str, trial: int, estimator: str) -> TrialFailed:
    """The :class:`TrialFailed` of trial ``trial`` (``where``: the experiment and cell) for
    error ``e``: a check's finding as it is, any other error as :func:`error_line`."""
    head = f"{where}, trial {trial}: " if where else f"trial {trial}: "
    if isinstance(e, TrialFailed):
        return e
    if isinstance(e, LearnerOutputError):
        return TrialFailed(head + str(e))
    return TrialFailed(head + f"learner {estimator} failed: " + error_line(e))
