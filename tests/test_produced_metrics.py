"""The table of the metrics each protocol computes (rankrepro.pipeline.validate.PRODUCES),
against the protocols: every protocol has an entry, and what a protocol emits in a run is
in its entry (the table is what lets config checking refuse a metric its protocol never
computes)."""

from __future__ import annotations

import numpy as np

from rankrepro.pipeline.validate import PRODUCES
from rankrepro.protocols import PROTOCOLS


def test_every_protocol_has_an_entry_and_only_registered_names():
    from rankrepro.metric_names import METRICS

    assert set(PRODUCES) == set(PROTOCOLS)
    for proto, names in PRODUCES.items():
        assert names <= set(METRICS), (proto, sorted(names - set(METRICS)))


def test_what_the_online_protocol_emits_is_listed():
    from rankrepro.protocols.online import TrialSpec, online_trial

    d, a = np.random.SeedSequence(3).spawn(2)
    spec = TrialSpec(estimator="prank", params={}, builder="synthetic_hgo", builder_params={}, n_ranks=5,
                     features="poly2", n_train=50, n_test=20, curve_points=3, metrics=tuple(PRODUCES["online"]),
                     data_seed=d, algo_seed=a)
    assert {m for m, _, _ in online_trial(spec)} == PRODUCES["online"]


def test_what_the_collaborative_gp_protocol_emits_is_listed(monkeypatch):
    from rankrepro.data import builders
    from rankrepro.data.collab_gp import CollabData
    from rankrepro.protocols.gp import GPSpec, gp_trial
    from tests.test_gp import small_problem

    K, Y, _ = small_problem(seed=10, m=40)
    monkeypatch.setitem(builders.BUILDERS, "tiny_gp", lambda data_path: CollabData(K, Y, 5, 10, int((Y > 0).sum())))
    spec = GPSpec("gp_model", {"likelihood": "ordinal", "n_items": 15, "em_iters": 1}, "tiny_gp", {}, "unused",
                  np.random.SeedSequence(1))
    assert {m for m, _, _ in gp_trial(spec)} <= PRODUCES["collab_gp"]


def test_what_the_ranked_list_protocol_emits_is_listed():
    from rankrepro.protocols.ranked_list import ListSpec, ranked_list_trial

    rows = ranked_list_trial(ListSpec(estimator="fixed_list", params={"ranking": "RNRN"}))
    assert {m for m, _, _ in rows} == PRODUCES["ranked_list"]
