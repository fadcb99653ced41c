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
