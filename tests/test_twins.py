"""Cells computed twice: a cell with the same fingerprint on the same data as another's (the
arena repeats cells of the papers' experiments; two open protocol choices can set the same
variant) takes that twin's results instead of computing them again (pipeline.cells.twin_cells,
pipeline.runner.from_twin)."""
import json

import pandas as pd
import pytest
from conftest import ROOT, committed_catalog

from rankrepro.data.status import data_status
from rankrepro.metrics import TIMING_METRICS
from rankrepro.pipeline.cells import cell_fingerprint, twin_cells
from rankrepro.pipeline.runner import RESULT_COLUMNS, from_twin


@pytest.fixture(scope="module")
def twins():
    cat = committed_catalog("paper")
    used = {n: s.used for n, e in cat.items() for s in [data_status(e.cfg.dataset.source, probe=False)]
            if s.runnable}
    return cat, used, twin_cells(cat, used)


def test_twins_are_the_same_computation_on_the_same_data(twins):
    cat, used, tw = twins
    assert tw, "no cell is computed twice"
    for (name, cid), (src, scid) in tw.items():
        assert (name, cid) != (src, scid) and (src, scid) not in tw  # a source is computed, never copied
        a, b = cat[name], cat[src]
        assert cell_fingerprint(*a.variant_of(a.cell(cid))) == cell_fingerprint(*b.variant_of(b.cell(scid)))
        assert used[name] == used[src]
        assert not (b.paper == "arena" and a.paper != "arena")  # a paper's cell is the one computed


def test_the_letor_arena_takes_no_cell_of_the_papers_seeds_protocol(twins):
    """The LETOR arena runs the rankers fold by fold (protocol letor); Elsas et al.'s artefacts
    replicate over seeds of the five folds (letor_seeds): no arena cell is a twin of a paper's
    cell any more, so each is fingerprinted and computed as its own."""
    cat, used, tw = twins
    for name in ("arena/letor_ohsumed", "arena/letor_mq2008"):
        exp = cat[name]
        assert exp.cfg.experiment.protocol == "letor"
        assert not [c.id for c in exp.all_cells if (name, c.id) in tw]


def test_a_frame_of_another_cell_is_refused(twins):
    cat, _, _ = twins
    exp = cat["arena/letor_ohsumed"]
    frame = pd.read_parquet(ROOT / "results/elsas2008/table4_ohsumed/cells/rankboost.parquet")
    with pytest.raises(ValueError, match="not twin cell ranksvm"):
        from_twin(exp, "ranksvm", frame, twin_cell="ranksvm")
    with pytest.raises(ValueError, match="parameters"):
        from_twin(exp, "ranksvm", frame.assign(cell="ranksvm"), twin_cell="ranksvm")
    one_trial = frame[frame["trial"] == 0].assign(cell="rankboost")
    with pytest.raises(ValueError, match="trials"):
        from_twin(exp, "rankboost", one_trial, twin_cell="rankboost")
    assert json.loads(frame["params"].iloc[0]) == exp.cell("rankboost").params
