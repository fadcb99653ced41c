"""The workflow end to end in a scratch copy: an artefact whose data is absent is reported
as not run and every other artefact still completes; a second run does nothing."""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from conftest import scratch_workflow

#: the workflow or the command line end to end over minutes: `make test-long` (run by CI), not `make test`
pytestmark = pytest.mark.long

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"

ABSENT_DATASET = """\
name: eachmovie_votes
builder: cf_viewer_stream
source: eachmovie
description: "EachMovie votes (withdrawn; no substitute in this test)"
n_ranks: 6
"""

ABSENT_EXPERIMENT = """\
# @package _global_
defaults:
  - /algorithm@algorithms.prank: prank
  - override /dataset: eachmovie_votes

experiment:
  paper: crammer_singer2005
  artefact: needs_data
  title: "An artefact whose data cannot be had"
  kind: figure
  n_trials: 500
  n_train: 200
  seed: 1
  metrics: [online_rank_loss]
  figure: {panels: [{title: x}]}
"""


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    w = tmp_path_factory.mktemp("wf")
    scratch_workflow(w)
    (w / "config" / "experiment" / "crammer_singer2005").mkdir(parents=True)
    shutil.copy(ROOT / "config/experiment/crammer_singer2005/fig6.yaml", w / "config/experiment/crammer_singer2005/")
    (w / "config/experiment/crammer_singer2005/needs_data.yaml").write_text(ABSENT_EXPERIMENT)
    (w / "config/dataset/eachmovie_votes.yaml").write_text(ABSENT_DATASET)
    return w


def snakemake(w, *args, targets=()):
    env = {k: v for k, v in os.environ.items() if k != "RANKREPRO_DATA_MIRROR"}
    env["RANKREPRO_OFFLINE"] = "1"
    return subprocess.run([str(SNAKEMAKE), *targets, "--cores", "2", "--config", "scale=smoke", *args], cwd=w,
                          env=env, capture_output=True, text=True, timeout=600)


def test_snakemake_report_before_anything_ran(workdir):
    """`snakemake --report` on a workflow nothing of which has run yet: a report (of nothing
    made), not "marked for report but does not exist"."""
    r = snakemake(workdir, "--report", "before.html")
    assert r.returncode == 0, r.stderr[-3000:]
    assert (workdir / "before.html").stat().st_size > 0
    assert not (workdir / "runs").exists() or not list((workdir / "runs").rglob("*.json"))  # and it ran nothing


def test_absent_data_is_not_run_and_the_rest_completes(workdir):
    r = snakemake(workdir)
    assert r.returncode == 0, r.stderr[-3000:]
    out = workdir / "runs" / "smoke"
    rec = json.loads((out / "results/crammer_singer2005/needs_data.json").read_text())
    assert rec["status"] == "not run" and "eachmovie" in rec["reason"]
    assert "withdrawn" in rec["how_to_obtain"]
    assert not (out / "results/crammer_singer2005/needs_data/cells").exists()
    ok = json.loads((out / "results/crammer_singer2005/fig6.json").read_text())
    assert ok["status"] == "ran" and (out / "figures/crammer_singer2005/fig6.png").stat().st_size > 10_000
    html = (out / "results/report/index.html").read_text()
    assert "Not run" in html and "An artefact whose data cannot be had" in html and "1</b>artefacts not run" in html


def test_second_run_does_nothing(workdir):
    r = snakemake(workdir, "--dry-run")
    assert r.returncode == 0
    assert "Nothing to be done" in r.stdout + r.stderr


def test_snakemake_report(workdir):
    """Snakemake's own report (--report) of the finished run: the figures and tables by paper
    and the replication report."""
    assert snakemake(workdir).returncode == 0  # the run (nothing to do when an earlier test made it)
    r = snakemake(workdir, "--report", "snakemake_report.html")
    assert r.returncode == 0, r.stderr[-3000:]
    html = (workdir / "snakemake_report.html").read_text()
    assert "Replication report" in html and "crammer_singer2005" in html and "fig6" in html


def test_snakemake_report_with_an_experiment_not_run_yet(workdir):
    """A new experiment config, not run yet: --report still documents everything made
    (and runs nothing)."""
    new = workdir / "config/experiment/crammer_singer2005/fig6_copy.yaml"
    new.write_text((workdir / "config/experiment/crammer_singer2005/fig6.yaml").read_text()
                   .replace("artefact: fig6", "artefact: fig6_copy"))
    try:
        r = snakemake(workdir, "--report", "partial.html")
        assert r.returncode == 0, r.stderr[-3000:]
        html = (workdir / "partial.html").read_text()
        assert "fig6" in html and "Replication report" in html
        assert not (workdir / "runs/smoke/results/crammer_singer2005/fig6_copy.json").exists()
    finally:
        new.unlink()


def test_a_cell_another_experiment_computes_is_taken_not_computed(workdir):
    """An experiment whose cells are fig6's (another artefact name, the same settings, seed and
    data): its cell jobs take fig6's results (their logs say so, nothing computed), relabelled,
    and its record's numbers are fig6's."""
    assert snakemake(workdir).returncode == 0  # fig6 made (nothing to do when an earlier test made it)
    twin = workdir / "config/experiment/crammer_singer2005/fig6_twin.yaml"
    twin.write_text((workdir / "config/experiment/crammer_singer2005/fig6.yaml").read_text()
                    .replace("artefact: fig6", "artefact: fig6_twin"))
    try:
        # its record only (its figure and the report are the other tests' business)
        r = snakemake(workdir, targets=["runs/smoke/results/crammer_singer2005/fig6_twin.json"])
        assert r.returncode == 0, r.stderr[-3000:]
        out = workdir / "runs/smoke"
        cells = sorted((out / "results/crammer_singer2005/fig6_twin/cells").glob("*.parquet"))
        assert cells
        for f in cells:
            log = (out / "logs/crammer_singer2005/fig6_twin" / f"{f.stem}.log").read_text()
            # taken from fig6's cell of the same fingerprint that computes it: the cell of the same id,
            # or, for a reading of the multiverse that is itself a copy within fig6 (MCP under another
            # WH step size), the cell it copies
            src = re.search(r"the same computation as runs/smoke/results/crammer_singer2005/fig6/cells/(\S+)\.parquet", log)
            assert src, log
            assert src.group(1) == f.stem or ("~multiverse=" in f.stem and src.group(1).split("~")[0] == f.stem.split("~")[0])
            a = pd.read_parquet(f)
            b = pd.read_parquet(out / "results/crammer_singer2005/fig6/cells" / f.name)
            assert set(a["artefact"]) == {"fig6_twin"}
            pd.testing.assert_frame_equal(a.drop(columns="artefact"), b.drop(columns="artefact"), check_exact=True)
        rec, orig = (json.loads((out / f"results/crammer_singer2005/{n}.json").read_text()) for n in ("fig6_twin", "fig6"))
        assert rec["status"] == "ran" and rec["table"] == orig["table"]
    finally:
        twin.unlink()
