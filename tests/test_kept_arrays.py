"""`make data` builds the arrays some builders keep beside the data (the coactive movie setup,
the collaborative GP's kernel): the same files the trials read, asked for with the same keys."""
import json

import pytest
from conftest import committed_catalog

import rankrepro.data.coactive_movies as coactive_movies
import rankrepro.data.collab_gp as collab_gp
from rankrepro.data.arrays import derived_path
from rankrepro.data.status import data_status
from rankrepro.jobs import KEEPING_BUILDERS, job_keep_arrays, kept_array_builds, kept_array_calls
from rankrepro.pipeline.catalog import load_experiment
from rankrepro.pipeline.runner import trial_spec
from rankrepro.protocols import PROTOCOLS


class _Asked(Exception):
    pass


@pytest.fixture
def asked(monkeypatch):
    """The kept files the builders ask for (derived_arrays replaced: it records the file and
    stops the caller there, so nothing is computed or read)."""
    paths = []

    def record(data_path, stem, key, compute):
        paths.append(str(derived_path(data_path, stem, key)))
        raise _Asked

    for mod in (coactive_movies, collab_gp):
        monkeypatch.setattr(mod, "derived_arrays", record)
    coactive_movies.movie_setup.cache_clear()
    collab_gp.collab_gp.cache_clear()
    yield paths
    coactive_movies.movie_setup.cache_clear()
    collab_gp.collab_gp.cache_clear()


#: the experiments whose builder keeps arrays (checked against the catalog below)
KEEPING = ["arena/collab_gp_n100", "arena/collab_gp_n200", "arena/collab_gp_n300", "arena/collab_gp_n400",
           "shivaswamy2012/fig4", "shivaswamy2012/fig5", "yu2006/tables"]


def test_every_experiment_that_keeps_arrays_is_built():
    catalog = committed_catalog("paper")
    status = {name: data_status(e.cfg.dataset.source, probe=False) for name, e in catalog.items()}
    builds = dict(kept_array_builds(catalog, status))
    # Fig. 1's user study (the movie protocol's builder) was never published: nothing to build
    assert not status["shivaswamy2012/fig1"].used
    assert list(builds) == [n for n in KEEPING if status[n].used]
    assert {catalog[n].cfg.dataset.builder for n in KEEPING} == set(KEEPING_BUILDERS)
    others = [n for n, e in catalog.items() if e.cfg.dataset.builder in KEEPING_BUILDERS and n not in KEEPING]
    assert others == ["shivaswamy2012/fig1"]
    if "yu2006/tables" in builds:  # its sensitivity choices of the tasks and the kernel keep their own
        assert len(builds["yu2006/tables"]) == 3

    class Absent:
        used = None

    assert kept_array_builds(catalog, {name: Absent for name in catalog}) == []


@pytest.mark.parametrize("name", KEEPING)
def test_the_keep_step_asks_for_the_files_the_trials_read(asked, name):
    """The files the keep step asks for are those the trials read: every cell's trial (main
    and sensitivity), run by its protocol, asks for one of them, and each is read by some cell."""
    exp = load_experiment(name, "smoke")
    data = f"data/processed/{name.replace('/', '-')}/data.npz"
    for call in kept_array_calls(exp, data).values():
        with pytest.raises(_Asked):
            call()
    kept = set(asked)
    assert len(kept) == len(asked)  # one call per distinct file
    asked.clear()
    read = set()
    for cell in exp.all_cells:
        run_exp, run_cell = exp.variant_of(cell)
        with pytest.raises(_Asked):
            PROTOCOLS[run_exp.cfg.experiment.protocol].run(trial_spec(run_exp, run_cell, 1, data))
        read.add(asked.pop())
    assert read == kept


def test_the_keep_step_writes_what_it_kept(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(coactive_movies, "movie_setup", lambda *a, **k: calls.append((a, k)))
    out = tmp_path / "kept.json"
    # a stand-in data file: its check against a manifest (test_files_in_checkout.py) passed over
    monkeypatch.setattr("rankrepro.data.processed_check.check_processed", lambda p, root=None: p)
    job_keep_arrays(["shivaswamy2012/fig5"], "smoke", "config", {"shivaswamy2012/fig5": "d.npz"}, str(out))
    (args, kwargs), = calls
    assert args[0] == "d.npz" and args[1] == 2012
    assert [k.split(" ")[0] for k in json.loads(out.read_text())["seconds"]] == ["shivaswamy2012/fig5"]


def test_the_compile_step_runs_every_learner_of_every_registry(tmp_path):
    """`make data`'s compile_kernels step (rankrepro.jobs.job_compile_kernels) runs each
    learner of each protocol's registry through its protocol's calls (what compiles its
    kernels for the types the protocols pass): its record names every one with a family."""
    from rankrepro.conformance import family_of
    from rankrepro.jobs import job_compile_kernels

    out = tmp_path / "compiled_kernels.json"
    job_compile_kernels(str(out), log=str(tmp_path / "log"))
    seconds = json.loads(out.read_text())["seconds"]
    want = {name for p in PROTOCOLS.values() for name, cls in p.estimators.items() if family_of(cls) is not None}
    # and the coactive movie protocol's simulated user, which no learner's calls reach, and the
    # finiteness check of large inputs, which the tiny data sets never reach
    assert set(seconds) == want | {"coactive movie feedback", "finiteness check of large inputs"} \
        and all(s >= 0 for s in seconds.values())
    assert {"prank", "oap_bpm", "perceptron", "ranksvm", "gp_model", "preference_perceptron"} <= want
    from rankrepro.algorithms.coactive import _sorted_feedback

    assert _sorted_feedback.signatures  # compiled (or read back from Numba's cache) for the protocol's types
    from rankrepro.algorithms._rows import all_finite

    assert all_finite.signatures  # the finiteness check of large inputs, likewise
    assert "protocol's calls ran" in (tmp_path / "log").read_text()
