"""An absent data set never overwrites a reproduced artefact: in a scratch copy of the
workflow at paper scale with the committed records and figure but without any data (no
mirror, no download), a run plans no aggregate or figure job for them, leaves every committed
file byte-identical and says why in its log and in the report."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import scratch_workflow

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
# a reproduced record whose data (cystic fibrosis) are absent, and a committed not-run record
KEPT = ["results/harrington2003/table2_cystic_fibrosis.json", "results/harrington2003/table2_cystic_fibrosis.csv",
        "results/harrington2003/table2_cystic_fibrosis.md", "figures/harrington2003/fig3b.png",
        "figures/harrington2003/fig3b.pdf", "results/harrington2003/table2_ohsumed.json",
        "results/harrington2003/table2_ohsumed.csv", "results/harrington2003/table2_ohsumed.md"]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    w = tmp_path_factory.mktemp("nodata")
    scratch_workflow(w)
    (w / "config/experiment/harrington2003").mkdir(parents=True)
    for a in ("table2_cystic_fibrosis", "table2_ohsumed", "_table2_common"):
        if (ROOT / f"config/experiment/harrington2003/{a}.yaml").is_file():
            shutil.copy(ROOT / f"config/experiment/harrington2003/{a}.yaml", w / "config/experiment/harrington2003/")
    for rel in KEPT:
        (w / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, w / rel)
        # older than the workflow's scripts, as in a fresh clone where git wrote them first: what made
        # Snakemake plan them again ("Code has changed since last execution")
        os.utime(w / rel, (1_600_000_000, 1_600_000_000))
    # the reproduced record's cells, as committed beside it: the report checks them against the
    # hashes the record names (pipeline.integrity)
    shutil.copytree(ROOT / "results/harrington2003/table2_cystic_fibrosis/cells",
                    w / "results/harrington2003/table2_cystic_fibrosis/cells")
    return w


def snakemake(w, *args):
    env = {k: v for k, v in os.environ.items() if k != "RANKREPRO_DATA_MIRROR"}
    env["RANKREPRO_OFFLINE"] = "1"
    return subprocess.run([str(SNAKEMAKE), "--cores", "2", *args], cwd=w, env=env, capture_output=True, text=True,
                          timeout=600)


def test_no_aggregate_or_figure_is_planned(workdir):
    r = snakemake(workdir, "--dry-run")
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout + r.stderr
    assert "rule aggregate" not in out and "rule figure" not in out, out[-3000:]
    assert "harrington2003/table2_cystic_fibrosis: data set cystic-fibrosis is absent" in out
    assert "kept unchanged" in out
    # the committed outputs have no Snakemake metadata by design: no note that alarms about it
    assert "missing provenance/metadata" not in out


def test_a_run_keeps_the_committed_files_byte_identical(workdir):
    r = snakemake(workdir)
    assert r.returncode == 0, r.stderr[-3000:]
    # the report job ran (progress shown) without Snakemake's "Shell command: None" for a script rule
    assert "rule report" in r.stderr and "steps (100%) done" in r.stderr and "Shell command" not in r.stderr
    for rel in KEPT:
        assert (workdir / rel).read_bytes() == (ROOT / rel).read_bytes(), rel
    # the report made here shows the committed record and figure and says why it was not rerun
    html = (workdir / "results/report/index.html").read_text()
    assert "Data absent here" in html and "data set cystic-fibrosis is absent" in html
    assert 'id="harrington2003-table2_cystic_fibrosis"' in html and "data:image/png;base64" in html
    assert snakemake(workdir, "--dry-run").stdout.count("rule ") == 0  # and nothing is left to do
