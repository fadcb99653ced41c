"""Long cells first: priorities from the measured seconds (rankrepro.pipeline.schedule)."""
import json

import pytest

from rankrepro.pipeline.catalog import load_experiment
from rankrepro.pipeline.schedule import SECONDS_FILE, artefact_priority, cell_priority, load_seconds, write_seconds
from conftest import committed_catalog


@pytest.fixture(scope="module")
def yu():
    return load_experiment("yu2006/tables", "paper")


def test_a_cell_counts_the_cells_waiting_for_it(yu):
    """cgpor-n_items400's draws=10 cell takes over its trials and its ordinal_predict=median
    cell (and the multiverse's reading of it) read its fits, so they wait for it: the main cell's
    priority carries them all; a cell never measured counts as the median cell."""
    s = {"yu2006/tables/cgpor-n_items400": 60.0, "yu2006/tables/cgpor-n_items400~draws=10": 30.0,
         "yu2006/tables/cgpor-n_items400~ordinal_predict=median": 30.0, "yu2006/tables/gpr-n_items100": 1.0}
    # and the multiverse's reading (em_prior=eq3_30, ordinal_predict=median), which for CGPOR is the
    # median rule read off the same fits (eq3_30 sets the CGPR's EM only): an unmeasured cell, the median
    assert cell_priority(yu, "cgpor-n_items400", s) == 150.0
    assert cell_priority(yu, "cgpor-n_items400~draws=10", s) == 30.0
    assert cell_priority(yu, "cgpor-n_items400~ordinal_predict=median", s) == 30.0
    assert cell_priority(yu, "gpr-n_items100", s) == 1.0 + 30.0  # its draws=10 cell unmeasured: the median
    assert cell_priority(yu, "gpr-n_items200~kernel=zscore", s) == 30.0
    assert cell_priority(yu, "gpr-n_items200~kernel=zscore", {}) == 1.0  # nothing measured: all alike
    assert artefact_priority(yu, s) == pytest.approx(121.0 + 30.0 * (len(yu.all_cells) - 4))


def test_seconds_are_written_and_read_back(tmp_path):
    p = tmp_path / "cell_seconds.json"
    assert load_seconds(p) == {}  # absent
    p.write_text("{not json")
    assert load_seconds(p) == {}  # unreadable: no order rather than a failed workflow
    p.write_text(json.dumps({"seconds": {"a/b/old": 5, "a/b/c": 1}}))
    jobs = [{"rule": "run_cell", "experiment": "a/b", "cell": "c", "work_s": 12.345},
            {"rule": "aggregate", "experiment": "a/b", "cell": None, "work_s": 3.0}]
    assert write_seconds(jobs, p) == 1
    assert load_seconds(p) == {"a/b/old": 5.0, "a/b/c": 12.35}


def test_the_committed_seconds_name_cells_that_exist():
    """Every measured cell is a cell of the catalog (a renamed cell would silently fall back
    to the median), and the long ones are there."""
    from rankrepro.pipeline.catalog import load_catalog

    seconds = load_seconds(SECONDS_FILE)
    assert seconds, f"{SECONDS_FILE} is missing or empty"
    known = {f"{e.name}/{c.id}" for e in committed_catalog("paper").values() for c in e.all_cells}
    assert set(seconds) <= known, sorted(set(seconds) - known)[:5]
