"""Aligning file times with content dates nothing in the future, and a job that parses the
workflow again changes no file of the run.

Under a cluster executor (profiles/slurm) every job starts a Snakemake of its own in ``--mode
remote``, which parses the Snakefile again.  Aligning file times with content
(pipeline/freshness.py: current outputs re-dated, stale fingerprints removed) is the planning
run's work, done once before any job.  It used to date the current outputs one to three seconds
after now, and each SLURM job did it again: a figure job that finished within those seconds
failed, "Output ... fig6.png has older modification time ... than input ... fig6.json" (CI, ``make
test-engines``, the SLURM test; locally, with the figure deleted, the margin was 0.17 s).  Done in
a job it could also remove the fingerprint file of a cell whose job was writing its files.

The committed paper-scale cells of Crammer & Singer's Fig. 6 (generated data: no data set needed)
in a scratch folder, one of them made stale: a job's parse (``--mode remote``) leaves every file as
it was; the planning run's parse aligns them (the contrast that shows the check can fail)."""
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from conftest import ROOT, committed_catalog

SNAKEMAKE = Path(sys.executable).parent / "snakemake"
ARTEFACT = "results/crammer_singer2005/fig6"
FIGURE = "figures/crammer_singer2005/fig6"
LONG_AGO = 1577836800.0  # 2020-01-01


def _scratch(tmp_path: Path) -> Path:
    """The committed cells, record and figure of the artefact, and every experiment's resolved
    config as the planning run wrote it (a parse rewrites one only when it changed), dated long ago."""
    root = tmp_path / "run"
    (root / "results/crammer_singer2005").mkdir(parents=True)
    shutil.copytree(ROOT / ARTEFACT, root / ARTEFACT)
    for p in [ROOT / f"{ARTEFACT}{s}" for s in (".json", ".csv", ".md")] + sorted(ROOT.glob(f"{FIGURE}.*")) \
            + sorted((ROOT / "results").glob("*/*.config.yaml")):
        (root / p.relative_to(ROOT)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(p, root / p.relative_to(ROOT))
    for p in root.rglob("*"):
        os.utime(p, (LONG_AGO, LONG_AGO))
    return root


def test_current_outputs_are_dated_at_the_comparison_none_in_the_future(tmp_path):
    from rankrepro.pipeline.freshness import sync

    root = _scratch(tmp_path)
    exp = committed_catalog("paper")["crammer_singer2005/fig6"]
    before = time.time()
    counts = sync({exp.name: exp}, {exp.name: None}, root=root)
    after = time.time()
    assert counts == {"current": len(exp.all_cells), "stale": 0}
    aligned = [f"{ARTEFACT}/cells/{c.id}.{k}" for c in exp.all_cells for k in ("parquet", "fingerprint")] \
        + [f"{ARTEFACT}.{k}" for k in ("json", "csv", "md")] + [f"{FIGURE}.{k}" for k in ("png", "pdf")]
    dated = {p: (root / p).stat().st_mtime for p in aligned}
    # one time for all (equal is current to Snakemake), taken during the call: none after it
    assert len(set(dated.values())) == 1 and before <= next(iter(dated.values())) <= after, dated


def _state(root: Path) -> dict[str, tuple[float, bytes]]:
    return {str(p.relative_to(root)): (p.stat().st_mtime, p.read_bytes()) for p in sorted(root.rglob("*"))
            if p.is_file() and ".snakemake" not in p.parts}


def _parse(root: Path, *mode: str) -> None:
    r = subprocess.run([str(SNAKEMAKE), "-s", str(ROOT / "Snakefile"), "--directory", str(root), "--cores", "1",
                        *mode, "--dry-run", f"{ARTEFACT}.json"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]


def test_a_jobs_parse_of_the_workflow_changes_no_file_the_planning_run_aligns_them(tmp_path):
    root = _scratch(tmp_path)
    cells = root / ARTEFACT / "cells"
    fingerprints = sorted(cells.glob("*.fingerprint"))
    assert len(fingerprints) >= 2
    stale = fingerprints[0]
    stale.write_text(stale.read_text().replace('"fingerprint": "', '"fingerprint": "0'))
    os.utime(stale, (LONG_AGO, LONG_AGO))
    before = _state(root)

    _parse(root, "--mode", "remote")
    assert _state(root) == before

    _parse(root)
    after = _state(root)
    # a stale cell keeps its fingerprint file in a dry run (a real run removes it) and is marked to rerun
    from rankrepro.pipeline.freshness import stale_mark

    assert after[str(stale.relative_to(root))][1] == before[str(stale.relative_to(root))][1]
    assert (root / stale_mark("crammer_singer2005/fig6", stale.stem)).is_file()
    current = [k for k in before if k.startswith(f"{ARTEFACT}/cells/") and Path(k).stem != stale.stem]
    assert current and all(after[k][0] > LONG_AGO for k in current)  # current cells dated after their inputs
