"""Data-set builders by the name a ``dataset/*.yaml`` gives as ``builder``.

A builder is ``f(n_train, n_test, rng, **params) -> Split``; builders of downloaded data
also take ``data_path`` (the processed npz), which the runner supplies.  The LETOR builder
is ``f(fold, *, data_path) -> Fold``."""

from .cf import cf_judges, cf_people, cf_viewer_stream
from .collab_gp import collab_gp
from .coactive_movies import coactive_movies
from .letor import letor_all, letor_fold
from .synthetic import synthetic_hgo

#: a registry (config names -> what this package holds): a cell's code fingerprint follows
#: only the names taken from it, never all of its imports (rankrepro.pipeline.codeprint)
__registry__ = True


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
# what each builder's parameters may be, read by the catalog when a config loads
# -------------------------------------------------------------------------------------
def _int_at_least(lo: int):
    return (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= lo), f"an integer >= {lo}"


def _positive_list(of_int: bool):
    import math

    def ok(v) -> bool:
        good = (lambda x: isinstance(x, int) and not isinstance(x, bool) and x >= 1) if of_int else \
               (lambda x: isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0)
        return isinstance(v, (list, tuple)) and len(v) >= 1 and all(good(x) for x in v)
    return ok, ("a non-empty list of integers >= 1" if of_int else "a non-empty list of finite numbers > 0")


def _one_of(choices: tuple):
    return (lambda v: v in choices), "one of " + ", ".join(repr(c) for c in choices)


def _constraints() -> dict[str, dict[str, tuple]]:
    from .cf import INSTANCE_NORMS

    return {
        "cf_people": {"min_ratings": _int_at_least(1), "first": _int_at_least(1),
                      "instance_norm": _one_of(INSTANCE_NORMS)},
        "cf_viewer_stream": {"min_ratings": _int_at_least(1), "instance_norm": _one_of(INSTANCE_NORMS)},
        "collab_gp": {"min_item": _int_at_least(1), "min_user": _int_at_least(1), "n_tasks": _int_at_least(1)},
        "coactive_movies": {"dims": _positive_list(True), "regs": _positive_list(False),
                            "sweeps": _int_at_least(1)},
    }


#: builder -> parameter -> (check, what is allowed), for the parameters whose type alone does
#: not say what they may be (the catalog checks types, and synthetic_hgo / cf_judges itself)
PARAM_CONSTRAINTS: dict[str, dict[str, tuple]] = _constraints()
