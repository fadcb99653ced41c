"""One object per protocol owns what the protocol means (issue 15): its learners, the spec
of a trial, the trial, its validation, its size text.  A new protocol is one module and one
registry line; a config sets only the fields its protocol reads."""
from dataclasses import dataclass

import pytest

from rankrepro.pipeline.catalog import load_experiment
from rankrepro.pipeline.config_errors import ConfigError
from rankrepro.pipeline.runner import run_cell
from rankrepro.pipeline.cells import cell_fingerprint
from rankrepro.protocols import PROTOCOLS, Protocol, Spec
from rankrepro.protocols.base import FIELDS
from conftest import committed_catalog


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_each_protocol_is_one_complete_object(name):
    p = PROTOCOLS[name]
    assert isinstance(p, Protocol) and p.name == name
    assert len(p.estimators) > 0 and p.uses <= FIELDS and p.unit
    for key in p.fingerprint_constants:
        group, _, fld = key.partition(".")
        assert group in ("experiment", "dataset") and fld in FIELDS - p.uses, key


def test_every_experiment_builds_its_specs_and_size_text():
    """Each experiment's protocol makes the spec of its first trial (a Spec) and says the size."""
    from rankrepro.pipeline.runner import trial_spec

    seen = set()
    for name, exp in committed_catalog("smoke").items():
        p = PROTOCOLS[exp.cfg.experiment.protocol]
        seen.add(p.name)
        spec = trial_spec(exp, exp.cells[0], 0, data_path="unused")
        assert isinstance(spec, Spec) and spec.estimator == exp.cells[0].estimator
        assert str(exp.n_trials) in p.size_text(exp) or p.name == "ranked_list"
    assert seen == set(PROTOCOLS), "a protocol no experiment uses is untested here"


@pytest.mark.parametrize("name, override", [
    ("yu2006/tables", "experiment.n_train=7"),  # collab_gp draws its training items itself
    ("elsas2008/sec3_table", "dataset.n_ranks=5"),  # given lists: no ranks to declare
])
def test_a_former_placeholder_changes_no_fingerprint(name, override):
    """The fields a protocol hashes as constants (its former placeholders) may be left out or
    set to anything: the cells stay current."""
    a = load_experiment(name, "smoke")
    b = load_experiment(name, "smoke", overrides=[override])
    assert [cell_fingerprint(a, c) for c in a.cells] == [cell_fingerprint(b, c) for c in b.cells]


def test_a_field_the_protocol_reads_is_required():
    """online reads n_train (>= 1) and the number of ranks; the key is named."""
    with pytest.raises(ConfigError) as e:
        load_experiment("harrington2003/table1", "smoke", overrides=["experiment.n_train=0"])
    assert e.value.key == "experiment.n_train"
    with pytest.raises(ConfigError) as e:
        load_experiment("harrington2003/table1", "smoke", overrides=["dataset.n_ranks=null"])
    assert e.value.key == "dataset.n_ranks"


@dataclass(frozen=True)
class CountSpec(Spec):
    trial: int


class Count(Protocol):
    """A protocol made for this test: each trial reports its own number."""

    name = "count"
    uses = frozenset()

    def __init__(self):
        from rankrepro.algorithms.rankers import LISTS

        self.estimators = LISTS

    def spec(self, exp, cell, trial, data_path, data_seed, algo_seed):
        return CountSpec(cell.estimator, dict(cell.params), trial)

    def run(self, spec):
        return [("list_ap", None, float(spec.trial))]


def test_a_new_protocol_is_one_object_and_one_registry_line(monkeypatch):
    monkeypatch.setitem(PROTOCOLS, "count", Count())  # the registry line
    exp = load_experiment("elsas2008/sec3_table", "smoke",
                          overrides=["experiment.protocol=count", "experiment.n_trials=3"])
    df = run_cell(exp, exp.cells[0].id)
    assert exp.n_trials >= 2  # the smoke scale may cap the trials
    assert sorted(df.loc[df.metric == "list_ap", "value"]) == [float(t) for t in range(exp.n_trials)]
    with pytest.raises(ConfigError) as e:  # its learners are its own
        load_experiment("elsas2008/sec3_table", "smoke",
                        overrides=["experiment.protocol=count", "algorithms.list.estimator=prank"])
    assert e.value.key == "algorithms.list.estimator"
