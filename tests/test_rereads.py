"""A sensitivity cell that differs from its main cell only in how the fitted model predicts
(Yu et al.'s ``ordinal_predict=median``) is read off its main cell's fits: computed in the
main cell's job from the same fits, bit for bit what it computes on its own."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankrepro.pipeline.catalog import load_experiment
from rankrepro.pipeline.cells import reread_of, rereads_of, reused_trials
from rankrepro.pipeline.runner import from_reread, run_cell

TIMING = {"fit_seconds"}


def _numbers(df: pd.DataFrame) -> pd.DataFrame:
    return df[~df["metric"].isin(TIMING)].reset_index(drop=True)


@pytest.fixture(scope="module")
def yu():
    return load_experiment("yu2006/tables", "smoke")


@pytest.fixture(scope="module")
def yu_paper():
    return load_experiment("yu2006/tables", "paper")


def test_which_paper_cells_are_read_off_their_main_cells_fits(yu_paper):
    """At paper scale exactly Yu et al.'s eight ordinal_predict=median cells (GPOR and CGPOR at
    each number of training items), each read off its own main cell; no other choice of the
    paper qualifies (Harrington's, the online learners' vote output: test_rereads_online)."""
    exp = yu_paper
    hits = {c.id: reread_of(exp, c) for c in exp.sensitivity_cells}
    read = {k: v for k, v in hits.items() if v}
    one_at_a_time = {k: v for k, v in read.items() if "~multiverse=" not in k}
    assert set(one_at_a_time) == {c.id for c in exp.sensitivity_cells if c.choice == "ordinal_predict"}
    assert len(one_at_a_time) == 8 and all(v == k.split("~")[0] for k, v in one_at_a_time.items())
    # the multiverse's readings with the median rule read the cell of the same reading with the mode
    cells = {c.id: c for c in exp.all_cells}
    for k, v in read.items():
        assert k.endswith("median") and cells[k].params["ordinal_predict"] == "median", k
        assert cells[v].params.get("ordinal_predict", "mode") == "mode" and (cells[v].base or v) == cells[k].base, k
    assert rereads_of(exp, "cgpor-n_items400") == ["cgpor-n_items400~ordinal_predict=median",
                                                   "cgpor-n_items400~multiverse=most.eq3_30.median"]
    assert rereads_of(exp, "gpr-n_items400") == [] and reread_of(exp, exp.cell("gpor-n_items400")) is None
    # a re-reading is not a prefix of trials, and the other way round
    assert all(reused_trials(exp, exp.cell(k)) is None for k in read)
    t1 = load_experiment("harrington2003/table1", "paper")
    t1_read = {c.id: reread_of(t1, c) for c in t1.sensitivity_cells if reread_of(t1, c)}
    assert {k: v for k, v in t1_read.items() if "~multiverse=" not in k} == {
        c.id: c.base for c in t1.sensitivity_cells if c.choice == "vote_output"}
    # the multiverse's rounded-vote readings read the same reading with mean votes
    assert t1_read["oap_bagg-tau0.3~multiverse=rank.freund_schapire.5000"] == "oap_bagg-tau0.3~training_rounds=5000"
    assert all(k.split("=", 1)[1].startswith("rank.") for k in t1_read if "~multiverse=" in k)


def test_a_cell_read_off_its_main_cells_fits_is_its_own_computation(yu):
    """The main cell computed with its readers gives its own rows unchanged and each reader's
    rows exactly as the reader computes them alone (fit_seconds apart: one fit, timed once);
    the two rules do predict differently here, so the test can fail."""
    main = "gpor-n_items100"
    rid = rereads_of(yu, main)[0]  # ordinal_predict=median (the multiverse's median readings after it)
    read: dict[str, pd.DataFrame] = {}
    with_readers = run_cell(yu, main, rereads=read)
    assert list(read) == rereads_of(yu, main)
    pd.testing.assert_frame_equal(_numbers(with_readers), _numbers(run_cell(yu, main)), check_exact=True)
    alone = run_cell(yu, rid)
    pd.testing.assert_frame_equal(_numbers(read[rid]), _numbers(alone), check_exact=True)
    assert (read[rid]["cell"] == rid).all()
    assert json.loads(read[rid]["params"].iloc[0])["ordinal_predict"] == "median"
    mode, median = _numbers(with_readers), _numbers(alone)
    assert not np.array_equal(mode["value"].to_numpy(), median["value"].to_numpy())
    # a reader's own run, or a cell nobody reads, leaves nothing
    other: dict[str, pd.DataFrame] = {}
    run_cell(yu, "gpr-n_items100", rereads=other)
    assert other == {}


def test_a_frame_handed_over_is_checked(yu):
    """A frame that is not the reader's own (another cell, other trials) is refused."""
    main = "gpor-n_items100"
    rid = rereads_of(yu, main)[0]
    read: dict[str, pd.DataFrame] = {}
    mode = run_cell(yu, main, rereads=read)
    assert from_reread(yu, rid, read[rid]).equals(read[rid])
    with pytest.raises(ValueError, match="not this cell's"):
        from_reread(yu, rid, mode)
    with pytest.raises(ValueError, match="not this cell's"):
        from_reread(yu, rid, read[rid][read[rid]["trial"] == 0])


def test_the_jobs_hand_the_frame_over(yu, tmp_path, monkeypatch):
    """The workflow's jobs: the main cell's job leaves the reader's frame in the cache folder,
    the reader's job (its main cell's results as input) takes it, fits nothing, says so, and
    removes it; without a frame the reader computes its trials itself -- the same numbers."""
    from rankrepro.jobs import job_run_cell
    from rankrepro.pipeline.handoff import handoff_path
    from rankrepro.pipeline.runner import default_data_path

    from rankrepro.pipeline.catalog import load_resolved, write_resolved

    monkeypatch.setenv("RANKREPRO_CACHE_DIR", str(tmp_path / "cache"))
    # the jobs read the resolved config as the workflow wrote it, each with the variants it asks for
    resolved = tmp_path / "resolved.yaml"
    write_resolved(yu, resolved)
    monkeypatch.setattr("rankrepro.jobs._load", lambda name, scale, config_dir, sensitivity=True:
                        load_resolved(resolved, name, scale, sensitivity=sensitivity))
    data = default_data_path(yu)
    cells = tmp_path / "cells"
    main = "gpor-n_items100"
    rid = rereads_of(yu, main)[0]

    def job(cell, **kw):
        out, log = cells / f"{cell}.parquet", tmp_path / f"{cell}.log"
        job_run_cell(yu.name, cell, "smoke", "config", str(out), log=str(log), data=[data],
                     fingerprint=str(out.with_suffix(".fingerprint")), **kw)
        return pd.read_parquet(out), log.read_text()

    main_df, main_log = job(main)
    assert handoff_path(yu, rid, data).is_file()
    assert f"the same fits read for {rid}" in main_log
    taken, log = job(rid, reread=str(cells / f"{main}.parquet"))
    assert "taken, nothing fitted" in log and not handoff_path(yu, rid, data).exists()
    computed, log2 = job(rid, reread=str(cells / f"{main}.parquet"))  # no frame left now
    assert "left no frame for it" in log2
    pd.testing.assert_frame_equal(_numbers(taken), _numbers(computed), check_exact=True)
    # the main cell's job leaves nothing for a reader whose results are current
    job(main)
    assert not handoff_path(yu, rid, data).exists()


def test_verify_reused_recomputes_the_taken_cells_on_their_own(yu_paper, tmp_path):
    """`rankrepro verify --reused` plans exactly the cells the workflow takes from another
    cell's job (Yu et al.'s draws=10 and ordinal_predict=median cells), and checks each with
    every trial computed (none taken over from the committed main cell)."""
    from rankrepro.pipeline import verify

    mine = verify.reused_cells({yu_paper.name: yu_paper}, yu_paper)
    taken = {c.id for c in yu_paper.sensitivity_cells if c.choice in ("draws", "ordinal_predict")}
    assert taken <= mine and "cgpor-n_items400~multiverse=most.eq3_30.median" in mine
    # and the multiverse's readings taken from another cell's job: read off their mode cells' fits, or
    # the same computation as another cell (a twin)
    assert all(c.choice == "multiverse" for c in yu_paper.sensitivity_cells if c.id in mine - taken)
    for c in yu_paper.all_cells:  # every cell committed where the plan looks, on the data
        path = verify.committed_cell(yu_paper, c.id, tmp_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    data = Path("data/processed").resolve()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "processed").symlink_to(data)
    p = verify.plan({yu_paper.name: yu_paper}, [yu_paper.name], root=tmp_path, reused=True)
    if p.skipped:
        pytest.skip(f"the data are not preprocessed here: {p.skipped}")
    assert {c for _, c in p.cells} == mine
    some = verify.plan({yu_paper.name: yu_paper}, [yu_paper.name], root=tmp_path, reused=True,
                       patterns=["*~ordinal_predict=*"])
    assert {c for _, c in some.cells} == {c for c in mine if "ordinal_predict" in c} and len(some.cells) == 8
    assert not verify.plan({yu_paper.name: yu_paper}, [yu_paper.name], root=tmp_path).cells[0][1] in mine
