"""Data-set builders by the name a ``dataset/*.yaml`` gives as ``builder``.

A builder is ``f(n_train, n_test, rng, **params) -> Split``; builders of downloaded data
also take ``data_path`` (the processed npz), which the runner supplies."""

from .cf import cf_judges, cf_people, cf_viewer_stream
from .synthetic import synthetic_hgo

BUILDERS = {
    "synthetic_hgo": synthetic_hgo,
    "cf_judges": cf_judges,
    "cf_people": cf_people,
    "cf_viewer_stream": cf_viewer_stream,
}

#: parameters the runner injects (never set in a config)
INJECTED = ("data_path",)
