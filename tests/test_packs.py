"""Cells of a few seconds each run several to a job (a pack, rankrepro.pipeline.schedule.cell_packs;
the workflow's rules cells_<paper>_<artefact>_<k>): which cells share a job, that a pack's job
writes each cell's results and fingerprint exactly as the cell's own job does, that it
recomputes only the cells that are not current, and how the pipeline benchmark counts it."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pandas as pd
import pytest

from rankrepro.jobs import job_run_cell, job_run_cells
from rankrepro.pipeline.catalog import load_experiment
from rankrepro.pipeline.cells import reread_of, rereads_of, reused_trials, twin_cells
from rankrepro.pipeline.schedule import (PACK_CELL_S, PACK_CELLS, PACK_S, _waiting, cell_packs, load_seconds,
                                         write_seconds)

ROOT = Path(__file__).resolve().parents[1]
TIMING = {"fit_seconds", "train_seconds", "cpu_seconds", "selected_train_seconds", "selected_pairs_per_second"}


def _numbers(df: pd.DataFrame) -> pd.DataFrame:
    return df[~df["metric"].isin(TIMING)].reset_index(drop=True)


def _check_packs(exp, packs, seconds, copies):
    """The rules a pack obeys, whatever the measured seconds."""
    order = [c.id for c in exp.all_cells]
    seen: set[str] = set()
    for p in packs:
        assert 2 <= len(p) <= PACK_CELLS
        assert not seen & set(p), "a cell in two packs"
        seen |= set(p)
        # in the experiment's order, but for readers, each right after the cells before it
        # whose fits it reads (pipeline.cells.reread_of)
        computing = [c for c in p if reread_of(exp, exp.cell(c)) is None]
        assert [order.index(c) for c in computing] == sorted(order.index(c) for c in computing)
        # all copies of a twin, or none: no pack waits for a pack of its own experiment that waits for it
        assert len({c in copies for c in p}) == 1
        for c in p:
            assert seconds[f"{exp.name}/{c}"] <= PACK_CELL_S
            cell = exp.cell(c)
            assert reused_trials(exp, cell) is None
            # a reader is packed right after the cell whose fits it reads, with the other readers
            base = reread_of(exp, cell)
            if base is not None:
                assert base in p and p.index(base) < p.index(c)
                assert set(p[p.index(base) + 1:p.index(c)]) <= set(_waiting(exp)[base])
            # a cell others wait for: only readers wait, and all of them are in its pack
            for w in _waiting(exp).get(c, []):
                assert reread_of(exp, exp.cell(w)) == c and w in p
        # a pack stops growing at PACK_S: only its last cell (with its readers) may take it there
        last = p.index(computing[-1])
        assert sum(seconds[f"{exp.name}/{c}"] for c in p[:last]) < PACK_S
    return seen


def test_the_paper_scale_packs_follow_their_rules():
    """On the committed catalog and the committed measured seconds: most cells share a job
    (the short ones), the long ones and those whose jobs hand results to each other keep
    their own."""
    from rankrepro.data.status import data_status
    from rankrepro.pipeline.catalog import default_cache_dir, load_catalog

    cat = load_catalog("paper", config_dir=ROOT / "config", cache_dir=default_cache_dir())
    used = {n: s.used for n, e in cat.items() for s in [data_status(e.cfg.dataset.source, probe=False)] if s.runnable}
    twins = twin_cells(cat, used)
    seconds = load_seconds(ROOT / "rules" / "cell_seconds.json")
    n_cells = n_packed = n_packs = 0
    for name in used:
        exp = cat[name]
        copies = {c for (n, c) in twins if n == name}
        packs = cell_packs(exp, seconds, copies=copies)
        packed = _check_packs(exp, packs, seconds, copies)
        # the cells measured (a cell never measured, e.g. a reading of the multiverse added since the
        # measurement, runs in a job of its own until the next measurement)
        n_cells += sum(f"{name}/{c.id}" in seconds for c in exp.all_cells)
        n_packed += len(packed)
        n_packs += len(packs)
        # every short cell with no hand-over is in a pack unless it is the last one of its kind
        for c in exp.all_cells:
            if f"{name}/{c.id}" in seconds and seconds[f"{name}/{c.id}"] > PACK_CELL_S:
                assert c.id not in packed
    # Yu et al.'s long CGPOR cells, the draws=10 and the ordinal_predict=median cells run alone
    yu = cat["yu2006/tables"]
    yu_packed = {c for p in cell_packs(yu, seconds) for c in p}
    assert not any("draws=10" in c or "ordinal_predict=median" in c for c in yu_packed)
    assert "cgpor-n_items400" not in yu_packed
    assert n_packed > n_cells / 2 and n_packs < n_packed / 3


def test_packs_of_a_made_up_measurement():
    """The grouping itself: consecutive short cells until their seconds reach PACK_S; a cell
    never measured, or too long, stays alone; a pack of one is no pack."""
    exp = load_experiment("harrington2003/table1", "smoke")
    ids = [c.id for c in exp.all_cells]
    seconds = {f"{exp.name}/{c}": 10.0 for c in ids}
    seconds[f"{exp.name}/{ids[2]}"] = PACK_CELL_S + 1  # too long: alone
    del seconds[f"{exp.name}/{ids[5]}"]  # never measured: alone
    packs = cell_packs(exp, seconds)
    _check_packs(exp, packs, seconds, set())
    # voted_prank's readers right after it (vote_output=rank, and the multiverse's reading that at smoke
    # scale, its 5,000 rounds capped like the main 50,000, is the same: read off its runs); 40 s reached
    # with them (a pack's last computing cell takes its readers with it)
    readers = ["voted_prank~vote_output=rank", "voted_prank~multiverse=rank.freund_schapire.5000"]
    assert ids[1] == "voted_prank" and rereads_of(exp, ids[1]) == readers
    assert packs[0] == [ids[0], ids[1], *readers]
    # a reader measured long: neither it nor the cell it reads joins a pack
    seconds["harrington2003/table1/voted_prank~vote_output=rank"] = PACK_CELL_S + 1
    flat = [c for p in cell_packs(exp, seconds) for c in p]
    assert ids[1] not in flat and not set(readers) & set(flat) and ids[0] in flat
    seconds["harrington2003/table1/voted_prank~vote_output=rank"] = 10.0
    flat = [c for p in packs for c in p]
    assert ids[2] not in flat and ids[5] not in flat
    assert cell_packs(exp, {f"{exp.name}/{ids[0]}": 1.0}) == []  # one short cell: no pack
    # copies of a twin go apart from the cells that compute
    plain = [c for c in ids if not rereads_of(exp, c) and reread_of(exp, exp.cell(c)) is None]
    copies = set(plain[3:7])
    packs = cell_packs(exp, {f"{exp.name}/{c}": 1.0 for c in ids}, copies=copies)
    assert copies in [set(p) for p in packs]
    # a copy computes no runs for readers: it and its readers keep their own jobs
    packs = cell_packs(exp, {f"{exp.name}/{c}": 1.0 for c in ids}, copies={"oap_vp-tau0.3"})
    assert not {"oap_vp-tau0.3", "oap_vp-tau0.3~vote_output=rank"} & {c for p in packs for c in p}
    _check_packs(exp, packs, {f"{exp.name}/{c}": 1.0 for c in ids}, {"oap_vp-tau0.3"})


def test_a_pack_writes_what_each_cells_own_job_writes(tmp_path):
    """Three cells in one pack against each one's own job: the same rows (timing metrics
    apart) and the same fingerprint files; then, with one cell's fingerprint removed (as the
    workflow removes a stale one), the pack's job recomputes that cell only."""
    experiment, cells = "harrington2003/table1", ["prank", "widrow_hoff-eta0.2", "oap_bpm-tau0.3"]
    alone, pack = tmp_path / "alone", tmp_path / "pack"
    for d in (alone, pack):
        d.mkdir()
    for c in cells:
        job_run_cell(experiment, c, "smoke", str(ROOT / "config"), str(alone / f"{c}.parquet"),
                     fingerprint=str(alone / f"{c}.fingerprint"), log=str(alone / f"{c}.log"))
    done: list[dict] = []
    job_run_cells(experiment, cells, "smoke", str(ROOT / "config"), str(pack), str(pack), log=str(pack / "pack.log"),
                  done=done)
    assert [d["cell"] for d in done] == cells and not any(d["kept"] for d in done)
    for c in cells:
        pd.testing.assert_frame_equal(_numbers(pd.read_parquet(pack / f"{c}.parquet")),
                                      _numbers(pd.read_parquet(alone / f"{c}.parquet")), check_exact=True)
        a, b = (json.loads((d / f"{c}.fingerprint").read_text()) for d in (alone, pack))
        assert {k: v for k, v in a.items() if k != "sha256"} == {k: v for k, v in b.items() if k != "sha256"}
        assert (pack / f"{c}.log").read_text().count(c) >= 2
    # one cell stale: only it is computed again, the others' files are left as they were
    before = {c: (pack / f"{c}.parquet").read_bytes() for c in cells}
    (pack / f"{cells[1]}.fingerprint").unlink()
    done = []
    job_run_cells(experiment, cells, "smoke", str(ROOT / "config"), str(pack), str(pack), log=str(pack / "pack.log"),
                  done=done)
    assert [(d["cell"], d["kept"]) for d in done] == [(cells[0], True), (cells[1], False), (cells[2], True)]
    assert (pack / f"{cells[1]}.fingerprint").is_file()
    for c in (cells[0], cells[2]):
        assert (pack / f"{c}.parquet").read_bytes() == before[c]
    # a results file edited by hand is not current either
    (pack / f"{cells[2]}.parquet").write_bytes(before[cells[0]])
    done = []
    job_run_cells(experiment, cells, "smoke", str(ROOT / "config"), str(pack), str(pack), log=str(pack / "pack.log"),
                  done=done)
    assert [d["kept"] for d in done] == [True, True, False]
    assert "2 of them current, kept" in (pack / "pack.log").read_text()


def _bench():
    spec = importlib.util.spec_from_file_location("bench_pipeline", ROOT / "scripts" / "bench_pipeline.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_benchmark_counts_a_pack_by_its_cells(tmp_path):
    """A pack's core-minutes go to the main and sensitivity rows in proportion to its cells'
    seconds of work; its cells' own seconds (not the pack's) are what rules/cell_seconds.json
    keeps, and a cell kept as current keeps its old value."""
    bench = _bench()
    jobs = [{"rule": "run_cells", "experiment": "harrington2003/table1", "cell": None, "startup_s": 0.5,
             "work_s": 4.0, "cpu_s": 6.0, "threads": 1, "end": 10.0,
             "cells": [{"cell": "prank", "work_s": 3.0, "kept": False},
                       {"cell": "prank~training_rounds=5000", "work_s": 1.0, "kept": False},
                       {"cell": "voted_prank", "work_s": 0.0, "kept": True}]},
            {"rule": "run_cell", "experiment": "harrington2003/table1", "cell": "oap_bpm-tau0.3", "startup_s": 0.5,
             "work_s": 2.0, "cpu_s": 3.0, "threads": 1, "end": 12.0}]
    w = bench.where_the_time_goes(jobs, "paper", twins=False)
    row = w["papers"]["harrington2003"]
    assert row["jobs"] == 2
    assert row["main"] == pytest.approx((6.0 * 0.75 + 3.0) / 60)
    assert row["sensitivity"] == pytest.approx(6.0 * 0.25 / 60)
    path = tmp_path / "cell_seconds.json"
    path.write_text(json.dumps({"seconds": {"harrington2003/table1/voted_prank": 7.5}}))
    assert write_seconds(jobs, path) == 3
    kept = json.loads(path.read_text())["seconds"]
    assert kept == {"harrington2003/table1/prank": 3.0, "harrington2003/table1/prank~training_rounds=5000": 1.0,
                    "harrington2003/table1/voted_prank": 7.5, "harrington2003/table1/oap_bpm-tau0.3": 2.0}
    r = bench.summarize(jobs, 10.0, None, "paper", 2, None, False, twins=False)
    assert r["cell_jobs"] == 2 and ("harrington2003/table1", "a pack of 3 cells", 4.0) in r["slowest"]


def test_a_pack_builds_the_variants_of_its_cells_only():
    """A pack's job builds the variants its sensitivity cells need (a set of (choice, value)),
    and each of those cells is the one the whole experiment lists, with the same fingerprint."""
    from rankrepro.pipeline.catalog import _rebuilt, load_experiment as compose
    from rankrepro.pipeline.cells import cell_fingerprint
    from omegaconf import OmegaConf

    full = compose("harrington2003/table2_cystic_fibrosis", "smoke")
    cells = [c for c in full.sensitivity_cells][:: max(1, len(full.sensitivity_cells) // 6)][:6]
    wanted = frozenset((c.choice, c.value) for c in cells)
    assert len(wanted) >= 2
    part = _rebuilt(full.name, "smoke", OmegaConf.create(full.to_yaml()), sensitivity=wanted)
    assert {(c.choice, c.value) for c in part.sensitivity_cells} == wanted
    assert len(part.sensitivity_cells) < len(full.sensitivity_cells)
    for c in cells:
        assert cell_fingerprint(*part.variant_of(part.cell(c.id))) == cell_fingerprint(*full.variant_of(c))
