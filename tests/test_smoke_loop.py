"""The smoke edit loop (`make smoke`: batch_cells=paper, one job per paper), in a scratch copy of
the workflow with Harrington's synthetic artefacts (table1, fig2) and one whose data are absent
here (table2_eachmovie: a not-run record):

* a second `make smoke` right after the first plans nothing (it used to plan the paper's job
  again: "params changed", the not-run artefact being in the first run's job and not the second's);
* after one more tau in table1's grid, the dry run plans the paper's job for table1's files only,
  running it computes only the new cells (the others' rows are the earlier run's, bit for bit),
  fig2's cells are not touched and its record is rewritten only if table1's claim p-values moved
  (checked against claim_pvalues computed here from the two cell files);
* one more WH step size in table1 leaves table1's claim p-values as they were: fig2's record is
  kept (the log says so), byte for byte;
* after each, again, nothing to do.

Each step is a Snakemake start (~10-20 s) and the first run computes two artefacts at smoke
scale: marked ``long`` (`make test-long`)."""
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from conftest import scratch_workflow

pytestmark = pytest.mark.long

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
OUT = Path("runs/smoke/results/harrington2003")


def smoke(w, *args):
    env = {k: v for k, v in os.environ.items() if k != "RANKREPRO_DATA_MIRROR"}
    env["RANKREPRO_OFFLINE"] = "1"
    r = subprocess.run([str(SNAKEMAKE), "--cores", "2", *args, "--config", "scale=smoke", "batch_cells=paper"],
                       cwd=w, env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    return r.stdout + r.stderr


def planned(text):
    """rule -> count from a dry run's job table ({} when there is nothing to do)."""
    if "Nothing to be done" in text:
        return {}
    table = text.split("Job stats:")[1].split("\ntotal")[0]
    return {ln.split()[0]: int(ln.split()[1]) for ln in table.splitlines()[3:] if ln.strip()}


def sha(p):
    return hashlib.sha256(Path(p).read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    w = scratch_workflow(tmp_path_factory.mktemp("smoke_loop"))
    d = w / "config/experiment/harrington2003"
    d.mkdir(parents=True)
    for f in ("table1.yaml", "fig2.yaml", "_table2_common.yaml", "table2_eachmovie.yaml"):
        shutil.copy(ROOT / "config/experiment/harrington2003" / f, d)
    smoke(w)  # the first `make smoke`
    return w


def test_a_second_smoke_plans_nothing(workdir):
    rec = (workdir / OUT / "table2_eachmovie.json").read_text()
    assert '"not run"' in rec  # the artefact whose data are absent: its not-run record was written
    assert planned(smoke(workdir, "-n")) == {}


def one_more_value(workdir, grid, value, marker):
    """Add ``value`` to table1's ``grid`` line, check the dry run's plan, run, and check what was
    computed and rewritten; returns whether table1's claim p-values moved."""
    from rankrepro.pipeline.batchcache import canonical
    from rankrepro.pipeline.catalog import load_experiment
    from rankrepro.report.aggregate import claim_pvalues

    cfg = workdir / "config/experiment/harrington2003/table1.yaml"
    files = ("table1/all_cells.parquet", "fig2/all_cells.parquet", "fig2.json", "fig2.md", "table1.json")
    # fig2's cells file is an input of the job, not an output: neither rewritten nor touched
    before = {p: (sha(workdir / OUT / p), (workdir / OUT / p).stat().st_mtime_ns) for p in files}
    old = pd.read_parquet(workdir / OUT / "table1/all_cells.parquet")
    exp_old = load_experiment("harrington2003/table1", "smoke", config_dir=str(workdir / "config"))
    text = cfg.read_text()
    assert text.count(grid) == 1, grid
    cfg.write_text(text.replace(grid, grid.replace("]}", f", {value}]}}")))

    dry = smoke(workdir, "-n")
    assert planned(dry) == {"summarise_harrington2003": 1, "report": 1, "all": 1}, dry[-3000:]
    job = dry.split("rule summarise_harrington2003:")[1].split("\n\n")[0]
    outputs = re.search(r"output: (.*)", job).group(1)
    assert "harrington2003/table1/all_cells.parquet" in outputs and "harrington2003/table1.json" in outputs
    assert "fig2/all_cells.parquet" not in outputs  # fig2's cells are current: not this job's
    assert "table2_eachmovie" not in outputs  # its not-run record is current

    smoke(workdir)
    exp_new = load_experiment("harrington2003/table1", "smoke", config_dir=str(workdir / "config"))
    added = sorted({c.id for c in exp_new.all_cells} - {c.id for c in exp_old.all_cells})
    assert added and all(marker in c for c in added), added
    log = (workdir / "runs/smoke/logs/harrington2003.summarise.log").read_text()
    n = len(exp_new.all_cells)
    head = f"harrington2003/table1 [smoke]: {n} cells in one job, {n - len(added)} of them unchanged"
    assert head in log, log[-3000:]
    computed = set(re.findall(r"harrington2003/table1 \[smoke\] (\S+): \d+/\d+ trials", log.split(head)[-1]))
    assert computed == set(added), computed
    new = pd.read_parquet(workdir / OUT / "table1/all_cells.parquet")
    kept = new[~new["cell"].isin(added)].reset_index(drop=True)
    pd.testing.assert_frame_equal(kept, old.reset_index(drop=True), check_exact=True)  # taken, not recomputed
    assert set(new["cell"]) == {c.id for c in exp_new.all_cells}
    assert sha(workdir / OUT / "table1.json") != before["table1.json"][0]  # its record again, with the new cells
    now = {p: (sha(workdir / OUT / p), (workdir / OUT / p).stat().st_mtime_ns) for p in files}
    assert now["fig2/all_cells.parquet"] == before["fig2/all_cells.parquet"]
    # fig2's record is written again only if table1's claim p-values (their Holm family) moved;
    # kept, its bytes are those of before (Snakemake touches every output of a job it ran)
    moved = canonical(claim_pvalues(exp_new, new)) != canonical(claim_pvalues(exp_old, old))
    assert ("harrington2003/fig2 [smoke]: record kept" in log.split(head)[-1]) == (not moved)
    if not moved:
        assert now["fig2.json"][0] == before["fig2.json"][0] and now["fig2.md"][0] == before["fig2.md"][0]
    assert planned(smoke(workdir, "-n")) == {}  # and then nothing again
    return moved


def test_one_more_tau_reruns_only_its_cells_and_record(workdir):
    """Issue 42's example: one more tau for OAP-BPM (its claims compare the taus: their p-values move)."""
    one_more_value(workdir, "  oap_bpm:\n    params: {N: 100}\n    grid: {tau: [0.3, 0.6, 0.9]}", 0.45, "tau0.45")


def test_one_more_wh_step_size_leaves_the_siblings_records(workdir):
    """One more step size for WH in table1: table1's claim p-values stay (the test checks it
    independently) and fig2's record is kept, not written again."""
    assert not one_more_value(workdir, "  widrow_hoff:\n    grid: {eta: [0.2, 0.1, 0.05, 0.01]}", 0.15, "eta0.15")
