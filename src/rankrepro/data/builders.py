"""Data-set builders by the name a ``dataset/*.yaml`` gives as ``builder``.

A builder is ``f(n_train, n_test, rng, **params) -> Split``; builders of downloaded data
also take ``data_path`` (the processed npz), which the runner supplies.  The LETOR builder
is ``f(fold, *, data_path) -> Fold``."""

from .cf import cf_judges, cf_people, cf_viewer_stream
from .collab_gp import collab_gp
from .embedding import coactive_movies
from .letor import letor_all, letor_fold
from .synthetic import synthetic_hgo


def no_data(*args, **kwargs) -> None:
    """For protocols that take no data (a worked example evaluated exactly)."""
    return None


BUILDERS = {
    "synthetic_hgo": synthetic_hgo,
    "cf_judges": cf_judges,
    "cf_people": cf_people,
    "cf_viewer_stream": cf_viewer_stream,
    "letor_folds": letor_fold,
    # every query of a LETOR-format set: f(*, data_path) -> Part
    "letor_all": letor_all,
    "no_data": no_data,
    # coactive movies: f(split_seed, *, data_path, ...) -> MovieSetup
    "coactive_movies": coactive_movies,
    # collaborative GP ordinal regression: f(*, data_path, ...) -> CollabData
    "collab_gp": collab_gp,
}

#: parameters the runner injects (never set in a config)
INJECTED = ("data_path",)


# -------------------------------------------------------------------------------------
# what each builder's parameters may be, checked when a config loads (before any job)
# -------------------------------------------------------------------------------------
def _num(v) -> bool:
    import math

    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _increasing(v) -> bool:
    return (isinstance(v, (list, tuple)) and len(v) >= 1 and all(_num(x) for x in v)
            and all(a < b for a, b in zip(v, v[1:])))


def _from(choices):
    return (lambda v: v in choices), "one of " + ", ".join(repr(c) for c in choices)


_POS_INT = (lambda v: _int(v) and v >= 1), "an integer >= 1"
_BOOL = (lambda v: isinstance(v, bool)), "true or false"

#: builder -> parameter -> (check, what is allowed)
PARAM_CONSTRAINTS: dict[str, dict[str, tuple]] = {
    "synthetic_hgo": {
        "noise_sd": ((lambda v: _num(v) and v >= 0), "a finite number >= 0"),
        "scale": ((lambda v: _num(v) and v > 0), "a finite number > 0"),
        "thresholds": (_increasing, "a non-empty list of finite numbers, strictly increasing"),
    },
    "cf_judges": {
        "min_judged": ((lambda v: _int(v) and 1 <= v <= 4), "an integer in 1..4 (the collection has 4 judges)"),
        "instance_values": _from(("rank", "score", "centred")),
        "constant_feature": _BOOL,
    },
    "cf_people": {"min_ratings": _POS_INT, "strict": _BOOL, "first": _POS_INT,
                  "instance_norm": _from(("none", "unit"))},
    "cf_viewer_stream": {"min_ratings": _POS_INT, "instance_norm": _from(("none", "unit"))},
    "collab_gp": {"min_item": _POS_INT, "min_user": _POS_INT, "n_tasks": _POS_INT},
    "coactive_movies": {
        "dims": ((lambda v: isinstance(v, (list, tuple)) and len(v) >= 1 and all(_int(x) and x >= 1 for x in v)),
                 "a non-empty list of integers >= 1"),
        "regs": ((lambda v: isinstance(v, (list, tuple)) and len(v) >= 1 and all(_num(x) and x > 0 for x in v)),
                 "a non-empty list of finite numbers > 0"),
        "sweeps": _POS_INT,
    },
}


def n_ranks_of(builder: str, params: dict):
    """The number of ranks a builder's parameters imply (None: set by the data)."""
    if builder == "synthetic_hgo":
        import inspect

        th = params.get("thresholds", inspect.signature(synthetic_hgo).parameters["thresholds"].default)
        return len(th) + 1
    return {"cf_judges": 3}.get(builder)


def size_limit(builder: str, params: dict, stats: dict):
    """(largest n_train + n_test, why) for a builder on a data set with registry ``stats``
    (None when the catalog cannot know it before the data are read)."""
    import inspect

    if builder == "cf_judges" and "pairs" in stats:
        return stats["pairs"], f"the data set has {stats['pairs']:,} judged pairs (one per round)"
    if builder == "cf_people":
        first = params.get("first", inspect.signature(cf_people).parameters["first"].default)
        return first, f"a person contributes the first {first} items (dataset.params.first)"
    return None
