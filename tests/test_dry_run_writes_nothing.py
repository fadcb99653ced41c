"""A run that only plans (`snakemake -n`, --report, --lint) writes nothing under results/ or
figures/ (issue 57, item 4): no resolved config rewritten, no fingerprint file removed, yet a
stale cell is still in the plan (through its mark under .snakemake/); and Snakemake's one
"Missing metadata" warning per committed file becomes one note."""
import hashlib
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from conftest import ROOT, scratch_workflow
from rankrepro.pipeline.invocation import MetadataNotes, planning_only

SNAKEMAKE = Path(sys.executable).parent / "snakemake"
NAME = "elsas2008/sec3_table"


@pytest.mark.parametrize("argv, said", [
    (["-n", "--cores", "2"], "dry run"), (["-np"], "dry run"), (["--cores", "2", "--dry-run"], "dry run"),
    (["--report", "r.html"], "--report"), (["--lint"], "--lint"), (["--cores", "2"], None),
    (["--cores", "2", "--forcerun", "aggregate"], None), (["-c", "2", "--config", "scale=smoke"], None),
])
def test_a_planning_run_is_told_from_snakemakes_command_line(argv, said):
    assert planning_only(argv) == said


def test_the_metadata_warnings_become_one_note():
    f = MetadataNotes()
    rec = lambda m: logging.LogRecord("snakemake", logging.WARNING, "", 0, m, (), None)  # noqa: E731
    kept = [f.filter(r) or None for r in (rec(f"Missing metadata for file results/x{i}.json. Maybe ...") for i in range(50))]
    assert sum(k is not None for k in kept) == 1
    assert f.filter(rec("Building DAG of jobs...")) is True


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for d in ("results", "figures") if (root / d).is_dir() for p in sorted((root / d).rglob("*")) if p.is_file()}


@pytest.fixture
def workflow(tmp_path):
    w = scratch_workflow(tmp_path)
    (w / "config/experiment/elsas2008").mkdir(parents=True)
    shutil.copy(ROOT / f"config/experiment/{NAME}.yaml", w / "config/experiment/elsas2008/")
    if (ROOT / f"config/diagnoses/{NAME}.yaml").is_file():
        (w / "config/diagnoses/elsas2008").mkdir(parents=True)
        shutil.copy(ROOT / f"config/diagnoses/{NAME}.yaml", w / "config/diagnoses/elsas2008/")
    for ext in (".json", ".csv", ".md", ".config.yaml"):
        if (ROOT / "results" / f"{NAME}{ext}").is_file():
            (w / "results/elsas2008").mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / "results" / f"{NAME}{ext}", w / "results" / f"{NAME}{ext}")
    shutil.copytree(ROOT / "results" / NAME, w / "results" / NAME)
    return w


def test_a_dry_run_at_paper_scale_writes_nothing_and_still_plans_the_stale_cell(workflow):
    """An edited config (the resolved config a real run rewrites) and an edited cell (whose
    fingerprint file a real run removes): the dry run leaves every byte under results/ as it
    was, and plans the edited cell, alone."""
    cfg = workflow / f"config/experiment/{NAME}.yaml"
    cfg.write_text(cfg.read_text() + "\n# an edit a resolved config does not show\n")
    text = cfg.read_text()
    assert "title:" in text
    cfg.write_text(text.replace("title: \"", "title: \"Edited: ", 1))
    cell = workflow / "results" / NAME / "cells" / "list-rankingRNRNRN.parquet"
    df = pd.read_parquet(cell)
    df.loc[df.index[0], "value"] += 1e-6
    df.to_parquet(cell)
    before = _tree(workflow)
    env = {k: v for k, v in os.environ.items() if k != "RANKREPRO_DATA_MIRROR"}
    env["RANKREPRO_OFFLINE"] = "1"
    r = subprocess.run([str(SNAKEMAKE), "--cores", "1", "-n", f"results/{NAME}.json", "--config", "cell_packs=false"],
                       cwd=workflow, env=env, capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert _tree(workflow) == before  # not a byte, not a file, under results/ or figures/
    assert out.count("rule run_cell:") == 1 and f"{NAME}/cells/list-rankingRNRNRN.parquet" in out, out[-3000:]
    assert "dry run: nothing written under results/ or figures/" in out and NAME in out
