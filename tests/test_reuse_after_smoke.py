"""`rankrepro run` after `make smoke` (issue 57, item 5): the workflow's smoke run keeps one cells
file per artefact (all_cells.parquet with its index, pipeline/batchcache.py), and the command
line takes the cells that index says are current instead of computing them again."""
import pandas as pd

import rankrepro.pipeline.runner as runner
from conftest import ROOT
from rankrepro.cli import main

NAME = "crammer_singer2005/fig6"


def test_run_reuses_make_smokes_cells(tmp_path, monkeypatch, capsys):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "config").symlink_to(ROOT / "config")
    monkeypatch.chdir(repo)
    from rankrepro.jobs import job_run_all_cells
    from rankrepro.pipeline.catalog import load_experiment

    # what make smoke's job for this artefact leaves (batch_cells=paper)
    cells_file = repo / "runs/smoke/results" / NAME / "all_cells.parquet"
    cells_file.parent.mkdir(parents=True)
    job_run_all_cells(NAME, "smoke", str(ROOT / "config"), str(cells_file))
    exp = load_experiment(NAME, "smoke")
    seen = []
    real = runner.run_cell
    monkeypatch.setattr(runner, "run_cell", lambda e, c, *a, **kw: seen.append(c) or real(e, c, *a, **kw))
    out = tmp_path / "out"
    assert main(["run", NAME, "--out", str(out)]) == 0
    assert seen == []  # every cell taken from make smoke's file
    err = capsys.readouterr().err
    n = len(exp.all_cells)
    assert f"{NAME} [smoke]: {n} cells: {n} reused (runs/smoke/results/ all_cells.parquet), 0 computed" in err, err
    # each cell its own results file, the rows the smoke run computed, with its fingerprint file
    full = pd.read_parquet(cells_file)
    for c in exp.all_cells:
        p = out / "results" / NAME / "cells" / f"{c.id}.parquet"
        pd.testing.assert_frame_equal(pd.read_parquet(p), full[full["cell"] == c.id].reset_index(drop=True))
        assert p.with_suffix(".fingerprint").is_file()
    # a cell edited by hand in that file no longer matches its index: every cell computed again
    full.loc[0, "value"] += 1.0
    full.to_parquet(cells_file)
    assert main(["run", NAME, "--out", str(tmp_path / "out2")]) == 0
    assert len(seen) > 0
