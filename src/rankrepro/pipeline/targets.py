"""Learners from anywhere: an algorithm entry ``_target_: package.module.ClassName`` (Hydra's
convention; the resolved config keeps it as ``estimator: package.module.ClassName``).

A name with a dot is such a target: the class is imported when the config loads
(:func:`resolve`) and checked against what the experiment's protocol calls on its learners
(:data:`PROTOCOL_CALLS`); a class that does not import or lacks a method is a
:class:`~rankrepro.pipeline.config_errors.ConfigError` at ``algorithms.<key>._target_``
naming what is missing.  While a trial runs, the class stands in the protocol's registry
under its dotted name (:func:`registered`): the protocols' own code runs it exactly as it
runs the package's learners.  Its cells' code fingerprints hash its module's source and the
import closure of that module inside the user's project (:func:`rankrepro.pipeline.codeprint.cell_identity`).
"""

from __future__ import annotations

import contextlib
import importlib
from typing import Iterator

#: the methods each protocol calls on its learner classes and instances (``_param_names``
#: and ``validate`` come with :class:`rankrepro.algorithms.base.Estimator`), and the
#: hyperparameters it reads from them
PROTOCOL_CALLS: dict[str, dict[str, tuple[str, ...]]] = {
    "online": {"methods": ("_param_names", "validate", "fit_online", "predict"), "params": ("n_ranks",)},
    "letor": {"methods": ("_param_names", "validate", "iterate"), "params": ()},
    "letor_seeds": {"methods": ("_param_names", "validate", "iterate"), "params": ()},
    "collab_gp": {"methods": ("_param_names", "validate", "fit_predict_kernel"), "params": ("n_items", "n_ranks")},
    "coactive_movies": {"methods": ("_param_names", "validate", "make"),
                        "params": ("variant", "feedback", "alpha", "noisy_pick", "max_users")},
    "coactive_ranking": {"methods": ("_param_names", "validate", "make"),
                         "params": ("variant", "feedback", "alpha", "noisy_pick", "max_users")},
    "ranked_list": {"methods": ("_param_names", "validate", "labels"), "params": ()},
}

#: the families of ``rankrepro check-learner --family``: the protocol whose calls each is checked against
FAMILY_PROTOCOL = {"online": "online", "ranker": "letor", "gp": "collab_gp", "coactive": "coactive_ranking"}


class TargetError(ValueError):
    """A target that does not import or does not fit its protocol; ``str()`` says why."""


def is_target(estimator: str) -> bool:
    """Whether an algorithm's estimator names a class by its dotted path (registry names have no dot)."""
    return "." in str(estimator)


def _unbound_in_source(module: str, attr: str) -> str | None:
    """The source file of ``module`` when reading it, without importing anything, shows that it
    binds no ``attr`` (no class, def, assignment or import of that name, no ``import *``, module
    ``__getattr__``, ``globals()``, ``setattr`` or the like); else None (it may bind it, or its
    source is not a plain file found on ``sys.path``: then only importing it can tell)."""
    import ast
    import sys
    from importlib.machinery import PathFinder

    path, spec = None, None
    for i in range(module.count(".") + 1):  # each package located, none of them run
        name = ".".join(module.split(".")[: i + 1])
        if name in sys.modules:  # imported already: its code has run, nothing to spare
            return None
        spec = PathFinder.find_spec(name, path)
        if spec is None:
            return None
        path = spec.submodule_search_locations
    if spec is None or not str(spec.origin or "").endswith(".py"):
        return None
    try:
        tree = ast.parse(open(spec.origin, "rb").read())
    except (OSError, SyntaxError, ValueError):
        return None
    dynamic = {"globals", "vars", "setattr", "exec", "eval", "__getattr__", "__dict__", "modules", "*"}
    for node in ast.walk(tree):
        names = [getattr(node, k, None) for k in ("name", "asname", "id", "attr", "rest")]
        if isinstance(node, ast.alias):
            names.append(node.name.split(".")[0])
        if attr in names or dynamic.intersection(n for n in names if isinstance(n, str)):
            return None
    return spec.origin


def import_target(dotted: str) -> type:
    """The class ``package.module.ClassName`` names (raises :class:`TargetError` saying why not).
    A module whose source plainly has no such name is refused before it is imported (its
    import-time code does not run); a class that is there but lacks a method is found only once
    imported (docs/own_learner.md)."""
    module, _, attr = str(dotted).rpartition(".")
    if not module or not attr:
        raise TargetError(f"'{dotted}' is not package.module.ClassName")
    if (origin := _unbound_in_source(module, attr)) is not None:
        raise TargetError(f"module '{module}' ({origin}) has no attribute '{attr}' (read, not imported: none of "
                          "its code has run)")
    try:
        mod = importlib.import_module(module)
    except ImportError as e:
        raise TargetError(f"cannot import module '{module}' ({e}); put its folder on PYTHONPATH or install it") from None
    except Exception as e:  # noqa: BLE001 - the user's module failed while importing
        raise TargetError(f"importing module '{module}' failed: {type(e).__name__}: {e}") from None
    cls = getattr(mod, attr, None)
    if cls is None:
        raise TargetError(f"module '{module}' ({getattr(mod, '__file__', '?')}) has no attribute '{attr}'")
    if not isinstance(cls, type):
        raise TargetError(f"'{dotted}' is a {type(cls).__name__}, not a class")
    return cls


def missing_calls(cls: type, protocol: str) -> list[str]:
    """What protocol ``protocol`` calls or reads that ``cls`` lacks, as sentences (empty: it fits)."""
    calls = PROTOCOL_CALLS.get(protocol, {"methods": ("_param_names", "validate"), "params": ()})
    out = [f"method '{m}'" for m in calls["methods"] if not callable(getattr(cls, m, None))]
    if not out:
        try:
            names = set(cls._param_names())
        except Exception as e:  # noqa: BLE001 - reported, not raised
            return [f"a working _param_names() ({type(e).__name__}: {e})"]
        out += [f"hyperparameter '{p}'" for p in calls["params"] if p not in names]
    return out


def check_target(dotted: str, protocol: str) -> type:
    """Import ``dotted`` and check it against ``protocol``'s calls and its family base's
    abstract methods (:func:`rankrepro.pipeline.learner_checks.missing_methods`: a method the
    base only declares, e.g. ``OnlineRanker._predict``); raises :class:`TargetError`."""
    from .learner_checks import missing_methods

    cls = import_target(dotted)
    missing = missing_methods(cls)
    if missing:
        raise TargetError(f"{dotted}: {'; '.join(missing)}; the base only declares it "
                          "(docs/own_learner.md lists each family's methods)")
    lacks = missing_calls(cls, protocol)
    if lacks:
        raise TargetError(f"{dotted} lacks {', '.join(lacks)}, which protocol '{protocol}' calls on its learners "
                          "(subclass rankrepro.algorithms.base.Estimator and the family's base, docs/own_learner.md)")
    return cls


def learner_class(protocol, estimator: str) -> type | None:
    """The class a cell runs: from the protocol's registry, or imported for a target (None
    when neither has it)."""
    cls = protocol.estimators.get(estimator)
    if cls is None and is_target(estimator):
        with contextlib.suppress(TargetError):
            cls = import_target(estimator)
    return cls


@contextlib.contextmanager
def registered(protocol: str, estimator: str) -> Iterator[None]:
    """While the block runs, the target class stands in protocol ``protocol``'s registry under
    its dotted name (the protocol's trial looks it up there); removed afterwards.  A registry
    name changes nothing."""
    if not is_target(estimator):
        yield
        return
    from ..protocols import PROTOCOLS

    registry = PROTOCOLS[protocol].estimators
    if estimator in registry:
        yield
        return
    registry[estimator] = check_target(estimator, protocol)
    try:
        yield
    finally:
        registry.pop(estimator, None)
