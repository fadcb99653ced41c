"""Harrington's ``vote_output`` (OAP-Bagg, OAP-VP and voted PRank: the final rule's mean rank
or the nearest rank to it) is prediction-only: the online predictions, and so the whole run,
never read it.  A sensitivity cell that differs from another cell in it alone is read off that
cell's runs (rankrepro.pipeline.cells.reread_of), bit for bit what it computes on its own: its
main cell's (``vote_output=rank``) or an earlier sensitivity cell's (the multiverse's
``centred.rank.freund_schapire.held_out`` reads ``instance_encoding=centred``)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankrepro.algorithms import ONLINE
from rankrepro.pipeline.catalog import load_experiment
from rankrepro.pipeline.cells import reread_of, rereads_of, reused_trials
from rankrepro.pipeline.runner import default_data_path, run_cell, trial_spec
from rankrepro.protocols.online import online_trial, online_trial_rereads

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def cf():
    return load_experiment("harrington2003/table2_cystic_fibrosis", "smoke")


@pytest.fixture(scope="module")
def cf_paper():
    return load_experiment("harrington2003/table2_cystic_fibrosis", "paper")


def test_which_learners_declare_a_prediction_only_parameter():
    """Exactly the three learners with Harrington's mean-rank output."""
    declared = {name for name, cls in ONLINE.items() if getattr(cls, "PREDICT_ONLY", ())}
    assert declared == {"oap_bagg", "oap_vp", "voted_prank"}
    assert all(ONLINE[n].PREDICT_ONLY == ("output",) for n in declared)


@pytest.mark.parametrize("estimator,extra", [("oap_vp", {"N": 7, "tau": 0.4}), ("oap_bagg", {"N": 5, "tau": 0.7}),
                                             ("voted_prank", {})])
def test_the_output_changes_no_online_prediction_and_a_reread_is_the_trial_itself(cf, estimator, extra):
    """One run read under output=mean and output=rank gives each spec's rows exactly as its own
    trial gives them; the online curve is the same under both, the test loss is not (so the
    test can fail)."""
    exp = cf
    cell = exp.cell("oap_vp-tau0.3")
    base = replace(trial_spec(exp, cell, 0, default_data_path(exp)), estimator=estimator,
                   params={**extra, "output": "mean"})
    other = replace(base, params={**extra, "output": "rank"})
    mine, (theirs,) = online_trial_rereads(base, [other])
    assert mine == online_trial(base)
    assert theirs == online_trial(other)
    curve = lambda rows: [r for r in rows if r[0] == "online_rank_loss"]  # noqa: E731
    assert curve(mine) == curve(theirs)
    assert [r for r in mine if r[0] == "test_rank_loss"] != [r for r in theirs if r[0] == "test_rank_loss"]


def test_a_spec_that_differs_in_more_than_the_output_is_refused(cf):
    exp = cf
    spec = trial_spec(exp, exp.cell("oap_vp-tau0.3"), 0, default_data_path(exp))
    with pytest.raises(ValueError, match="differs in more than output"):
        online_trial_rereads(spec, [replace(spec, params={**spec.params, "tau": 0.2})])
    with pytest.raises(ValueError, match="differs in more than output"):
        online_trial_rereads(spec, [replace(spec, n_test=spec.n_test + 1)])
    prank = trial_spec(exp, exp.cell("prank"), 0, default_data_path(exp))
    with pytest.raises(ValueError, match="differs in more than nothing"):
        online_trial_rereads(prank, [prank])


def test_which_paper_cells_are_read_off_another_cells_fits(cf_paper):
    """Cystic fibrosis at paper scale: the 7 vote_output=rank cells read their main cells; a
    reading of the multiverse with rounded votes reads the cell of the same reading with mean
    votes (an instance_encoding or test_pairs cell, or another reading's) where that cell
    computes its own fits; every cell read differs from its reader in the output alone, and no
    cell both reads and is read."""
    exp = cf_paper
    read = {c.id: reread_of(exp, c) for c in exp.sensitivity_cells}
    read = {k: v for k, v in read.items() if v}
    cells = {c.id: c for c in [*exp.cells, *exp.sensitivity_cells]}
    assert {k: v for k, v in read.items() if "~vote_output=" in k} == \
        {c.id: c.base for c in exp.sensitivity_cells if c.choice == "vote_output"}
    assert len([k for k in read if "~vote_output=" in k]) == 7
    for k, v in read.items():
        a, b = cells[k], cells[v]
        assert a.base == (b.base or b.id) and a.params["output"] == "rank" and b.params["output"] == "mean", (k, v)
        assert {x: y for x, y in a.params.items() if x != "output"} == \
            {x: y for x, y in b.params.items() if x != "output"}, (k, v)
    assert not set(read) & set(read.values())
    assert all(reused_trials(exp, exp.cell(k)) is None for k in read)
    assert read["oap_vp-tau0.3~multiverse=centred.rank.freund_schapire.held_out"] == \
        "oap_vp-tau0.3~instance_encoding=centred"
    assert rereads_of(exp, "prank~instance_encoding=centred") == []


def test_a_sensitivity_cell_computes_its_readers_with_it(cf):
    """run_cell of instance_encoding=centred fills its reader's frame, equal to the reader
    computed on its own; its own rows are unchanged."""
    exp = cf
    base = "oap_bagg-tau0.3~instance_encoding=centred"
    rids = rereads_of(exp, base)  # the multiverse's readings with rounded votes on this encoding
    assert rids == ["oap_bagg-tau0.3~multiverse=centred.rank.freund_schapire.held_out",
                    "oap_bagg-tau0.3~multiverse=centred.rank.harrington.held_out"]
    rid = rids[0]
    read: dict[str, pd.DataFrame] = {}
    mine = run_cell(exp, base, rereads=read)
    assert list(read) == rids
    pd.testing.assert_frame_equal(mine, run_cell(exp, base), check_exact=True)
    alone = run_cell(exp, rid)
    pd.testing.assert_frame_equal(read[rid], alone, check_exact=True)
    assert json.loads(alone["params"].iloc[0])["output"] == "rank"
    assert not np.array_equal(mine.loc[mine.metric == "test_rank_loss", "value"].to_numpy(),
                              alone.loc[alone.metric == "test_rank_loss", "value"].to_numpy())


def test_a_pack_hands_its_readers_their_frames(cf, tmp_path, monkeypatch):
    """A pack holding a cell and its reader computes the reader from the same runs, in memory
    (nothing left in the cache folder), bit for bit the reader's own job; a pack whose base is
    current computes the reader on its own."""
    from rankrepro.jobs import job_run_cell, job_run_cells

    monkeypatch.setenv("RANKREPRO_CACHE_DIR", str(tmp_path / "cache"))
    base = "oap_vp-tau0.2~instance_encoding=rank_const"
    rid, other = rereads_of(cf, base)
    alone, pack = tmp_path / "alone", tmp_path / "pack"
    for d in (alone, pack):
        d.mkdir()
    job_run_cell(cf.name, rid, "smoke", str(ROOT / "config"), str(alone / f"{rid}.parquet"),
                 fingerprint=str(alone / f"{rid}.fingerprint"), log=str(alone / f"{rid}.log"))
    done: list[dict] = []
    job_run_cells(cf.name, [base, rid, other], "smoke", str(ROOT / "config"), str(pack), str(pack),
                  log=str(pack / "pack.log"), done=done)
    assert [d["kept"] for d in done] == [False, False, False]
    assert not list((tmp_path / "cache").rglob("*.parquet"))  # handed over in memory, nothing left
    pd.testing.assert_frame_equal(pd.read_parquet(pack / f"{rid}.parquet"), pd.read_parquet(alone / f"{rid}.parquet"),
                                  check_exact=True)
    assert "read off cell oap_vp-tau0.2~instance_encoding=rank_const's fits in this job" in \
        (pack / f"{rid}.log").read_text()
    assert f"the same fits read for {rid}, {other} (cells of this job)" in (pack / f"{base}.log").read_text()
    a, b = (json.loads((d / f"{rid}.fingerprint").read_text()) for d in (alone, pack))
    assert {k: v for k, v in a.items() if k != "sha256"} == {k: v for k, v in b.items() if k != "sha256"}
    # the reader stale, its base current: the reader computes its own runs, the same rows
    (pack / f"{rid}.fingerprint").unlink()
    job_run_cells(cf.name, [base, rid], "smoke", str(ROOT / "config"), str(pack), str(pack),
                  log=str(pack / "pack.log"))
    assert "read off" not in (pack / f"{rid}.log").read_text().split("cell 2 of 2")[-1]
    pd.testing.assert_frame_equal(pd.read_parquet(pack / f"{rid}.parquet"), pd.read_parquet(alone / f"{rid}.parquet"),
                                  check_exact=True)
